"""Pins of issue 10's model-call guarantees that the fault matrix does not reach on its own:

- a `Retry-After` is what the transport waits before its next attempt (a sleep recorder stands in
  for `asyncio.sleep`), a missing one falls back to the backoff, a too-long one is not waited for;
- a stream that closes without `finish` and without an error (whatever the engine) is saved cut
  short, with the server's own sentence, live and after a reload (`turn.EARLY_END`).

The closed-port turn ("could not connect …") is in `test_fault_matrix.py`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.agent.machine_room.guarded_transport import GuardedTransport, guarded_client
from server.core.contracts.models import ModelCallSettings
from server.services.classroom.turn_stream import EARLY_END
from tests.flows.conftest import Live, sse_chunks, turn_body
from tests.livehttp import serve
from tests.stub_faults import create_fault_stub

LIMITS = ModelCallSettings(connect_s=2, first_token_s=5, idle_s=2, retries=2, max_wait_s=10)


class SleepRecorder:
    """Records the waits asked for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.mark.parametrize(
    ("model", "status", "requests", "waits"),
    [
        pytest.param("429-once", 200, 2, [1.0], id="retry-after-1-is-waited"),
        pytest.param("429-long", 429, 1, [], id="retry-after-3600-is-not"),
    ],
)
async def test_a_retry_after_is_what_the_transport_waits(
    model: str, status: int, requests: int, waits: list[float]
) -> None:
    stub = create_fault_stub()
    sleep = SleepRecorder()
    body = {"model": model, "stream": False, "messages": [{"role": "user", "content": "hi"}]}
    with serve(stub) as url:
        async with guarded_client(LIMITS, GuardedTransport(LIMITS, sleep=sleep)) as client:
            started = time.monotonic()
            response = await client.post(f"{url}/v1/chat/completions", json=body)
            elapsed = time.monotonic() - started
    assert response.status_code == status
    assert stub.state.requests[model] == requests
    assert sleep.waits == waits, "the wait is the provider's Retry-After, through the injected sleep"
    assert elapsed < 1.0, "nothing slept for real: every wait went through the recorder"


async def test_a_retryable_failure_without_retry_after_backs_off() -> None:
    stub = create_fault_stub()
    sleep = SleepRecorder()
    body = {"model": "500-once", "stream": False, "messages": [{"role": "user", "content": "hi"}]}
    with serve(stub) as url:
        async with guarded_client(LIMITS, GuardedTransport(LIMITS, sleep=sleep)) as client:
            response = await client.post(f"{url}/v1/chat/completions", json=body)
    assert response.status_code == 200 and stub.state.requests["500-once"] == 2
    assert len(sleep.waits) == 1 and 0.5 <= sleep.waits[0] <= 0.625, sleep.waits


def test_a_stream_that_closes_without_finish_is_saved_cut_short(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn's own fallback: an engine stream that just ends (no `finish`, no `error`)."""
    turns = live.services.turns
    original = turns._role_run

    async def without_finish(*args: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        async for chunk in original(*args, **kwargs):
            if chunk.get("type") in ("finish", "finish-step"):
                return
            yield chunk

    monkeypatch.setattr(turns, "_role_run", without_finish)
    chat_id = live.client.post("/api/chats", json={}).json()["id"]
    response = live.client.post("/api/chat", json=turn_body(chat_id))
    assert response.status_code == 200, response.text
    chunks = sse_chunks(response.text)
    assert chunks[-1] == "[DONE]"
    errors = [c for c in chunks if isinstance(c, dict) and c["type"] == "error"]
    assert [e["errorText"] for e in errors] == [EARLY_END], "said live, once"
    reply = live.client.get(f"/api/chats/{chat_id}").json()["messages"][-1]
    assert reply["role"] == "assistant"
    assert reply["metadata"]["interrupted"] is True and reply["metadata"]["error"] == EARLY_END
    assert "".join(p.get("text", "") for p in reply["parts"] if p["type"] == "text") == "Hello learner."
