"""The Classroom in real Chromium against `python -m server` and a scripted OpenAI-compatible model
(issue 3, done-when): probe quiz -> goal question -> probe_done -> plan_init (the plan panel shows
statuses) -> a teaching quiz answered; a reload mid-question restores the dock; two tabs racing a
turn produce one turn each and lose no message."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.core.classroom.questions import display_order
from server.store.classroom.chats import read_record_data
from tests.livehttp import serve
from tests.procs import ServerProcess, server_on_stub, start_on_stub
from tests.scripts.classroom import lesson_reply
from tests.stub_openai import create_stub, default_reply

pytestmark = pytest.mark.e2e


@pytest.fixture
def lesson_server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, lesson_reply, delay_s=0.02) as server:
        yield server


def shown_order(page: Page) -> list[int]:
    options = page.get_by_test_id("question-dock").get_by_test_id("dock-option")
    return [int(options.nth(i).get_attribute("data-authored-index") or -1) for i in range(options.count())]


def answer_quiz(page: Page, authored_index: int) -> None:
    dock = page.get_by_test_id("question-dock")
    dock.locator(f'[data-testid="dock-option"][data-authored-index="{authored_index}"]').click()
    dock.get_by_test_id("dock-submit").click()


def test_a_scripted_lesson_end_to_end(page: Page, lesson_server: ServerProcess) -> None:
    page.goto(lesson_server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    page.get_by_test_id("composer-input").fill("Teach me derivatives")
    page.get_by_test_id("composer-send").click()

    # the prober's quiz, options in the seeded order
    dock = page.get_by_test_id("question-dock")
    expect(dock).to_contain_text("What is")
    expect(page.get_by_test_id("phase-indicator")).to_have_attribute("data-phase", "probe")
    assert shown_order(page) == display_order("call_probe_quiz", 3)
    answer_quiz(page, 1)
    expect(page.get_by_test_id("dock-verdict").first).to_be_visible()

    # the goal question
    expect(dock).to_contain_text("What do you want to learn?", timeout=20_000)
    # a suggested answer is picked, not sent: like a quiz, the learner sends it (issue 18)
    suggestion = dock.locator('[data-testid="dock-option"][data-authored-index="0"]')
    suggestion.click()
    expect(suggestion).to_have_attribute("aria-checked", "true")
    page.wait_for_timeout(300)
    expect(dock).to_contain_text("What do you want to learn?")
    expect(dock.get_by_test_id("dock-send-answer")).to_be_enabled()
    # writing an answer of one's own replaces the pick
    dock.get_by_test_id("dock-answer-input").fill("Derivatives, for my exam")
    expect(suggestion).to_have_attribute("aria-checked", "false")
    dock.get_by_test_id("dock-send-answer").click()

    # probe_done -> the teacher's plan with statuses, and a tagged teaching quiz
    expect(page.get_by_test_id("phase-indicator")).to_have_attribute("data-phase", "teach", timeout=20_000)
    nodes = page.get_by_test_id("plan-node")
    expect(nodes).to_have_count(3)
    expect(page.locator('[data-testid="plan-node"][data-node-id="deriv"]')).to_have_attribute(
        "data-status", "current"
    )
    expect(page.locator('[data-testid="plan-node"][data-node-id="limits"]')).to_have_attribute(
        "data-status", "upcoming"
    )
    expect(dock).to_contain_text("The derivative of", timeout=20_000)
    before = shown_order(page)
    assert before == display_order("call_teach_quiz", 3)

    # reload mid-question: the dock is back, same order
    page.reload()
    expect(page.get_by_test_id("question-dock")).to_contain_text("The derivative of")
    assert shown_order(page) == before
    expect(page.get_by_test_id("plan-panel")).to_contain_text("Derivative")

    # answer it: the teacher goes on, the question is gone
    answer_quiz(page, 1)
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("Well done", timeout=20_000)
    expect(page.get_by_test_id("question-dock")).to_have_count(0)
    chat_id = page.url.rsplit("/", 1)[1]
    record = read_record_data(lesson_server.data_dir / "chats", chat_id) or {}
    quizzes = [p for m in record["messages"] for p in m["parts"] if p.get("type") == "tool-quiz"]
    assert [q["output"]["correct"] for q in quizzes] == [True, True]
    expect(page.get_by_test_id("usage-total")).to_be_visible()


def test_two_tabs_racing_make_one_turn_each_and_lose_nothing(browser, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    with serve(create_stub(default_reply, delay_s=0.15)) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            context = browser.new_context()
            first = context.new_page()
            first.goto(server.url + "/")
            first.get_by_test_id("new-lesson").click()
            expect(first).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
            second = context.new_page()
            second.goto(first.url)
            expect(second.get_by_test_id("composer-input")).to_be_visible()

            first.get_by_test_id("composer-input").fill("first question")
            second.get_by_test_id("composer-input").fill("second question")
            first.get_by_test_id("composer-send").click()
            second.get_by_test_id("composer-send").click()

            for page in (first, second):
                expect(page.get_by_test_id("message-user")).to_have_count(2, timeout=30_000)
                expect(page.get_by_test_id("message-assistant")).to_have_count(2, timeout=30_000)
                expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=30_000)
            chat_id = first.url.rsplit("/", 1)[1]
            record = read_record_data(data_dir / "chats", chat_id) or {}
            roles = [m["role"] for m in record["messages"]]
            texts = [m["parts"][0]["text"] for m in record["messages"] if m["role"] == "user"]
            assert roles == ["user", "assistant", "user", "assistant"]
            assert sorted(texts) == ["first question", "second question"]
            assert len({m["id"] for m in record["messages"]}) == 4
            context.close()
        finally:
            assert server.stop() == 0
