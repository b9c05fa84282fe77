"""Search in real Chromium (issue 31 item 5, decision 0044): typing in the sidebar's box shows
ranked results with the matched words marked; a message result opens its lesson at the message
(drawn even when it is far above the transcript's window, scrolled into view and highlighted), a
proposition result opens home focused on it, a problem result opens its set at the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.core.contracts.practice import PracticeParams, Problem, ProblemSet
from tests.bench.library.bench_graph_read import write_graph
from tests.e2e.machine_room.test_backup_in_browser import STRONG
from tests.procs import start_server

pytestmark = pytest.mark.e2e


def long_lesson(data: Path, chat_id: str, title: str, size: int, found_at: int) -> None:
    """A lesson of `size` messages; message `m{found_at}` (a learner's) names quaternions."""
    messages = []
    for i in range(size):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Message {i} about rotations in the plane."
        if i == found_at:
            text = "How do quaternions compose rotations in space?"
        messages.append({"id": f"m{i}", "role": role, "parts": [{"type": "text", "text": text}]})
    record = {
        "id": chat_id,
        "title": title,
        "titleBy": "learner",
        "createdAt": "2026-12-01T00:00:00.000Z",
        "updatedAt": "2026-12-01T00:00:00.000Z",
        "model": STRONG,
        "messages": messages,
    }
    (data / "chats").mkdir(parents=True, exist_ok=True)
    (data / "chats" / f"{chat_id}.json").write_text(json.dumps(record))


def test_type_see_ranked_results_and_open_each_where_it_matched(page: Page, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"models": {"strong": STRONG}}))
    long_lesson(data, "c_rot", "Rotations", 600, 40)
    long_lesson(data, "c_quat", "Quaternions", 2, -1)
    write_graph(data / "graph", 60)
    (data / "practice").mkdir()
    problem_set = ProblemSet(
        id="ps_00000001",
        title="Algebra drills",
        created_at="2026-12-01T00:00:00Z",
        updated_at="2026-12-01T00:00:00Z",
        status="ready",
        params=PracticeParams(),
        node_ids=["n_0000000000000001"],
        propositions=[],
        chains=[],
        problems=[
            Problem(
                id=f"pb_{k}",
                index=k,
                chain_ids=[],
                title=f"Drill {k}",
                statement=f"Compute item {k}.",
                status="ready",
            )
            for k in range(12)
        ]
        + [
            Problem(
                id="pb_q",
                index=12,
                chain_ids=[],
                title="Unit quaternions",
                statement="Show |q|=1.",
                status="ready",
            )
        ],
    )
    (data / "practice" / "ps_00000001.json").write_text(problem_set.model_dump_json(by_alias=True))
    server = start_server(data)
    try:
        page.goto(f"{server.url}/settings")
        box = page.get_by_test_id("search-input")
        box.fill("quatern")
        results = page.get_by_test_id("search-result")
        expect(results).to_have_count(3)
        # ranked: the lesson whose title matches first, the problem's title next, the message last
        expect(results.nth(0)).to_have_attribute("data-kind", "lesson")
        expect(results.nth(0)).to_contain_text("Quaternions")
        kinds = [results.nth(i).get_attribute("data-kind") or "" for i in range(3)]
        assert sorted(kinds) == ["lesson", "message", "problem"]
        message = page.locator('[data-testid="search-result"][data-kind="message"]')
        expect(message.locator("mark")).to_have_text("quaternions")
        expect(message).to_contain_text("Rotations")

        # a message far above the window of a 600-message lesson: drawn, in view, highlighted
        message.click()
        expect(page).to_have_url(f"{server.url}/chat/c_rot?m=m40")
        found = page.locator('[data-message-id="m40"]')
        expect(found).to_have_attribute("data-found", "true")
        expect(found).to_be_in_viewport()
        expect(box).to_have_value("")

        # syntax is text: quotes and operators find nothing and break nothing
        box.fill('"quaternions" AND NEAR*(')
        expect(page.get_by_test_id("search-results")).to_contain_text("Nothing matches")

        # a proposition: home focused on it (its card open)
        box.fill("proposition 17")
        hit = page.locator('[data-testid="search-result"][data-kind="proposition"]').first
        expect(hit).to_contain_text("Proposition 17")
        box.press("Enter")
        expect(page).to_have_url(f"{server.url}/?node=n_0000000000000011")
        expect(page.get_by_test_id("node-card")).to_have_attribute("data-node-id", "n_0000000000000011")

        # a problem: its set at the problem, keyboard only
        box.fill("unit quatern")
        expect(page.get_by_test_id("search-result")).to_have_count(1)
        box.press("ArrowDown")
        box.press("Enter")
        expect(page).to_have_url(f"{server.url}/practice/ps_00000001?problem=pb_q")
        problem = page.locator('[data-problem-id="pb_q"]')
        expect(problem).to_have_attribute("data-found", "true")
        expect(problem).to_be_in_viewport()
    finally:
        server.stop()
