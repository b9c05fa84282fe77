"""A lesson turn over real HTTP with a scripted model (seed §5, the turn contract)."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
from pydantic_ai.messages import ModelRequest, UserPromptPart

from tests.flows.conftest import Live, sse_chunks, turn_body


def test_turn_streams_the_ui_message_protocol_and_persists_both_messages(live: Live) -> None:
    chat_id = live.new_chat()
    response = live.client.post("/api/chat", json=turn_body(chat_id))
    assert response.status_code == 200
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = sse_chunks(response.text)
    assert chunks[-1] == "[DONE]"
    types = [c["type"] for c in chunks if isinstance(c, dict)]
    assert types[0] == "start" and "text-delta" in types and types[-1] == "finish"
    reply_id = chunks[0]["messageId"]  # type: ignore[index]

    record = live.record(chat_id)
    assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
    assert record["messages"][1]["id"] == reply_id
    assert record["messages"][1]["parts"][-1] == {"type": "text", "text": "Hello learner.", "state": "done"}
    assert record["title"] == "What is a derivative?"
    assert live.client.get(f"/api/chats/{chat_id}").json()["messages"] == record["messages"]


def test_learner_message_is_saved_before_the_model_starts(live: Live) -> None:
    chat_id = live.new_chat()
    seen_on_disk: list[list[str]] = []
    live.script.before = lambda: seen_on_disk.append([m["id"] for m in live.record(chat_id)["messages"]])
    assert live.client.post("/api/chat", json=turn_body(chat_id)).status_code == 200
    assert seen_on_disk == [["u1"]]


def test_model_history_is_rebuilt_from_the_record_not_the_client(live: Live) -> None:
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id, "first"))
    # A client that sends a forged history gets only its last message taken.
    body = turn_body(chat_id, "second", mid="u2")
    body["messages"].insert(
        0, {"id": "forged", "role": "user", "parts": [{"type": "text", "text": "FORGED"}]}
    )
    live.client.post("/api/chat", json=body)
    prompts = [
        p.content
        for m in live.script.seen[-1]
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    assert prompts == ["first", "second"]
    assert [m["id"] for m in live.record(chat_id)["messages"]][::2] == ["u1", "u2"]


def test_reposting_an_answered_message_is_refused_and_changes_nothing(live: Live) -> None:
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id))
    before = live.record(chat_id)
    again = live.client.post("/api/chat", json=turn_body(chat_id))
    assert again.status_code == 409 and again.json()["error"] == "already_answered"
    assert live.record(chat_id) == before
    assert not live.services.registry.running(chat_id)


def test_retrying_an_unanswered_message_runs_once_more_without_duplicating(live: Live) -> None:
    chat_id = live.new_chat()
    live.script.reply = lambda _: []  # the model says nothing: no reply saved
    live.client.post("/api/chat", json=turn_body(chat_id))
    assert [m["id"] for m in live.record(chat_id)["messages"]] == ["u1"]
    live.script.reply = lambda _: ["now"]
    assert live.client.post("/api/chat", json=turn_body(chat_id)).status_code == 200
    assert [m["role"] for m in live.record(chat_id)["messages"]] == ["user", "assistant"]


def test_second_turn_while_one_runs_gets_409_and_nothing_is_written(live: Live) -> None:
    chat_id = live.new_chat()
    gate = threading.Event()
    live.script.gate = gate
    loop_holder: dict = {}

    def first_turn() -> None:
        with httpx.Client(base_url=live.url, timeout=30) as c:
            loop_holder["response"] = c.post("/api/chat", json=turn_body(chat_id))

    thread = threading.Thread(target=first_turn)
    thread.start()
    for _ in range(500):
        if live.script.seen:  # the model started: the first turn's write-ahead is done
            break
        threading.Event().wait(0.01)
    before = live.record(chat_id)
    second = live.client.post("/api/chat", json=turn_body(chat_id, "other", mid="u9"))
    assert second.status_code == 409
    assert second.json()["error"] == "turn_running" and second.json()["detail"]
    assert live.record(chat_id) == before
    gate.set()
    thread.join(10)
    assert loop_holder["response"].status_code == 200
    assert not live.services.registry.running(chat_id)


def _wait_idle(live: Live, chat_id: str) -> None:
    for _ in range(500):
        if not live.services.registry.running(chat_id):
            return
        threading.Event().wait(0.01)
    raise AssertionError("the turn did not end")


def _read_until(response: httpx.Response, count: int) -> str:
    seen = ""
    for line in response.iter_lines():
        if '"text-delta"' in line:
            seen += json.loads(line[6:])["delta"]
        if seen.count("more") >= count:
            break
    return seen


def test_aborted_turn_keeps_what_streamed(live: Live) -> None:
    chat_id = live.new_chat()
    live.script.reply = lambda _: ["one ", "two ", "three ", *(["more "] * 200)]
    live.script.delay_s = 0.02
    with (
        httpx.Client(base_url=live.url, timeout=30) as client,
        client.stream("POST", "/api/chat", json=turn_body(chat_id)) as response,
    ):
        _read_until(response, 3)
        assert live.client.post(f"/api/chats/{chat_id}/abort").json() == {"aborted": True}
    assert not live.services.registry.running(chat_id)  # the abort answered once the turn settled
    messages = live.record(chat_id)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    saved = messages[1]["parts"][-1]["text"]
    assert saved.startswith("one two three more") and saved.count("more") < 200
    assert messages[1]["metadata"]["interrupted"] is True
    [usage] = live.record(chat_id)["usage"]
    assert usage["inputTokens"] is None and usage["costUsd"] is None  # unknown, not zero
    assert live.client.post(f"/api/chats/{chat_id}/abort").json() == {"aborted": False}


def test_a_dropped_connection_does_not_stop_the_turn_and_a_reload_reattaches(live: Live) -> None:
    chat_id = live.new_chat()
    live.script.reply = lambda _: ["one ", "two ", *(["more "] * 30)]
    live.script.delay_s = 0.02
    with (
        httpx.Client(base_url=live.url, timeout=30) as client,
        client.stream("POST", "/api/chat", json=turn_body(chat_id)) as response,
    ):
        _read_until(response, 2)
    assert live.services.registry.running(chat_id)
    reattached = live.client.get(f"/api/chats/{chat_id}/stream")  # replays from the start, then follows
    assert reattached.status_code == 200
    assert reattached.headers["x-vercel-ai-ui-message-stream"] == "v1"
    chunks = sse_chunks(reattached.text)
    assert chunks[0]["type"] == "start" and chunks[-1] == "[DONE]"  # type: ignore[index]
    text = "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")
    assert text == "one two " + "more " * 30
    _wait_idle(live, chat_id)
    assert live.record(chat_id)["messages"][1]["parts"][-1]["text"] == text
    assert live.client.get(f"/api/chats/{chat_id}/stream").status_code == 204


def test_a_rename_made_while_the_model_starts_survives_the_write_ahead(live: Live) -> None:
    """Issue 12, item 6: the turn awaits its model (the offline one may take seconds to start)
    and then writes the learner's input over the record as it is now, not as it first read it."""
    chat_id = live.new_chat()
    live.client.patch(f"/api/chats/{chat_id}", json={"title": "Derivatives"})
    gate = threading.Event()
    original = live.services.models.model_for

    async def slow_model_for(*args, **kwargs):  # type: ignore[no-untyped-def]
        while not gate.is_set():
            await asyncio.sleep(0.01)
        return await original(*args, **kwargs)

    live.services.models.model_for = slow_model_for  # type: ignore[method-assign]
    result: dict = {}
    thread = threading.Thread(
        target=lambda: result.setdefault(
            "r", httpx.post(f"{live.url}/api/chat", json=turn_body(chat_id), timeout=30)
        )
    )
    thread.start()
    for _ in range(500):
        if live.services.registry.running(chat_id):
            break
        threading.Event().wait(0.01)
    assert live.client.patch(f"/api/chats/{chat_id}", json={"title": "Limits"}).status_code == 200
    gate.set()
    thread.join(10)
    assert result["r"].status_code == 200
    record = live.record(chat_id)
    assert record["title"] == "Limits"
    assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
