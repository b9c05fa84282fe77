"""Deleting a lesson says that what it taught stays in the graph and offers, as one explicit
choice, to remove it too (issue 29, item 4), in real Chromium against `python -m server`.

Two lessons are taught and read into the graph (`POST /api/chats/{id}/graph`) by one scripted
OpenAI-compatible stub: the teacher says three sentences on the lesson's subject, the extractor
(tests/scripts/library.py) names a proposition per line. Deleting the first as offered keeps its
propositions; deleting the second with "Also remove" ticked takes its propositions out, and the
first lesson's stay.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, learner_turn, server_on_stub
from tests.scripts.classroom import ASSESSMENT
from tests.scripts.library import graph_reply
from tests.stub_openai import Reply, last_user_text

pytestmark = pytest.mark.e2e

CONFIRMED = {"confirmed": True}
"""The removal's body: the learner ticked "Also remove what it taught from my graph"."""

TEACHING = {
    "heaps": [
        "A binary heap keeps the smallest key at its root",
        "Every parent in a heap is at most its children",
        "So the minimum of a heap is read in constant time",
    ],
    "tries": [
        "A trie stores words letter by letter along its edges",
        "Words sharing a prefix share the path from the root",
        "So a prefix lookup costs its length in steps",
    ],
}


def reply(body: dict[str, Any]) -> Reply:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "submit" in tools:  # the extractor or the auditor
        return graph_reply(body)
    if "probe_done" in tools:  # the prober hands over at once
        return Reply("", ("probe_done", ASSESSMENT, "call_probe_done"))
    subject = "tries" if "tries" in last_user_text(body) else "heaps"
    return Reply("\n".join(f"{line}." for line in TEACHING[subject]))


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, reply) as proc:
        yield proc


def taught_lesson(client: httpx.Client, subject: str) -> str:
    """A lesson on `subject`, one turn, read into the graph; returns its chat id."""
    made = client.post("/api/chats", json={"title": f"Lesson on {subject}"})
    assert made.status_code == 201, made.text
    chat_id: str = made.json()["id"]
    turn = client.post("/api/chat", json=learner_turn(chat_id, f"Teach me {subject}"))
    assert turn.status_code == 200, turn.text
    deadline = time.monotonic() + 60
    while client.get(f"/api/chats/{chat_id}").json().get("running") and time.monotonic() < deadline:
        time.sleep(0.2)
    flush = client.post(f"/api/chats/{chat_id}/graph", json={"trigger": "explicit"})
    assert flush.status_code < 300, flush.text
    while time.monotonic() < deadline:
        rows = [r for r in client.get("/api/activity").json()["rows"] if r["source"] == chat_id]
        assert not [r for r in rows if r["phase"] in ("failed", "aborted", "lost")], rows
        if rows and all(r["phase"] == "done" for r in rows):
            return chat_id
        time.sleep(0.2)
    raise AssertionError(f"the lesson on {subject} was not read into the graph")


def names_from(client: httpx.Client, chat_id: str) -> set[str]:
    nodes = client.get("/api/graph").json()["nodes"]
    return {n["name"] for n in nodes if n["kind"] == "proposition" and chat_id in n["sources"]}


def wait_names_gone(client: httpx.Client, chat_id: str) -> None:
    deadline = time.monotonic() + 30
    while names_from(client, chat_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert names_from(client, chat_id) == set()


def test_deleting_a_lesson_keeps_what_it_taught_unless_asked_to_remove_it(
    page: Page, server: ServerProcess
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        heaps = taught_lesson(client, "heaps")
        tries = taught_lesson(client, "tries")
        heap_names = names_from(client, heaps)
        trie_names = names_from(client, tries)
        assert heap_names == {f"{line}." for line in TEACHING["heaps"]}
        assert trie_names == {f"{line}." for line in TEACHING["tries"]}
        assert client.get(f"/api/graph/lessons/{heaps}").json() == {
            "sourceId": heaps,
            "propositions": 3,
            "reading": False,
        }

        page.goto(server.url + "/")
        sidebar = page.get_by_test_id("sidebar")

        # 1. the dialog says what stays; deleting as offered keeps the lesson's propositions
        sidebar.get_by_role("button", name="Delete “Lesson on heaps”").click()
        dialog = page.get_by_test_id("confirm-dialog")
        taught = dialog.get_by_test_id("lesson-taught")
        expect(taught).to_contain_text("What it taught stays in your graph: 3 propositions from this lesson.")
        forget = dialog.get_by_test_id("lesson-forget")
        expect(forget).not_to_be_checked()  # one explicit choice, off unless the learner ticks it
        dialog.get_by_test_id("confirm-delete").click()
        expect(dialog).to_have_count(0)
        expect(sidebar.get_by_role("button", name="Delete “Lesson on heaps”")).to_have_count(0)
        assert names_from(client, heaps) == heap_names

        # 2. ticking "Also remove" takes the lesson's propositions out of the graph, and only them
        sidebar.get_by_role("button", name="Delete “Lesson on tries”").click()
        dialog = page.get_by_test_id("confirm-dialog")
        expect(dialog.get_by_test_id("lesson-taught")).to_have_attribute("data-propositions", "3")
        dialog.get_by_test_id("lesson-forget").check()
        dialog.get_by_test_id("confirm-delete").click()
        expect(dialog).to_have_count(0)
        expect(sidebar.get_by_text("No lessons yet.")).to_be_visible()
        wait_names_gone(client, tries)
        assert names_from(client, heaps) == heap_names
        assert client.get(f"/api/graph/lessons/{tries}").json()["propositions"] == 0

        # a second removal finds nothing left; an unknown id is refused in plain words
        assert (
            client.post(f"/api/graph/lessons/{tries}/remove", json=CONFIRMED).json()["status"] == "unchanged"
        )
        unconfirmed = client.post(f"/api/graph/lessons/{tries}/remove", json={})
        assert unconfirmed.status_code == 400 and "confirmed" in unconfirmed.json()["detail"], (
            unconfirmed.text
        )
        nope = "/api/graph/lessons/c_nope"
        for unknown in (client.get(nope), client.post(f"{nope}/remove", json=CONFIRMED)):
            assert unknown.status_code == 404, unknown.text
            assert unknown.json()["detail"] == "no lesson 'c_nope' and nothing it taught in the graph"
