"""Issue 26, item 6 (a burst stalls the server): a lesson turn's canonical writes (the write-ahead
of the learner's message and the save of the reply, each with its fdatasync) run in a worker
thread, not on the event loop. Twenty turns starting at once made twenty fdatasyncs in a row on
the loop; `/api/health` waited behind them (docs/benchmarks.md, the burst).

Here the record store's save is held open (a write that does not return until released) while a
turn runs: health must still answer, and once released the turn ends with both messages saved.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from server.core.contracts.chat import ChatRecord
from tests.flows.conftest import Live, sse_chunks, turn_body


@pytest.mark.parametrize("held", ["write-ahead", "reply"])
def test_health_answers_while_a_turns_write_is_held(live: Live, held: str) -> None:
    chat_id = live.new_chat()
    store: Any = live.services.turns.chats
    save = store.save
    entered, release = threading.Event(), threading.Event()

    def held_save(record: ChatRecord) -> None:
        roles = [m.get("role") for m in record.messages]
        which = "reply" if "assistant" in roles else "write-ahead" if roles else None
        if record.id == chat_id and which == held and not entered.is_set():
            entered.set()
            release.wait(60)
        save(record)

    store.save = held_save  # the instance's save: `update` calls it under the store's lock
    answers: list[httpx.Response] = []

    def turn() -> None:
        with httpx.Client(base_url=live.url, timeout=120) as client:
            answers.append(client.post("/api/chat", json=turn_body(chat_id)))

    runner = threading.Thread(target=turn)
    runner.start()
    try:
        assert entered.wait(60), f"the turn's {held} save never began"
        health = live.client.get("/api/health", timeout=10)  # a write on the loop would hold this
        assert health.status_code == 200 and health.json()["status"] == "ok"
    finally:
        release.set()
        runner.join(120)
    assert answers and answers[0].status_code == 200, answers
    assert sse_chunks(answers[0].text)[-1] == "[DONE]"
    record = live.record(chat_id)
    assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
