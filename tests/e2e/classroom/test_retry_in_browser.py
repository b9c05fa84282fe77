"""No stranded lesson, in real Chromium (issue 12, items 2-3, done-when): the model fails with 503
right after the learner answered the prober's quiz; the banner offers Retry, which continues the
lesson from the saved answer (once); a reload while the failure is the latest news shows the
banner again from the server's memory-only notice, and nothing is re-sent on its own. A second
window attached to the failing turn (the model is slow to fail) shows the same error banner."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.classroom.test_classroom_in_browser import answer_quiz
from tests.livehttp import serve
from tests.procs import ServerProcess, server_on_stub, start_on_stub
from tests.scripts.classroom import lesson_reply
from tests.stub_openai import Reply, create_stub

pytestmark = pytest.mark.e2e

FAILING = {"on": False}
SLOW_FAILURE_S = 2.5
"""How long the failing model takes to refuse: long enough for a second window to attach."""


def reply(body: dict[str, Any]) -> Reply | str:
    if FAILING["on"]:
        time.sleep(SLOW_FAILURE_S)  # blocks only the stub, which serves this one request
        return Reply(status=503)
    return lesson_reply(body)


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    FAILING["on"] = False
    with server_on_stub(data_dir, reply, delay_s=0.01) as proc:
        yield proc


def test_a_503_after_an_answer_leaves_a_retry_that_continues_the_lesson(
    page: Page, browser: Browser, server: ServerProcess
) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    chat_id = page.url.rsplit("/", 1)[1]
    page.get_by_test_id("composer-input").fill("Teach me derivatives")
    page.get_by_test_id("composer-send").click()
    expect(page.get_by_test_id("question-dock")).to_contain_text("What is", timeout=20_000)
    other = browser.new_context().new_page()  # a second window on the same lesson
    other.goto(f"{server.url}/chat/{chat_id}")
    expect(other.get_by_test_id("question-dock")).to_contain_text("What is", timeout=10_000)

    FAILING["on"] = True
    answer_quiz(page, 1)
    # the second window sees the turn start and attaches to it before the model fails
    expect(other.get_by_test_id("chat-status")).to_have_text(
        re.compile("submitted|streaming"), timeout=SLOW_FAILURE_S * 1000
    )
    banner = page.get_by_test_id("error-banner")
    expect(banner).to_be_visible(timeout=30_000)
    record = httpx.get(f"{server.url}/api/chats/{chat_id}").json()
    assert record["lastFailure"] and not record["running"]
    expect(other.get_by_test_id("error-banner")).to_contain_text(
        record["lastFailure"]["detail"], timeout=10_000
    )
    other.context.close()

    # a reload: the banner comes back from the server's notice; nothing is sent on its own
    page.reload()
    expect(banner).to_be_visible(timeout=10_000)
    expect(page.get_by_test_id("error-retry")).to_be_visible()
    before = httpx.get(f"{server.url}/api/chats/{chat_id}").json()["messages"]

    FAILING["on"] = False
    assert httpx.get(f"{server.url}/api/chats/{chat_id}").json()["messages"] == before
    page.get_by_test_id("error-retry").click()
    # the lesson goes on from the saved answer: the prober's goal question
    expect(page.get_by_test_id("question-dock")).to_contain_text("What do you want to learn?", timeout=20_000)
    expect(banner).to_have_count(0)
    record = httpx.get(f"{server.url}/api/chats/{chat_id}").json()
    assert record["lastFailure"] is None
    assert [m["role"] for m in record["messages"]] == ["user", "assistant"]  # continued in place


LONG = " ".join(f"word{i}" for i in range(400))


def long_reply(body: dict[str, Any]) -> Reply | str:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "probe_done" in tools:
        return Reply(LONG)
    return lesson_reply(body)


def test_a_stopped_reply_is_marked_cut_short_after_a_reload(page: Page, data_dir: Path) -> None:
    with serve(create_stub(long_reply, delay_s=0.02)) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            page.goto(server.url + "/")
            page.get_by_test_id("new-lesson").click()
            expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
            page.get_by_test_id("composer-input").fill("Teach me derivatives")
            page.get_by_test_id("composer-send").click()
            expect(page.get_by_test_id("message-assistant").last).to_contain_text("word20", timeout=20_000)
            page.get_by_test_id("composer-stop").click()
            expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
            page.reload()
            note = page.get_by_test_id("message-cut-short")
            expect(note).to_be_visible(timeout=10_000)
            expect(note).to_contain_text("cut short")
        finally:
            assert server.stop() == 0


def truncate(route: Any, keep: int = 3) -> None:
    """Forward the request, then hand the page only the first `keep` SSE events: a clean EOF
    without the `[DONE]` terminal, as a proxy or a dropped connection leaves it."""
    response = route.fetch()
    events = response.text().split("\n\n")
    route.fulfill(response=response, body="\n\n".join(events[:keep]) + "\n\n")


def test_a_stream_cut_without_its_terminal_is_reattached_once_then_reported(
    page: Page, data_dir: Path
) -> None:
    with serve(create_stub(long_reply, delay_s=0.0)) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            page.goto(server.url + "/")
            page.get_by_test_id("new-lesson").click()
            expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
            # 1. the turn's own stream ends early: one read-only reattachment (the turn has ended,
            #    so the reply comes from the record) and the whole reply is shown, no error
            page.route("**/api/chat", lambda route: truncate(route))
            page.get_by_test_id("composer-input").fill("Teach me derivatives")
            page.get_by_test_id("composer-send").click()
            expect(page.get_by_test_id("message-assistant").last).to_contain_text("word399", timeout=20_000)
            expect(page.get_by_test_id("error-banner")).to_have_count(0)
            # 2. the reattachment fails too: the error banner with Retry, not a reply "done"
            page.route("**/api/chats/*/stream", lambda route: route.fulfill(status=500, body="{}"))
            page.get_by_test_id("composer-input").fill("Again")
            page.get_by_test_id("composer-send").click()
            expect(page.get_by_test_id("error-banner")).to_contain_text(
                "connection to the server was lost", timeout=20_000
            )
            expect(page.get_by_test_id("error-retry")).to_be_visible()
            page.unroute("**/api/chat")
            page.unroute("**/api/chats/*/stream")
            page.get_by_test_id("error-retry").click()  # re-reads the lesson: the reply was saved
            expect(page.get_by_test_id("error-banner")).to_have_count(0, timeout=10_000)
            expect(page.get_by_test_id("message-assistant")).to_have_count(2)
            expect(page.get_by_test_id("message-user")).to_have_count(2)  # nothing was re-sent
        finally:
            assert server.stop() == 0


def test_a_failed_check_brings_the_question_back_and_a_re_check_never_resends(
    page: Page, browser: Browser, server: ServerProcess
) -> None:
    """Seed §5, recovery never blindly resends: /api/chat is unreachable when the learner checks
    an answer, so the question comes back with the same choice (its draft survived the dock's
    optimistic unmount). Meanwhile another window answers it; this window heard nothing (its events
    channel is cut), and checking again reconciles against the record: no second POST."""
    page.route("**/api/events", lambda route: route.abort())  # this window stays stale
    page.goto(server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    chat_id = page.url.rsplit("/", 1)[1]
    page.get_by_test_id("composer-input").fill("Teach me derivatives")
    page.get_by_test_id("composer-send").click()
    dock = page.get_by_test_id("question-dock")
    expect(dock).to_contain_text("What is", timeout=20_000)
    before = httpx.get(f"{server.url}/api/chats/{chat_id}").json()["messages"]

    page.route("**/api/chat", lambda route: route.abort())
    answer_quiz(page, 1)
    expect(page.get_by_test_id("error-banner")).to_be_visible(timeout=20_000)
    chosen = dock.locator('[data-testid="dock-option"][data-authored-index="1"]')
    expect(chosen).to_have_attribute("aria-checked", "true", timeout=10_000)  # back, as it was
    assert httpx.get(f"{server.url}/api/chats/{chat_id}").json()["messages"] == before  # not taken
    page.unroute("**/api/chat")

    other = browser.new_context().new_page()
    other.goto(f"{server.url}/chat/{chat_id}")
    answer_quiz(other, 1)
    expect(other.get_by_test_id("question-dock")).to_contain_text(
        "What do you want to learn?", timeout=20_000
    )
    other.context.close()
    taken = httpx.get(f"{server.url}/api/chats/{chat_id}").json()
    assert not taken["running"]

    posts: list[str] = []
    page.on(
        "request",
        lambda r: posts.append(r.url) if r.method == "POST" and r.url.endswith("/api/chat") else None,
    )
    expect(chosen).to_have_attribute("aria-checked", "true")  # still stale: the old question
    dock.get_by_test_id("dock-submit").click()
    expect(dock).to_contain_text("What do you want to learn?", timeout=10_000)
    assert posts == []  # reconciled against the record: the answer was already in
    assert httpx.get(f"{server.url}/api/chats/{chat_id}").json()["messages"] == taken["messages"]
