"""The Classroom over HTTP with a scripted lesson model (issue 3, seed §5):
probe quiz -> goal question -> probe_done -> plan_init (a refused plan, then a good one) ->
a tagged teaching quiz answered."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ToolReturnPart

from server.core.classroom.phases import phase_of
from server.core.classroom.plan_tree import derive_statuses, plan_of
from server.core.transcript import INTERRUPTED, pending_questions
from tests.flows.conftest import Live, sse_chunks, turn_body
from tests.scripts.classroom import CLOSING, LESSON_TITLE, lesson_model


def wait_for(check: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    """Poll `check` until it holds or `timeout_s` passes (a background side channel)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


@pytest.fixture
def lesson(live: Live) -> Live:
    live.script.delegate = lesson_model
    return live


def answer_body(
    live: Live, chat_id: str, output: dict[str, Any], call_id: str | None = None
) -> dict[str, Any]:
    """What useChat posts after addToolOutput: the record's messages, the last one's question answered."""
    messages = copy.deepcopy(live.record(chat_id)["messages"])
    for part in messages[-1]["parts"]:
        if part.get("state") == "input-available" and (call_id is None or part["toolCallId"] == call_id):
            part["state"] = "output-available"
            part["output"] = output
    return {"id": chat_id, "trigger": "submit-message", "messages": messages}


def test_a_whole_lesson(lesson: Live) -> None:
    live = lesson
    chat_id = live.new_chat()

    # 1. the prober asks a quiz; the turn ends with the question pending
    response = live.client.post("/api/chat", json=turn_body(chat_id, "Teach me calculus"))
    assert response.status_code == 200
    record = live.record(chat_id)
    assert phase_of(record["messages"]) == "probe"
    [pending] = pending_questions(record["messages"])
    assert pending["type"] == "tool-quiz" and pending["toolCallId"] == "call_probe_quiz"

    # 2. the learner answers right (the browser's verdict is ignored; the server re-grades)
    response = live.client.post(
        "/api/chat", json=answer_body(live, chat_id, {"kind": "quiz", "chosen": 1, "correct": False})
    )
    assert response.status_code == 200
    record = live.record(chat_id)
    quiz = next(p for p in record["messages"][1]["parts"] if p.get("toolCallId") == "call_probe_quiz")
    assert quiz["output"] == {
        "kind": "quiz",
        "chosen": 1,
        "chosenText": "4",
        "correct": True,
        "correctIndex": 1,
        "correctText": "4",
    }
    assert len(record["messages"]) == 2  # the continuation extends the same assistant message
    [goal] = pending_questions(record["messages"])
    assert goal["type"] == "tool-ask_user_question"

    # 3. the goal answer: the prober files probe_done, the teacher takes over in the same turn,
    #    its cyclic plan is refused with the cycle named, the retry is accepted, a quiz is posed
    response = live.client.post(
        "/api/chat", json=answer_body(live, chat_id, {"kind": "answer", "answer": "Derivatives", "chosen": 0})
    )
    assert response.status_code == 200
    chunks = [c for c in sse_chunks(response.text) if isinstance(c, dict)]
    assert [c["type"] for c in chunks].count("start") == 1 and [c["type"] for c in chunks].count(
        "finish"
    ) == 1
    record = live.record(chat_id)
    assert phase_of(record["messages"]) == "teach"
    plan = plan_of(record["messages"])
    assert plan is not None and [n.id for n in plan.nodes] == ["limits", "deriv", "power"]
    assert derive_statuses(plan, record["messages"]) == {
        "limits": "upcoming",
        "deriv": "current",
        "power": "upcoming",
    }
    [teach] = pending_questions(record["messages"])
    assert teach["input"]["node"] == "deriv"
    kinds = [p["type"] for p in record["messages"][-1]["parts"]]
    assert "tool-probe_done" in kinds and "tool-plan_init" in kinds

    # 4. the teaching quiz answered wrong: the teacher repairs; usage recorded per run
    response = live.client.post("/api/chat", json=answer_body(live, chat_id, {"kind": "quiz", "chosen": 0}))
    assert response.status_code == 200
    record = live.record(chat_id)
    assert record["messages"][-1]["parts"][-1]["text"] == CLOSING
    assert not pending_questions(record["messages"])
    roles = [u["role"] for u in record["usage"]]
    assert roles == ["prober", "prober", "prober", "teacher", "teacher"]
    assert all(u["inputTokens"] is not None for u in record["usage"])
    assert all(u["costUsd"] is None for u in record["usage"])  # a scripted model has no price: unknown

    # 5. the naming side channel titled the lesson once its goal was known (probe_done, step 3)
    #    and the turns' usage is untouched by it
    assert wait_for(lambda: live.record(chat_id)["title"] == LESSON_TITLE)
    assert live.record(chat_id)["titleBy"] == "model"
    assert [c["title"] for c in live.client.get("/api/chats").json()["chats"]] == [LESSON_TITLE]


def test_the_refused_plan_reached_the_model_with_its_line_numbered_error(lesson: Live) -> None:
    live = lesson
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id))
    live.client.post("/api/chat", json=answer_body(live, chat_id, {"kind": "quiz", "chosen": 1}))
    live.client.post("/api/chat", json=answer_body(live, chat_id, {"kind": "answer", "answer": "x"}))
    prompts = [
        str(p.content)
        for msgs in live.script.seen
        for m in msgs
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.outcome == "retried"
    ]
    assert any("cycle: a --> b --> a" in p for p in prompts), prompts


def test_answering_a_question_that_is_not_pending_is_409_and_changes_nothing(lesson: Live) -> None:
    live = lesson
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id))
    stale = answer_body(live, chat_id, {"kind": "quiz", "chosen": 1})
    assert live.client.post("/api/chat", json=stale).status_code == 200
    before = live.record(chat_id)
    again = live.client.post("/api/chat", json=stale)  # the same answer re-posted by a stale tab
    assert again.status_code == 409 and again.json()["error"] == "not_pending"
    assert live.record(chat_id) == before


@pytest.mark.parametrize(
    "output, words",
    [
        pytest.param({"kind": "quiz", "chosen": 7}, "does not exist", id="out-of-range"),
        pytest.param({"kind": "quiz"}, "chosen", id="no-choice"),
        pytest.param("B", "answer", id="not-an-object"),
    ],
)
def test_a_malformed_answer_is_400_and_the_question_stays_pending(
    lesson: Live, output: Any, words: str
) -> None:
    live = lesson
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id))
    before = live.record(chat_id)
    response = live.client.post("/api/chat", json=answer_body(live, chat_id, output))
    assert response.status_code == 400 and response.json()["error"] == "bad_answer"
    assert words in response.json()["detail"]
    assert live.record(chat_id) == before
    assert pending_questions(live.record(chat_id)["messages"])


def test_writing_instead_of_answering_interrupts_the_question_for_the_model(lesson: Live) -> None:
    live = lesson
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id))
    live.client.post("/api/chat", json=turn_body(chat_id, "I'd rather just talk", mid="u2"))
    returns = [
        p
        for m in live.script.seen[-1]
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    assert [r.content for r in returns] == [INTERRUPTED]
    record = live.record(chat_id)
    quiz = next(p for p in record["messages"][1]["parts"] if p.get("toolCallId") == "call_probe_quiz")
    assert quiz["state"] == "input-available"  # the record is not rewritten


def test_rename_delete_and_session_model(lesson: Live) -> None:
    live = lesson
    chat_id = live.new_chat()
    assert (
        live.client.patch(f"/api/chats/{chat_id}", json={"title": "  Calculus  "}).json()["title"]
        == "Calculus"
    )
    assert live.record(chat_id)["titleBy"] == "learner"  # the naming side channel never overwrites it
    assert live.client.patch(f"/api/chats/{chat_id}", json={"title": "   "}).status_code == 400
    picked = live.client.put(
        f"/api/chats/{chat_id}/settings", json={"model": {"provider": "openai", "model": "gpt-5-mini"}}
    )
    assert picked.json()["model"] == {"provider": "openai", "model": "gpt-5-mini", "baseUrl": None}
    settings = live.client.get("/api/settings").json()
    assert settings["models"]["strong"]["provider"] == "openai-compatible"  # settings untouched
    response = live.client.post("/api/chat", json=turn_body(chat_id))
    assert response.status_code == 503 and "LH_OPENAI_API_KEY" in response.json()["detail"]
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    assert live.client.get(f"/api/chats/{chat_id}").status_code == 404
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 404


def test_delete_is_refused_while_a_turn_runs(lesson: Live) -> None:
    import threading

    live = lesson
    chat_id = live.new_chat()
    gate = threading.Event()
    live.script.gate = gate
    thread = threading.Thread(target=lambda: live.client.post("/api/chat", json=turn_body(chat_id)))
    thread.start()
    try:
        for _ in range(500):
            if live.services.registry.running(chat_id):
                break
            threading.Event().wait(0.01)
        response = live.client.delete(f"/api/chats/{chat_id}")
        assert response.status_code == 409 and response.json()["error"] == "turn_running"
        assert live.client.get("/api/chats").json()["chats"][0]["running"] is True
    finally:
        gate.set()
        thread.join(10)
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
