"""Practice in real Chromium (issue 13, done-when): a learner selects a chain in the chain table,
generates a problem set, answers a problem, sees the model solution at once and the score land.

One scripted OpenAI-compatible stub plays every role: the extractor and auditor
(tests/scripts/library.py), and the partitioner, generator and grader (tests/scripts/practice.py)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.practice import practice_reply
from tests.stub_openai import Reply

pytestmark = pytest.mark.e2e

NOTE = "# Binary heap\n# Heap order\n# Root is the minimum\n"


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, practice_reply) as proc:
        yield proc


def test_select_generate_answer_reveal_and_grade(page: Page, server: ServerProcess) -> None:
    files = [("files", ("heap.md", NOTE.encode(), "text/markdown"))]
    assert httpx.post(f"{server.url}/api/graph/import", files=files, timeout=30).status_code == 202
    page.goto(server.url + "/")
    expect(page.get_by_test_id("graph-counts")).to_contain_text("3 propositions", timeout=30_000)

    page.get_by_test_id("open-chain-table").click()
    table = page.get_by_test_id("chain-table")
    table.get_by_test_id("table-cluster").first.get_by_test_id("toggle-cluster").click()
    table.get_by_test_id("table-chain").first.get_by_test_id("select-chain").check()
    bar = page.get_by_test_id("selection-bar")
    expect(bar.get_by_test_id("selection-summary")).to_have_text("2 nodes → 1 chain")
    bar.get_by_test_id("selection-generate").click()
    dialog = page.get_by_test_id("create-dialog")
    expect(dialog).to_contain_text("Direct exercise")  # the default rung, named
    dialog.get_by_test_id("create-submit").click()

    expect(page).to_have_url(re.compile(r"/practice/ps_[0-9a-f]+$"), timeout=10_000)
    problem = page.get_by_test_id("problem").first
    expect(problem).to_have_attribute("data-status", "ready", timeout=30_000)
    expect(problem.get_by_test_id("problem-statement")).to_contain_text("Which key is at the root")
    problem.get_by_test_id("answer-input").fill("The key 1, because every parent is at most its children.")
    problem.get_by_test_id("answer-submit").click()
    expect(problem.get_by_test_id("solution")).to_contain_text("heap order", timeout=10_000)  # at once
    expect(problem.get_by_test_id("grade-score")).to_contain_text("7", timeout=30_000)  # lands live
    expect(problem.get_by_test_id("grade-comment")).to_contain_text("heap order")
    expect(problem.get_by_test_id("answer-submit")).to_be_disabled()  # one attempt
    expect(problem.get_by_test_id("answer-input")).not_to_be_editable()
    page.reload()  # the record holds it: answer, solution and grade come back
    expect(page.get_by_test_id("problem").first.get_by_test_id("grade-score")).to_contain_text("7")


def test_a_page_opened_mid_run_catches_up_when_the_events_channel_opens(page: Page, data_dir: Path) -> None:
    """A page whose first reads were served while a run went on, and whose events channel opened
    only after the run had ended (so no event of it reaches the page), shows the end all the same:
    the channel's open is a resync for every consumer. (CI saw the home page keep an empty graph,
    and the exam page keep "generating", 30 s after the data was ready: the resync was queued,
    then dropped as the consumers re-subscribed on the provider's `connected` flipping.)

    Deterministic: the browser's `GET /api/events` is held until the run has ended on disk, then
    let through; the scripted model's 1 s per call keeps the run going while the page loads (the
    test checks that the page's first read saw the run going)."""
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route("**/api/events", hold)

    def let_events_through() -> None:
        assert held, "the page opened its events channel"
        while held:
            held.pop().continue_()

    def wait_until(ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 30
        while not ready():
            assert time.monotonic() < deadline, f"{what} within 30 s"
            time.sleep(0.05)

    async def slow_reply(body: dict[str, Any]) -> Reply:
        await asyncio.sleep(1.0)
        return practice_reply(body)

    with server_on_stub(data_dir, slow_reply) as server:
        files = [("files", ("heap.md", NOTE.encode(), "text/markdown"))]
        assert httpx.post(f"{server.url}/api/graph/import", files=files, timeout=30).status_code == 202
        page.goto(server.url + "/")
        expect(page.get_by_test_id("graph-empty-running")).to_be_visible(timeout=10_000)  # read mid-run

        def imported() -> bool:
            rows = httpx.get(f"{server.url}/api/activity", timeout=10).json()["rows"]
            graph = httpx.get(f"{server.url}/api/graph", timeout=10).json()
            return len(graph["nodes"]) >= 3 and all(r["phase"] in ("done", "error", "aborted") for r in rows)

        wait_until(imported, "the import ends")
        let_events_through()
        expect(page.get_by_test_id("graph-counts")).to_contain_text("3 propositions", timeout=10_000)

        graph = httpx.get(f"{server.url}/api/graph", timeout=10).json()
        ids = [n["id"] for n in graph["nodes"] if not str(n["id"]).startswith("arg_")]
        created = httpx.post(f"{server.url}/api/practice/sets", json={"nodeIds": ids}, timeout=10)
        assert created.status_code == 202, created.text
        set_id = created.json()["id"]
        page.goto(f"{server.url}/practice/{set_id}")
        exam = page.get_by_test_id("exam-page")
        expect(exam).to_have_attribute("data-status", re.compile("partitioning|generating"), timeout=10_000)
        wait_until(
            lambda: (
                httpx.get(f"{server.url}/api/practice/sets/{set_id}", timeout=10).json()["status"] == "ready"
            ),
            "the set is written",
        )
        let_events_through()
        expect(exam).to_have_attribute("data-status", "ready", timeout=10_000)
        expect(page.get_by_test_id("problem").first).to_have_attribute("data-status", "ready")
