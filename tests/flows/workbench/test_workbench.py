"""The Workbench over real HTTP (issue 14, items 1, 2, 4): job tools ack at once, the worker's
outcome is saved with a pending delivery, and the steer enters the lesson exactly once: into a
live turn at its next model-request boundary, or through an idle wake once the lesson is
turn-free and question-free; after a restart too. Workers are scripted here (their own tests
drive the real ones); the teacher is a scripted model that reads the history it is given."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.core.contracts.jobs import DemoArtifact, JobRecord, WorkerResult, WorkerUsage
from server.core.contracts.models import ModelRef
from server.core.transcript import pending_questions
from server.core.workbench.wake import steer_ids
from server.services.bootstrap import build_services
from server.store.classroom.chats import read_record_data
from tests.fakes import FakeSecrets
from tests.flows.classroom.test_classroom import answer_body
from tests.flows.conftest import Live, turn_body
from tests.livehttp import serve
from tests.scripts.classroom import ASSESSMENT, GOOD_PLAN, TEACH_QUIZ

DEMO_HTML = "<canvas id=c></canvas><script>c.getContext('2d').fillRect(0,0,50,50)</script>"


def teaching_record(chat_id: str) -> list[dict[str, Any]]:
    """A lesson already in its teach phase: probe done, plan authored."""
    return [
        {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Teach me derivatives"}]},
        {
            "id": "a0",
            "role": "assistant",
            "parts": [
                {
                    "type": "tool-probe_done",
                    "toolCallId": "call_probe_done",
                    "state": "output-available",
                    "input": ASSESSMENT,
                    "output": "Final result processed.",
                },
                {
                    "type": "tool-plan_init",
                    "toolCallId": "call_plan",
                    "state": "output-available",
                    "input": GOOD_PLAN,
                    "output": {"ok": True, "plan": {"title": "Derivatives", "nodes": [], "edges": []}},
                },
                {"type": "text", "text": "Let us begin.", "state": "done"},
            ],
        },
    ]


def call(name: str, args: dict[str, Any], call_id: str) -> dict[int, DeltaToolCall]:
    return {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}


def steer_texts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and "[background" in str(p.content)
    ]


def tool_returns(messages: list[ModelMessage], tool: str) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.tool_name == tool
    )


class Teacher:
    """The scripted teacher. A learner message saying "demo" makes it dispatch a demo job; "quiz"
    makes it ask a tagged quiz; "look" makes it read the graph first (a second model request in
    the same run). It acknowledges every steer it reads with a line naming the steer's job."""

    def __init__(self) -> None:
        self.requests: list[list[ModelMessage]] = []
        self.hold: threading.Event | None = None
        """When set, the first model request of a run waits for it (a turn held open)."""

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        self.requests.append(messages)
        last = messages[-1]
        learner = (
            [
                str(p.content)
                for p in last.parts
                if isinstance(p, UserPromptPart) and "[background" not in str(p.content)
            ]
            if isinstance(last, ModelRequest)
            else []
        )
        while self.hold is not None and learner and not self.hold.is_set():
            await asyncio.sleep(0.01)
        said = " ".join(learner).lower()
        if "demo" in said and tool_returns(messages, "demo") == 0:
            yield "I will ask for a demo. "
            yield call("demo", {"request": "a slider that moves a tangent line"}, "call_demo")
            return
        if (
            "look" in said
            and isinstance(last, ModelRequest)
            and not any(isinstance(p, ToolReturnPart) for p in last.parts)
        ):
            yield call("list_sessions", {}, f"call_look_{len(self.requests)}")
            return
        if "quiz" in said:
            yield call("quiz", TEACH_QUIZ, "call_quiz")
            return
        steers = steer_texts([last])
        if steers:
            yield "Your demo is ready: " + steers[0][:40]
            return
        yield "Meanwhile, the derivative is a rate of change."


class Worker:
    """A scripted worker: waits for `release`, then returns a demo (or raises `fail`)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail: Exception | None = None

    async def __call__(self, kind: str, tool_input: dict[str, Any]) -> tuple[WorkerResult, WorkerUsage]:
        self.calls.append((kind, tool_input))
        while not self.release.is_set():
            await asyncio.sleep(0.01)
        if self.fail is not None:
            raise self.fail
        artifact = DemoArtifact(title="Tangent slider", html=DEMO_HTML, checks=["drew pixels", "no errors"])
        return WorkerResult(
            text="A tangent-line demo, verified in a browser.", artifact=artifact
        ), WorkerUsage(input_tokens=10, output_tokens=20, requests=1)


class Bench:
    """A live server with a scripted teacher and worker, on a lesson already teaching."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.teacher = Teacher()
        self.worker = Worker()
        live.script.delegate = self.teacher
        live.services.jobs.worker = self.worker
        live.services.turns.job_tools = lambda: ["demo", "visual"]

    def lesson(self) -> str:
        chat_id = self.live.new_chat()
        store = self.live.services.stores.chats
        record = store.get(chat_id)
        assert record is not None
        store.save(record.model_copy(update={"messages": teaching_record(chat_id), "title": "Derivatives"}))
        return chat_id

    def say(self, chat_id: str, text: str, mid: str) -> httpx.Response:
        return self.live.client.post("/api/chat", json=turn_body(chat_id, text, mid))

    def jobs(self, chat_id: str) -> list[dict[str, Any]]:
        response = self.live.client.get(f"/api/chats/{chat_id}/jobs")
        assert response.status_code == 200
        return response.json()["jobs"]

    def release(self) -> None:
        """Let the worker finish."""
        self.worker.release.set()

    def messages(self, chat_id: str) -> list[dict[str, Any]]:
        return self.live.record(chat_id)["messages"]


def wait_for(check: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


@pytest.fixture
def bench(live: Live) -> Bench:
    return Bench(live)


def delivered(bench: Bench, chat_id: str) -> bool:
    jobs = bench.jobs(chat_id)
    return bool(jobs) and all(j["delivery"] and j["delivery"]["status"] == "delivered" for j in jobs)


def settled(bench: Bench, chat_id: str) -> bool:
    return not bench.live.services.registry.running(chat_id)


def test_a_demo_job_acks_at_once_and_wakes_the_idle_lesson_exactly_once(bench: Bench) -> None:
    chat_id = bench.lesson()
    response = bench.say(chat_id, "Show me a demo of tangents", "u1")
    assert response.status_code == 200
    # the tool resolved at once with an acknowledgement; the teacher kept teaching in the same turn
    reply = bench.messages(chat_id)[-1]
    [dispatch] = [p for p in reply["parts"] if p["type"] == "tool-demo"]
    assert dispatch["state"] == "output-available" and dispatch["output"]["status"] == "working"
    assert "Meanwhile" in reply["parts"][-1]["text"]
    [job] = bench.jobs(chat_id)
    assert job["status"] == "running" and job["input"] == {"request": "a slider that moves a tangent line"}
    assert job["toolCallId"] == "call_demo" and job["delivery"] is None
    rows = bench.live.client.get("/api/activity").json()["rows"]
    assert [r["kind"] for r in rows if r["kind"] == "job"] == ["job"]

    bench.release()
    wait_for(lambda: delivered(bench, chat_id))
    wait_for(lambda: settled(bench, chat_id))
    messages = bench.messages(chat_id)
    steer_id = f"steer_{job['id']}_result"
    assert steer_ids(messages) == [steer_id]
    steer = next(m for m in messages if m["id"] == steer_id)
    assert steer["role"] == "user" and steer["parts"][1]["type"] == "data-subagent-artifact"
    assert steer["parts"][1]["data"]["artifact"]["html"] == DEMO_HTML
    # the wake turn ran the teacher on the steer, through the normal turn composition
    assert messages[-1]["role"] == "assistant" and "demo is ready" in messages[-1]["parts"][-1]["text"]
    [done] = bench.jobs(chat_id)
    assert done["status"] == "done" and done["delivery"]["status"] == "delivered"
    assert done["usage"]["inputTokens"] == 10
    assert not [r for r in bench.live.client.get("/api/activity").json()["rows"] if r["kind"] == "job"]
    # nothing delivers it again: another turn, another settle
    assert bench.say(chat_id, "Thanks", "u2").status_code == 200
    wait_for(lambda: settled(bench, chat_id))
    assert steer_ids(bench.messages(chat_id)) == [steer_id]


def test_a_result_enters_a_live_turn_at_its_next_model_request(bench: Bench) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    [job] = bench.jobs(chat_id)
    bench.teacher.hold = threading.Event()
    requests_before = len(bench.teacher.requests)
    with httpx.Client(base_url=bench.live.url, timeout=30) as other:
        answer: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda: answer.append(
                other.post("/api/chat", json=turn_body(chat_id, "Let me look around", "u2"))
            )
        )
        thread.start()
        wait_for(lambda: bench.live.services.registry.running(chat_id))
        wait_for(lambda: len(bench.teacher.requests) > requests_before)
        bench.release()  # the worker ends while the turn is live (its first request held)
        wait_for(lambda: bench.jobs(chat_id)[0]["status"] == "done")
        bench.teacher.hold.set()
        thread.join(30)
    assert answer and answer[0].status_code == 200
    wait_for(lambda: settled(bench, chat_id))
    wait_for(lambda: delivered(bench, chat_id))
    # the second model request of that run read the steer; no idle wake ran
    assert any(steer_texts(r) for r in bench.teacher.requests[requests_before:])
    messages = bench.messages(chat_id)
    steer_id = f"steer_{job['id']}_result"
    assert steer_ids(messages) == [steer_id]
    ids = [m["id"] for m in messages]
    reply = messages[-1]
    assert ids.index(steer_id) == len(ids) - 2  # placed just before the reply that received it
    assert "demo is ready" in reply["parts"][-1]["text"]
    assert not any(p["type"] == "data-enqueued-messages" for p in reply["parts"])
    assert not any(p["type"] == "data-subagent-artifact" for p in reply["parts"])  # not inside the reply
    # the live stream showed the artifact
    assert '"data-subagent-artifact"' in answer[0].text


def test_a_result_waits_for_a_pending_question_and_rides_the_answer(bench: Bench) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    assert bench.say(chat_id, "Give me a quiz", "u2").status_code == 200
    assert pending_questions(bench.messages(chat_id))
    bench.release()
    wait_for(lambda: bench.jobs(chat_id)[0]["status"] == "done")
    time.sleep(0.3)  # an idle wake would have started by now
    assert not steer_ids(bench.messages(chat_id))  # the quiz holds it, quietly
    assert bench.jobs(chat_id)[0]["delivery"]["status"] == "pending"
    asked = bench.messages(chat_id)[-1]
    body = answer_body(bench.live, chat_id, {"kind": "quiz", "chosen": 1, "correct": True})
    assert bench.live.client.post("/api/chat", json=body).status_code == 200
    wait_for(lambda: delivered(bench, chat_id))
    wait_for(lambda: settled(bench, chat_id))
    messages = bench.messages(chat_id)
    [steer_id] = steer_ids(messages)
    # the steer sits where the model read it: after the answered question, before the reply to it
    ids = [m["id"] for m in messages]
    assert ids[-3:] == [asked["id"], steer_id, ids[-1]] and ids[-1] != asked["id"]
    answered = messages[-3]
    assert [p["type"] for p in answered["parts"]] == [p["type"] for p in asked["parts"]]
    assert (
        answered["parts"][-1]["type"] == "tool-quiz" and answered["parts"][-1]["state"] == "output-available"
    )
    reply = messages[-1]
    assert reply["role"] == "assistant" and "demo is ready" in reply["parts"][-1]["text"]
    assert not any(p["type"] == "tool-quiz" for p in reply["parts"])
    # the next turn's model reads the steer once, between the answer and the reply to it
    assert bench.say(chat_id, "Thanks", "u3").status_code == 200
    wait_for(lambda: settled(bench, chat_id))
    assert len(steer_texts(bench.teacher.requests[-1])) == 1


def test_abort_saves_an_abort_notice_and_delete_waits_for_computing_workers(bench: Bench) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    [job] = bench.jobs(chat_id)
    refused = bench.live.client.delete(f"/api/chats/{chat_id}")
    assert refused.status_code == 409 and "background agent" in refused.json()["detail"]
    assert bench.live.client.post("/api/activity/abort", json={"source": job["id"]}).json() == {
        "aborted": True
    }
    wait_for(lambda: delivered(bench, chat_id))
    [aborted] = bench.jobs(chat_id)
    assert aborted["status"] == "aborted" and aborted["delivery"]["kind"] == "abort"
    assert steer_ids(bench.messages(chat_id)) == [f"steer_{job['id']}_abort"]
    # an ended worker cannot be aborted again
    assert bench.live.client.post("/api/activity/abort", json={"source": job["id"]}).json() == {
        "aborted": False
    }
    wait_for(lambda: settled(bench, chat_id))
    assert bench.live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    assert bench.live.services.stores.jobs.list(chat_id) == []


def test_deleting_a_lesson_discards_the_delivery_a_pending_question_holds(bench: Bench, live: Live) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    assert bench.say(chat_id, "Give me a quiz", "u2").status_code == 200
    bench.release()
    wait_for(lambda: bench.jobs(chat_id)[0]["status"] == "done")
    [job] = bench.jobs(chat_id)
    assert job["delivery"]["status"] == "pending"
    assert live.services.wake.pending(chat_id) == [job["delivery"]["steerId"]]  # held by the quiz
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    assert not (live.data / "jobs" / f"{job['id']}.json").exists()
    assert live.services.stores.jobs.list(chat_id) == []
    assert live.services.wake.pending(chat_id) == []
    live.services.events.emit("turn-settled", {"chatId": chat_id})  # nothing left to wake or confirm
    time.sleep(0.3)
    assert not (live.data / "chats" / f"{chat_id}.json").exists()  # the record is not recreated
    assert live.client.get(f"/api/chats/{chat_id}").status_code == 404
    assert live.client.get(f"/api/chats/{chat_id}/jobs").status_code == 404


def test_a_worker_failure_is_delivered_honestly(bench: Bench) -> None:
    chat_id = bench.lesson()
    bench.worker.fail = RuntimeError("the demo kept throwing TypeError after 3 attempts")
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    bench.release()
    wait_for(lambda: delivered(bench, chat_id))
    [job] = bench.jobs(chat_id)
    assert job["status"] == "error" and "TypeError" in job["error"]
    steer = next(m for m in bench.messages(chat_id) if m["id"] == job["delivery"]["steerId"])
    assert "failed" in steer["parts"][0]["text"] and steer["parts"][1]["data"]["status"] == "error"


@pytest.mark.parametrize("earlier", [None, {"detail": "the model failed before replying: 500", "at": "t0"}])
def test_a_failed_wake_start_stays_quietly_pending_until_the_next_turn(
    bench: Bench, live: Live, earlier: dict[str, str] | None
) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    if earlier is not None:  # the learner's own last turn had failed: that notice stays the news
        live.services.turns.failures[chat_id] = earlier
    store = live.services.stores.chats

    def pick(model: dict[str, str]) -> None:
        record = store.get(chat_id)
        assert record is not None
        store.save(record.model_copy(update={"model": ModelRef.model_validate(model)}))

    scripted = live.record(chat_id)["model"]
    pick({"provider": "openai", "model": "gpt-4o-mini"})  # no key: the wake cannot start (503)
    bench.release()
    wait_for(lambda: chat_id in live.services.wake.parked)
    time.sleep(0.3)
    assert bench.jobs(chat_id)[0]["delivery"]["status"] == "pending"  # quiet: no retry timer
    assert not steer_ids(bench.messages(chat_id))
    # no error banner for a turn the learner never started (nor is an earlier one taken away)
    assert live.client.get(f"/api/chats/{chat_id}").json()["lastFailure"] == earlier
    pick(scripted)
    assert bench.say(chat_id, "Let me look around", "u2").status_code == 200  # the learner's next turn
    wait_for(lambda: delivered(bench, chat_id))
    wait_for(lambda: settled(bench, chat_id))
    assert len(steer_ids(bench.messages(chat_id))) == 1


def _restart(data: Path, teacher: Teacher) -> Any:
    services = build_services(
        DataPaths(data),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda resolved, key, url: FunctionModel(stream_function=teacher),
    )
    services.turns.job_tools = lambda: ["demo"]
    return services


def _job_owing(data: Path, chat_id: str, *, delivered_marker: bool, html: str = DEMO_HTML) -> JobRecord:
    """A job whose worker finished and saved its outcome, then the server died before delivery
    (or, with `delivered_marker`, after the steer was saved but before the acknowledgement)."""
    from server.core.contracts.jobs import Delivery, steer_id, steer_message

    job = JobRecord(
        id="job_restart1",
        chat_id=chat_id,
        tool_call_id="call_demo",
        kind="demo",
        input={"request": "a slider"},
        status="done",
        created_at="2026-12-01T00:00:00Z",
        finished_at="2026-12-01T00:00:05Z",
        result=WorkerResult(text="A demo.", artifact=DemoArtifact(title="Slider", html=html)),
        delivery=Delivery(kind="result", steer_id=steer_id("job_restart1", "result")),
    )
    (data / "jobs").mkdir(parents=True, exist_ok=True)
    (data / "jobs" / f"{job.id}.json").write_text(job.model_dump_json(by_alias=True))
    if delivered_marker:
        path = data / "chats" / f"{chat_id}.json"
        record = read_record_data(path.parent, chat_id) or {}  # snapshot + log (decision 0015)
        record["messages"].append(steer_message(job))
        path.write_text(json.dumps(record))  # a hand edit: the log no longer applies
    return job


@pytest.mark.parametrize("marker_saved", [False, True])
def test_a_restart_between_done_and_delivered_delivers_exactly_once(
    bench: Bench, live: Live, marker_saved: bool
) -> None:
    chat_id = bench.lesson()
    live.client.close()
    job = _job_owing(live.data, chat_id, delivered_marker=marker_saved)
    teacher = Teacher()
    # a second process on the same data dir (the first one's server keeps no claim on it here)
    services = _restart(live.data, teacher)
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=30) as client:

        def jobs() -> list[dict[str, Any]]:
            return client.get(f"/api/chats/{chat_id}/jobs").json()["jobs"]

        wait_for(lambda: jobs()[0]["delivery"]["status"] == "delivered")
        wait_for(lambda: not services.registry.running(chat_id))
        record = client.get(f"/api/chats/{chat_id}").json()
    assert steer_ids(record["messages"]) == [f"steer_{job.id}_result"]
    woke = bool(teacher.requests)
    assert woke is (not marker_saved)  # a saved marker is acknowledged, never delivered again


def test_a_running_job_of_a_dead_process_becomes_an_honest_error(bench: Bench, live: Live) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    [job] = bench.jobs(chat_id)
    services = _restart(live.data, Teacher())
    owed = services.jobs.recover()  # what startup does, without the first process's task
    assert [j.id for j in owed] == [job["id"]]
    saved = services.stores.jobs.get(job["id"])
    assert saved is not None and saved.status == "error" and "closed" in (saved.error or "")
