"""A reply that cannot be saved (seed §5: "canonical persistence must not fail silently … the runner
reports settlement failure before `[DONE]` and releases liveness even when normal settlement
fails"; issue 30 item 6). The model streams its reply, then the store refuses the reply's write
(a full disk): the stream carries the failure in plain words as its last chunk before `[DONE]`, a
window following the turn sees the same, the session's `lastFailure` says it, the turn is no
longer running, and the learner's next message starts a turn (never 409)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.flows.conftest import Live, sse_chunks, turn_body

FULL = "No space left on device"


def refuse_writes_once_the_model_runs(live: Live, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """From the model's first call on, every `ChatStore.update` (the reply's write) raises a full
    disk; the learner's write-ahead, before the model, goes through."""
    armed = threading.Event()
    live.script.before = armed.set
    store = live.services.turns.chats
    real: Callable[..., Any] = store.update

    def update(chat_id: str, change: Callable[..., Any]) -> Any:
        if armed.is_set():
            raise OSError(28, FULL)
        return real(chat_id, change)

    monkeypatch.setattr(store, "update", update)
    return armed


def wait_released(live: Live, chat_id: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while live.services.registry.running(chat_id):
        assert time.monotonic() < deadline, "the turn's liveness was never released"
        time.sleep(0.02)


def test_a_failed_reply_write_is_reported_before_done_and_liveness_is_released(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_id = live.new_chat()
    refuse_writes_once_the_model_runs(live, monkeypatch)
    response = live.client.post("/api/chat", json=turn_body(chat_id))
    assert response.status_code == 200  # the reply had started streaming: the failure rides the stream
    chunks = sse_chunks(response.text)
    assert chunks[-1] == "[DONE]"
    error = chunks[-2]
    assert isinstance(error, dict) and error["type"] == "error", chunks[-3:]
    assert error["errorText"].startswith("the reply could not be saved") and FULL in error["errorText"]
    deltas = "".join(c.get("delta", "") for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")
    assert deltas == "Hello learner."  # what streamed came first
    assert [c for c in chunks if isinstance(c, dict) and c["type"] == "error"] == [error]  # said once

    wait_released(live, chat_id)
    seen = live.client.get(f"/api/chats/{chat_id}").json()
    assert seen["running"] is False
    assert seen["lastFailure"]["detail"] == error["errorText"]
    assert [m["role"] for m in live.record(chat_id)["messages"]] == ["user"]  # the input was saved

    monkeypatch.undo()  # the disk has room again
    again = live.client.post("/api/chat", json=turn_body(chat_id, "Go on", mid="u2"))
    assert again.status_code == 200, again.text  # not 409: nothing holds the session
    assert sse_chunks(again.text)[-1] == "[DONE]"
    assert [m["role"] for m in live.record(chat_id)["messages"]] == ["user", "user", "assistant"]
    assert live.client.get(f"/api/chats/{chat_id}").json()["lastFailure"] is None


def test_a_window_following_the_turn_sees_the_write_failure_then_done(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_id = live.new_chat()
    refuse_writes_once_the_model_runs(live, monkeypatch)
    gate = threading.Event()
    live.script.gate = gate
    result: dict[str, httpx.Response] = {}
    poster = threading.Thread(
        target=lambda: result.setdefault(
            "r", httpx.post(f"{live.url}/api/chat", json=turn_body(chat_id), timeout=30)
        )
    )
    poster.start()
    deadline = time.monotonic() + 20
    while not live.script.seen:  # the model started and waits at the gate
        assert time.monotonic() < deadline, "the model never started"
        time.sleep(0.01)
    with (
        httpx.Client(base_url=live.url, timeout=30) as client,
        client.stream("GET", f"/api/chats/{chat_id}/stream") as follower,
    ):
        assert follower.status_code == 200
        gate.set()
        followed = sse_chunks(follower.read().decode())
    poster.join(30)
    assert result["r"].status_code == 200
    assert followed[-1] == "[DONE]"
    last = followed[-2]
    assert isinstance(last, dict) and last["type"] == "error" and FULL in last["errorText"]
    assert sse_chunks(result["r"].text)[-2:] == [last, "[DONE]"]  # both windows read the same end
    wait_released(live, chat_id)
