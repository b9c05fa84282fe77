"""No stranded lesson, and late attachment sees settlement failure (issue 12, items 2 and 3).

The continuation after an answered question fails before its first content (a rate limit): the
answer is saved, the session remembers the failure in memory (`lastFailure`, never in the
record), and re-posting the answered message continues the lesson exactly once."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from server.core.transcript import awaits_continuation, pending_questions
from tests.flows.classroom.test_classroom import answer_body
from tests.flows.conftest import Live, sse_chunks, turn_body
from tests.scripts.classroom import lesson_model


class Flaky:
    """The scripted lesson, except that the next `fail` calls raise before any content."""

    def __init__(self) -> None:
        self.fail = 0

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if self.fail:
            self.fail -= 1
            raise RuntimeError("429 Too Many Requests: rate limited, retry in 20 s")
        async for item in lesson_model(messages, info):
            yield item


@pytest.fixture
def flaky(live: Live) -> tuple[Live, Flaky]:
    script = Flaky()
    live.script.delegate = script
    return live, script


def answered_then_failed(live: Live, script: Flaky) -> tuple[str, dict[str, Any]]:
    chat_id = live.new_chat()
    assert live.client.post("/api/chat", json=turn_body(chat_id, "Teach me calculus")).status_code == 200
    assert pending_questions(live.record(chat_id)["messages"])
    body = answer_body(live, chat_id, {"kind": "quiz", "chosen": 1, "correct": True})
    script.fail = 1
    response = live.client.post("/api/chat", json=body)
    assert response.status_code == 503, response.text
    return chat_id, body


def test_an_answer_whose_continuation_failed_is_continued_by_a_retry_exactly_once(flaky: Any) -> None:
    live, script = flaky
    chat_id, body = answered_then_failed(live, script)
    record = live.record(chat_id)
    assert awaits_continuation(record["messages"])  # the answer is saved; the teacher never went on
    assert "lastFailure" not in record  # memory only: nothing synthetic in the saved transcript
    seen = live.client.get(f"/api/chats/{chat_id}").json()
    assert "rate limited" in seen["lastFailure"]["detail"] and seen["lastFailure"]["at"]

    retry = live.client.post("/api/chat", json=body)  # Retry re-posts the answered message
    assert retry.status_code == 200, retry.text
    record = live.record(chat_id)
    assert not awaits_continuation(record["messages"])
    assert len(record["messages"]) == 2  # continued in place, nothing duplicated
    assert live.client.get(f"/api/chats/{chat_id}").json()["lastFailure"] is None  # cleared by the turn

    again = live.client.post("/api/chat", json=body)
    assert again.status_code == 409 and again.json()["error"] == "not_pending"
    assert live.record(chat_id) == record


def test_two_retries_at_once_continue_once(flaky: Any) -> None:
    live, script = flaky
    chat_id, body = answered_then_failed(live, script)
    results: list[int] = []

    def post() -> None:
        with httpx.Client(base_url=live.url, timeout=30) as client:
            results.append(client.post("/api/chat", json=body).status_code)

    threads = [threading.Thread(target=post) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert sorted(results) == [200, 409]
    record = live.record(chat_id)
    assert not awaits_continuation(record["messages"]) and len(record["messages"]) == 2


def test_deleting_the_session_or_its_next_turn_clears_the_notice(flaky: Any) -> None:
    live, script = flaky
    chat_id, _ = answered_then_failed(live, script)
    assert live.client.get(f"/api/chats/{chat_id}").json()["lastFailure"] is not None
    assert live.client.post("/api/chat", json=turn_body(chat_id, "Go on", mid="u7")).status_code == 200
    assert live.client.get(f"/api/chats/{chat_id}").json()["lastFailure"] is None
    other, _ = answered_then_failed(live, script)
    assert live.services.turns.failures.get(other)
    assert live.client.delete(f"/api/chats/{other}").status_code == 204
    assert other not in live.services.turns.failures


def test_a_window_following_a_turn_that_fails_before_content_sees_the_error_then_done(
    flaky: Any,
) -> None:
    """A second window attached to the turn (GET /stream) while the model is slow to start, then
    fails before any content: the follower gets the failure in plain words, then the terminal,
    never an empty 200 (seed §5, late attachment sees settlement failure)."""
    live, script = flaky
    chat_id = live.new_chat()
    gate = threading.Event()
    live.script.gate = gate
    script.fail = 1
    result: dict[str, httpx.Response] = {}
    thread = threading.Thread(
        target=lambda: result.setdefault(
            "r", httpx.post(f"{live.url}/api/chat", json=turn_body(chat_id), timeout=30)
        )
    )
    thread.start()
    for _ in range(500):
        if live.script.seen:  # the model started (and waits at the gate)
            break
        threading.Event().wait(0.01)
    with (
        httpx.Client(base_url=live.url, timeout=30) as client,
        client.stream("GET", f"/api/chats/{chat_id}/stream") as follower,
    ):
        assert follower.status_code == 200
        gate.set()
        text = follower.read().decode()
    thread.join(10)
    assert result["r"].status_code == 503
    detail = live.client.get(f"/api/chats/{chat_id}").json()["lastFailure"]["detail"]
    assert "rate limited" in detail
    assert sse_chunks(text) == [{"type": "error", "errorText": detail}, "[DONE]"]
    assert not live.services.registry.running(chat_id)
