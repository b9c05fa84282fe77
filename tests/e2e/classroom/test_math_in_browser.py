"""Math everywhere (issue 18, item 1): a scripted lesson with LaTeX in every field the learner
sees (their own message, the assessment, the plan's title and labels, the quiz's question,
options and explanation, the teaching, the graph's proposition names and statements) shows no
raw `$` on the lesson page or on the home page, and KaTeX typesets it. Some of the math is
unbalanced on purpose (a lone `$` before TeX): the display seam heals it.

One scripted OpenAI-compatible stub plays every role: the prober hands over at once, the teacher
authors a plan, names the node it teaches, asks one quiz, then teaches three lines that the
extractor (tests/scripts/library.py) turns into propositions and chains."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.classroom import LESSON_TITLE, NAMER_MARK
from tests.scripts.library import graph_reply
from tests.stub_openai import Reply

pytestmark = pytest.mark.e2e

LEARNER = "Teach me limits $\\lim_{h \\to 0}"  # unbalanced: healed at the display seam
ASSESSMENT = {
    "topic": "Limits $\\lim_{x \\to a} f(x)$",
    "goal": "Understand $\\frac{f(x+h)-f(x)}{h}$ as $h \\to 0$",
    "floor": "Algebra with $x^2$",
    "ceiling": "The limit $\\lim_{h \\to 0}",  # unbalanced
    "level": "beginner",
}
PLAN = {
    "title": "Limits $\\lim_{h \\to 0}$",
    "mermaid": "graph TD\n limits[Limits $\\lim_{h \\to 0}$] --> deriv[Derivative $f'(x)$]\n"
    " deriv --> power[Power rule $x^n$]",
}
QUIZ = {
    "question": "What is $\\lim_{x \\to 2} x^2$?",
    "options": ["$2$", "$4$", "$\\infty$"],
    "correct": 1,
    "explanation": "Substitute: $2^2 = 4$.",
    "node": "limits",
}
TEACHING = [
    "$F = ma$ holds for a point mass",
    "The derivative $f'(x)$ is $\\lim_{h \\to 0} \\frac{f(x+h)-f(x)}{h}$",
    "So $\\frac{d}{dx} x^2 = 2x$ by the power rule",
]


def _results(body: dict[str, Any]) -> list[str]:
    names: dict[str, str] = {}
    out: list[str] = []
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
        if message.get("role") == "tool":
            out.append(names.get(message.get("tool_call_id", ""), "?"))
    return out


def reply(body: dict[str, Any]) -> Reply:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    system = " ".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system")
    if NAMER_MARK in system:
        return Reply(LESSON_TITLE)
    if "submit" in tools:  # the extractor or the auditor
        return graph_reply(body)
    if "probe_done" in tools:  # the prober hands over at once
        return Reply("", ("probe_done", ASSESSMENT, "call_probe_done"))
    done = _results(body)
    if "plan_init" not in done:
        return Reply("", ("plan_init", PLAN, "call_plan"))
    if "plan_teach" not in done:
        return Reply("", ("plan_teach", {"node": "limits"}, "call_teach"))
    if "quiz" not in done:
        return Reply("A limit is where $f(x)$ heads as $x \\to a$.", ("quiz", QUIZ, "call_quiz"))
    return Reply("\n".join(f"{line}." for line in TEACHING))


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, reply) as proc:
        yield proc


def no_raw_dollar(page: Page, where: str) -> None:
    text = page.locator("body").inner_text()
    # KaTeX keeps the TeX source in hidden MathML annotations; inner_text reads only what shows
    assert "$" not in text, f"raw $ on {where}: " + " | ".join(
        line for line in text.splitlines() if "$" in line
    )


def test_math_in_every_field_shows_no_raw_dollar(page: Page, server: ServerProcess) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("begin-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    page.get_by_test_id("composer-input").fill(LEARNER)
    page.get_by_test_id("composer-send").click()

    dock = page.get_by_test_id("question-dock")
    expect(dock).to_be_visible(timeout=20_000)
    expect(page.get_by_test_id("assessment-card")).to_be_visible()
    expect(page.get_by_test_id("plan-note")).to_contain_text("Lesson plan written")
    # the plan panel follows plan_teach: the taught node is current before any quiz is answered
    expect(page.locator('[data-testid="plan-node"][data-node-id="limits"]')).to_have_attribute(
        "data-status", "current"
    )
    no_raw_dollar(page, "the lesson page with the quiz open")
    assert dock.locator(".katex").count() >= 4  # question + three options

    dock.locator('[data-testid="dock-option"][data-authored-index="1"]').click()
    dock.get_by_test_id("dock-submit").click()
    last = page.get_by_test_id("message-assistant").last
    expect(last).to_contain_text("holds for a point mass", timeout=20_000)
    expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
    no_raw_dollar(page, "the lesson page at the end")
    for testid in ("message-user", "assessment-card", "plan-note", "plan-panel", "quiz-card"):
        expect(page.get_by_test_id(testid).locator(".katex").first).to_be_visible()
    # the naming side channel titled the lesson (the goal is known after probe_done)
    expect(page.get_by_test_id("session-link").first).to_contain_text(LESSON_TITLE, timeout=10_000)

    # read it into the graph, then the home page: node card, chain table, delete dialog
    page.get_by_test_id("session-menu").click()
    page.get_by_test_id("add-to-graph").click()
    page.keyboard.press("Escape")
    deadline_view: dict[str, Any] = {}
    for _ in range(100):
        deadline_view = httpx.get(server.url + "/api/graph").json()
        if len([n for n in deadline_view["nodes"] if n["kind"] == "proposition"]) >= 3:
            break
        page.wait_for_timeout(200)
    props = [n for n in deadline_view["nodes"] if n["kind"] == "proposition"]
    assert len(props) == 3 and all("$" in p["name"] for p in props), json.dumps(props)

    page.goto(server.url + "/")
    page.wait_for_function(
        "n => !!window.__lhGraph && window.__lhGraph.stats().nodes === n && window.__lhGraph.stats().settled",
        arg=len(deadline_view["nodes"]),
        timeout=15_000,
    )
    no_raw_dollar(page, "the home page")
    page.evaluate("id => window.__lhGraph.focus(id)", props[0]["id"])
    page.wait_for_function("() => window.__lhGraph.stats().settled")
    pos = page.evaluate("id => window.__lhGraph.nodeScreenPosition(id)", props[0]["id"])
    page.mouse.click(pos["x"], pos["y"])
    card = page.get_by_test_id("node-card")
    expect(card).to_be_visible()
    expect(card.get_by_test_id("node-name").locator(".katex").first).to_be_visible()
    no_raw_dollar(page, "the home page with a node card")
    card.get_by_test_id("node-card-close").click()

    page.get_by_test_id("open-chain-table").click()
    table = page.get_by_test_id("chain-table")
    table.get_by_test_id("table-cluster").first.get_by_test_id("toggle-cluster").click()
    chain_row = table.get_by_test_id("table-chain").first
    chain_row.get_by_test_id("toggle-chain").click()
    expect(table.get_by_test_id("table-statement").first).to_be_visible()
    no_raw_dollar(page, "the chain table")
    chain_row.get_by_test_id("chain-delete").click()
    dialog = page.get_by_test_id("delete-dialog")
    expect(dialog).to_contain_text("Delete chain?")
    expect(dialog.get_by_test_id("delete-names").locator(".katex").first).to_be_visible()
    no_raw_dollar(page, "the delete dialog")
    dialog.get_by_test_id("delete-cancel").click()


def test_plain_words_around_the_lesson(page: Page, server: ServerProcess) -> None:
    """Issue 18, item 6: usage once per lesson in the header (each turn on demand), no grey 0 on an
    idle Activity badge, and a friendly page for a lesson that does not exist."""
    page.goto(server.url + "/")
    expect(page.get_by_test_id("activity-toggle")).to_be_visible()
    expect(page.get_by_test_id("activity-count")).to_have_count(0)  # nothing runs: no badge

    page.get_by_test_id("begin-lesson").click()
    page.get_by_test_id("composer-input").fill("Teach me limits")
    page.get_by_test_id("composer-send").click()
    expect(page.get_by_test_id("question-dock")).to_be_visible(timeout=20_000)
    expect(page.get_by_test_id("message-usage")).to_have_count(0)  # no token line under messages
    total = page.get_by_test_id("usage-total")
    expect(total).to_contain_text("tokens")
    expect(page.get_by_test_id("usage-turn").first).to_be_hidden()
    total.click()
    expect(page.get_by_test_id("usage-turn").first).to_contain_text("Turn 1")

    page.goto(server.url + "/chat/c_0000000000000000")
    expect(page.get_by_test_id("lesson-missing")).to_have_text(
        "This lesson doesn't exist (it may have been deleted). Pick one from the list, or start a new one."
    )
    expect(page.get_by_text("no session")).to_have_count(0)
    page.get_by_test_id("go-home").click()
    expect(page).to_have_url(server.url + "/")
