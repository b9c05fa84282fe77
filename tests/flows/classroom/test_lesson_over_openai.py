"""The scripted lesson through the real production path: `python -m server`, pydantic-ai's OpenAI
chat model and the openai SDK, against a scripted OpenAI-compatible server that streams tool calls."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx

from server.core.classroom.phases import phase_of
from server.core.classroom.plan_tree import derive_statuses, plan_of
from server.core.transcript import pending_questions
from tests.livehttp import serve
from tests.procs import learner_turn, start_on_stub
from tests.scripts.classroom import CLOSING, lesson_reply
from tests.stub_openai import create_stub


def answered(record: dict[str, Any], output: dict[str, Any]) -> dict[str, Any]:
    messages = copy.deepcopy(record["messages"])
    for part in messages[-1]["parts"]:
        if part.get("state") == "input-available":
            part.update(state="output-available", output=output)
    return {"id": record["id"], "messages": messages}


def test_a_scripted_lesson_over_the_openai_wire(data_dir: Path) -> None:
    stub = create_stub(lesson_reply, delay_s=0)
    with serve(stub) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                chat_id = client.post("/api/chats", json={}).json()["id"]
                first = learner_turn(chat_id, "Teach me derivatives")
                assert client.post("/api/chat", json=first).status_code == 200
                record = client.get(f"/api/chats/{chat_id}").json()
                assert pending_questions(record["messages"])[0]["type"] == "tool-quiz"

                assert (
                    client.post("/api/chat", json=answered(record, {"kind": "quiz", "chosen": 1})).status_code
                    == 200
                )
                record = client.get(f"/api/chats/{chat_id}").json()
                assert pending_questions(record["messages"])[0]["type"] == "tool-ask_user_question"

                goal = answered(record, {"kind": "answer", "answer": "Derivatives", "chosen": 0})
                assert client.post("/api/chat", json=goal).status_code == 200
                record = client.get(f"/api/chats/{chat_id}").json()
                assert phase_of(record["messages"]) == "teach"
                plan = plan_of(record["messages"])
                assert plan is not None
                assert derive_statuses(plan, record["messages"])["deriv"] == "current"

                assert (
                    client.post("/api/chat", json=answered(record, {"kind": "quiz", "chosen": 1})).status_code
                    == 200
                )
                record = client.get(f"/api/chats/{chat_id}").json()
                assert record["messages"][-1]["parts"][-1]["text"] == CLOSING
                assert {u["role"] for u in record["usage"]} == {"prober", "teacher"}
                assert all(u["inputTokens"] == 10 * u["requests"] for u in record["usage"])
                assert all(u["costUsd"] is None for u in record["usage"])  # no price for "scripted"
            # the refused plan's error reached the model as the tool result
            tool_texts = [
                m.get("content")
                for body in stub.state.requests
                for m in body["messages"]
                if m.get("role") == "tool"
            ]
            assert any("cycle" in str(t) for t in tool_texts)
        finally:
            assert server.stop() == 0


def test_tokens_a_provider_does_not_report_are_unknown_not_zero(data_dir: Path) -> None:
    """Issue 12, item 5: pydantic-ai counts 0 tokens when the stream carries no usage; the record
    says unknown (null), and so is the cost; a provider that reports them is recorded as is."""
    from tests.stub_openai import Reply

    reports = {"on": False}
    stub = create_stub(lambda body: Reply("A short answer.", usage=reports["on"]), delay_s=0)
    with serve(stub) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                chat_id = client.post("/api/chats", json={}).json()["id"]
                assert client.post("/api/chat", json=learner_turn(chat_id, "Hello")).status_code == 200
                reports["on"] = True
                again = learner_turn(chat_id, "Again", message_id="u2")
                record = client.get(f"/api/chats/{chat_id}").json()
                again["messages"] = [*record["messages"], again["messages"][0]]
                assert client.post("/api/chat", json=again).status_code == 200
                usage = client.get(f"/api/chats/{chat_id}").json()["usage"]
        finally:
            assert server.stop() == 0
    assert [(u["inputTokens"], u["outputTokens"]) for u in usage] == [(None, None), (10, 10)]
    assert usage[0]["costUsd"] is None and usage[0]["requests"] == 1
