"""Practice in real Chromium (issue 13, done-when): a learner selects a chain in the chain table,
generates a problem set, answers a problem, sees the model solution at once and the score land.

One scripted OpenAI-compatible stub plays every role: the extractor and auditor
(tests/stub_graph.py), and the partitioner, generator and grader (tests/stub_practice.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.stub_practice import practice_reply

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
