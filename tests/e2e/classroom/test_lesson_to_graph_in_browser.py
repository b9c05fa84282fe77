"""A short lesson reaches the knowledge graph from the browser (issue 11, item 4, done-when): far
below `graph.extractionChunkTokens`, nothing reads it on its own within the test; the session
menu's "Add to my graph now" does, the header's coverage ring shows it covered, and the home page
shows its propositions under the lesson's cluster.

One scripted OpenAI-compatible stub plays every role: the prober hands over at once, the teacher
says three short sentences, the extractor (tests/scripts/library.py) names a proposition per line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.classroom import ASSESSMENT
from tests.scripts.library import graph_reply
from tests.stub_openai import Reply

pytestmark = pytest.mark.e2e

TEACHING = [
    "A binary heap keeps the smallest key at its root",
    "Every parent in a heap is at most its children",
    "So the minimum of a heap is read in constant time",
]


def reply(body: dict[str, Any]) -> Reply:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "submit" in tools:  # the extractor or the auditor
        return graph_reply(body)
    if "probe_done" in tools:  # the prober hands over at once
        return Reply("", ("probe_done", ASSESSMENT, "call_probe_done"))
    return Reply("\n".join(f"{line}." for line in TEACHING))


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, reply) as proc:
        yield proc


def test_a_short_lesson_then_add_to_my_graph_now_puts_it_on_the_home_page(
    page: Page, server: ServerProcess
) -> None:
    page.goto(server.url + "/")
    expect(page.get_by_test_id("graph-empty")).to_be_visible()
    page.get_by_test_id("begin-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    chat_id = page.url.rsplit("/", 1)[1]
    page.get_by_test_id("composer-input").fill("Teach me heaps")
    page.get_by_test_id("composer-send").click()
    expect(page.get_by_test_id("message-assistant").last).to_contain_text(TEACHING[0], timeout=20_000)
    expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)

    # far below the budget: nothing runs, and the ring says the teaching is not in the graph yet
    # (the ring re-reads the coverage after the turn settles: wait for that read, not the first)
    ring = page.get_by_test_id("coverage-ring")
    expect(ring).to_have_attribute("data-uncovered", re.compile(r"^[1-9][0-9]*$"), timeout=10_000)
    expect(ring).to_have_attribute("data-covered", "0")
    uncovered = int(ring.get_attribute("data-uncovered") or 0)
    assert 0 < uncovered < 8192
    assert [r for r in httpx.get(server.url + "/api/activity").json()["rows"] if r["source"] == chat_id] == []

    page.get_by_test_id("session-menu").click()
    # in sentences, with the countdown the dock says at the same moment (one clock, one wording)
    words = page.get_by_test_id("coverage-words")
    expect(words).to_contain_text("not in your graph yet.")
    countdown = re.compile(r"read into your graph (in \d+ (s|min) unless you continue|now)")
    expect(words).to_contain_text(countdown)
    page.get_by_test_id("add-to-graph").click()
    expect(page.get_by_test_id("graph-notice")).to_contain_text("being read into your graph")
    # the ring follows the run to its end: all of the lesson's teaching is covered
    expect(ring).to_have_attribute("data-covered", str(uncovered), timeout=20_000)
    expect(ring).to_have_attribute("data-uncovered", "0")
    expect(ring).to_contain_text("graph: all")
    rows = [r for r in httpx.get(server.url + "/api/activity").json()["rows"] if r["source"] == chat_id]
    assert [r["phase"] for r in rows] == ["done"] and rows[0]["kind"] == "chat"

    # the home page: the lesson's propositions, in the lesson's cluster
    view = httpx.get(server.url + "/api/graph").json()
    props = [n for n in view["nodes"] if n["kind"] == "proposition"]
    assert {p["name"] for p in props} == {f"{line}." for line in TEACHING}
    assert [c["key"] for c in view["clusters"]] == [chat_id]
    page.goto(server.url + "/")
    page.wait_for_function(
        "n => !!window.__lhGraph && window.__lhGraph.stats().nodes === n && window.__lhGraph.stats().settled",
        arg=len(view["nodes"]),
        timeout=15_000,
    )
    expect(page.get_by_test_id("graph-empty")).to_have_count(0)
    expect(page.get_by_test_id("graph-counts")).to_contain_text("3 propositions · 2 chains · 1 lesson")


def test_leaving_a_short_lesson_puts_it_on_the_home_page(page: Page, server: ServerProcess) -> None:
    """Leaving the lesson (here the app's own link home, which unmounts the lesson's view; closing
    the tab goes through `pagehide`) asks for the `leave` flush: the teaching reaches the graph
    without the menu, far below the budget and long before the idle trigger."""
    page.goto(server.url + "/")
    page.get_by_test_id("begin-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    chat_id = page.url.rsplit("/", 1)[1]
    page.get_by_test_id("composer-input").fill("Teach me heaps")
    page.get_by_test_id("composer-send").click()
    expect(page.get_by_test_id("message-assistant").last).to_contain_text(TEACHING[0], timeout=20_000)
    expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
    ring = page.get_by_test_id("coverage-ring")
    expect(ring).to_have_attribute("data-uncovered", re.compile(r"^[1-9][0-9]*$"), timeout=10_000)
    assert [r for r in httpx.get(server.url + "/api/activity").json()["rows"] if r["source"] == chat_id] == []

    page.locator("a.brand").click()  # leave the lesson for the home page
    expect(page).to_have_url(server.url + "/")
    page.wait_for_function(
        "() => !!window.__lhGraph && window.__lhGraph.stats().nodes >= 3 && window.__lhGraph.stats().settled",
        timeout=20_000,
    )
    expect(page.get_by_test_id("graph-counts")).to_contain_text("3 propositions", timeout=10_000)
    view = httpx.get(server.url + "/api/graph").json()
    props = {n["name"] for n in view["nodes"] if n["kind"] == "proposition"}
    assert props == {f"{line}." for line in TEACHING}
    assert [c["key"] for c in view["clusters"]] == [chat_id]
    rows = [r for r in httpx.get(server.url + "/api/activity").json()["rows"] if r["source"] == chat_id]
    assert [r["phase"] for r in rows] == ["done"]
