"""The wake pipeline's rules and its registry, with fakes and a fake clock (issue 14, item 4):
one entry per steer id, 409 backoff 500 -> 1000 -> 2000 -> 5000 ms, question deferral, a
failed start parked quietly, delivery only when the marker is in the saved record."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.contracts.chat import ChatRecord
from server.core.contracts.jobs import (
    DemoArtifact,
    JobRecord,
    WorkerResult,
    WorkerUsage,
    is_steer,
    steer_id,
    steer_message,
)
from server.core.events import EventBus
from server.core.fanout import FanOut, JobOutcomeSaved
from server.core.refusals import Refused
from server.core.workbench.wake import (
    backoff_delay,
    delivered,
    idle_wake_ready,
    place_steers,
    place_steers_in_answer,
    steer_ids,
)
from server.services.workbench.runner import JobRunner
from server.services.workbench.steers import OwedSteers
from server.services.workbench.wake import WakeService
from tests.fakes import FakeChatStore
from tests.fakes.jobs import FakeJobStore

DEMO = DemoArtifact(title="Slider", html="<p>x</p>")


def msg(mid: str, role: str = "assistant", parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": mid, "role": role, "parts": parts or [{"type": "text", "text": mid}]}


def steer(sid: str) -> dict[str, Any]:
    return {
        "id": sid,
        "role": "user",
        "parts": [{"type": "text", "text": sid}, {"type": "data-subagent-artifact", "id": sid, "data": {}}],
    }


# -- pure rules ---------------------------------------------------------------------------------------
def test_backoff_is_the_clients_ramp_then_stays_at_five_seconds() -> None:
    assert [backoff_delay(i) for i in range(6)] == [0.5, 1.0, 2.0, 5.0, 5.0, 5.0]


def test_place_steers_puts_them_before_the_reply_once() -> None:
    messages = [msg("u1", "user"), msg("a1")]
    placed = place_steers(messages, [steer("s1"), steer("s1"), steer("s2")], before="a1")
    assert [m["id"] for m in placed] == ["u1", "s1", "s2", "a1"]
    again = place_steers(placed, [steer("s2"), steer("s3")])
    assert [m["id"] for m in again] == ["u1", "s1", "s2", "a1", "s3"]
    assert messages == [msg("u1", "user"), msg("a1")]  # the input is not changed


def test_an_answer_turns_steers_go_after_the_answered_question() -> None:
    quiz = {"type": "tool-quiz", "toolCallId": "q", "state": "output-available", "input": {}, "output": {}}
    answered = msg("a1", parts=[{"type": "text", "text": "A question."}, quiz])
    reply = {
        **answered,
        "parts": [*answered["parts"], {"type": "step-start"}, {"type": "text", "text": "Good."}],
    }
    messages = [msg("u1", "user"), reply]
    placed = place_steers_in_answer(
        messages, [steer("s1"), steer("s1")], reply=reply, answered=answered, tail_id="a2"
    )
    assert [m["id"] for m in placed] == ["u1", "a1", "s1", "a2"]
    assert placed[1] == answered
    assert placed[3]["role"] == "assistant" and [p["type"] for p in placed[3]["parts"]] == [
        "step-start",
        "text",
    ]
    assert messages == [msg("u1", "user"), reply]  # the input is not changed
    # a steer already saved is not placed again, and the reply stays whole
    again = place_steers_in_answer(
        [*messages, steer("s1")], [steer("s1")], reply=reply, answered=answered, tail_id="a3"
    )
    assert [m["id"] for m in again] == ["u1", "a1", "s1"] and again[1] == reply
    # nothing new after the answer but a step marker: no empty message
    bare = {**answered, "parts": [*answered["parts"], {"type": "step-start"}]}
    placed = place_steers_in_answer(
        [msg("u1", "user"), bare], [steer("s2")], reply=bare, answered=answered, tail_id="a4"
    )
    assert [m["id"] for m in placed] == ["u1", "a1", "s2"]


@given(st.lists(st.sampled_from(["s1", "s2", "s3"]), max_size=12), st.lists(st.booleans(), max_size=12))
def test_no_steer_id_ever_appears_twice(ids: list[str], befores: list[bool]) -> None:
    messages = [msg("u1", "user"), msg("a1")]
    for sid, before in zip(ids, befores, strict=False):
        messages = place_steers(messages, [steer(sid)], before="a1" if before else None)
    found = steer_ids(messages)
    assert len(found) == len(set(found)) == len(set(ids[: len(befores)]))


def test_a_pending_question_defers_the_idle_wake() -> None:
    quiz = {"type": "tool-quiz", "toolCallId": "q", "state": "input-available", "input": {}}
    assert not idle_wake_ready([msg("u1", "user"), msg("a1", parts=[quiz])])
    assert idle_wake_ready([msg("u1", "user"), msg("a1")])
    assert delivered([steer("s1")], "s1") and not delivered([msg("a1")], "s1")


def test_steer_messages_say_what_happened() -> None:
    job = JobRecord(
        id="job_a",
        chat_id="c",
        tool_call_id="t",
        kind="demo",
        input={},
        status="done",
        created_at="now",
        result=WorkerResult(text="A slider demo.", artifact=DEMO),
    )
    with pytest.raises(ValueError):
        steer_message(job)  # nothing owed yet
    from server.core.contracts.jobs import Delivery

    owed = job.model_copy(update={"delivery": Delivery(kind="result", steer_id=steer_id("job_a", "result"))})
    message = steer_message(owed)
    assert message["id"] == "steer_job_a_result" and is_steer(message)
    assert "A slider demo." in message["parts"][0]["text"]
    assert message["parts"][1]["data"]["artifact"]["kind"] == "demo"


# -- the registry -------------------------------------------------------------------------------------
class Harness:
    """A WakeService over fakes: a chat store, a job store, a scripted `start_wake`."""

    def __init__(self) -> None:
        self.chats = FakeChatStore()
        self.jobs = FakeJobStore()
        self.events = EventBus()
        self.sleeps: list[float] = []
        self.running: set[str] = set()
        self.refusals: list[Refused] = []
        self.starts = 0

        async def worker(kind: str, tool_input: dict[str, Any]) -> tuple[WorkerResult, WorkerUsage]:
            return WorkerResult(text="done", artifact=DEMO), WorkerUsage()

        # the runner's outcome reaches the wake pipeline as it does in bootstrap: one FanOut entry
        # (its handler names `self.wake`, built below; nothing is published before then)
        fanout = FanOut({JobOutcomeSaved: [lambda m: self.wake.intake(m.job)]})
        self.runner = JobRunner(
            self.jobs, worker, asyncio.Semaphore(3), self.events, fanout=fanout, clock=lambda: "t"
        )

        async def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)

        self.owed = OwedSteers()
        self.wake = WakeService(
            self.chats,
            self.runner,
            self.events,
            lambda c: c in self.running,
            start_wake=self.start,
            owed=self.owed,
            sleep=sleep,
        )
        self.chats.records["c"] = ChatRecord(
            id="c",
            title="t",
            created_at="t",
            updated_at="t",
            model={"provider": "openai", "model": "m"},
            messages=[msg("u1", "user"), msg("a1")],
        )

    async def start(self, chat_id: str, steers: list[dict[str, Any]]) -> object:
        self.starts += 1
        if self.refusals:
            raise self.refusals.pop(0)
        record = self.chats.records[chat_id]
        self.chats.save(record.model_copy(update={"messages": place_steers(record.messages, steers)}))
        return object()

    def owed_job(self, job_id: str = "job_1") -> JobRecord:
        from server.core.contracts.jobs import Delivery

        job = JobRecord(
            id=job_id,
            chat_id="c",
            tool_call_id="t",
            kind="demo",
            input={},
            status="done",
            created_at="t",
            result=WorkerResult(text="done", artifact=DEMO),
            delivery=Delivery(kind="result", steer_id=steer_id(job_id, "result")),
        )
        self.jobs.save(job)
        return job

    async def settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)
        loops = list(self.wake.loops.values())
        if loops:
            await asyncio.gather(*loops, return_exceptions=True)


async def test_409_backs_off_then_delivers_once() -> None:
    h = Harness()
    h.refusals = [Refused("conflict", "turn_running", "busy")] * 5
    job = h.owed_job()
    h.wake.intake(job)
    h.wake.intake(job)  # a repeated submission shares the one entry
    await h.settle()
    assert h.sleeps == [0.5, 1.0, 2.0, 5.0, 5.0] and h.starts == 6  # the ramp, then 5 s again
    assert steer_ids(h.chats.records["c"].messages) == ["steer_job_1_result"]
    saved = h.jobs.get("job_1")
    assert saved is not None and saved.delivery is not None and saved.delivery.status == "delivered"
    assert h.wake.pending("c") == []


async def test_a_failed_start_parks_quietly_until_the_next_turn_settles() -> None:
    h = Harness()
    h.refusals = [Refused("unavailable", "models_not_configured", "no model")]
    h.wake.intake(h.owed_job())
    await h.settle()
    assert "c" in h.wake.parked and h.starts == 1 and h.sleeps == []
    h.wake.intake(h.owed_job())  # no retry timer, no new attempt while parked
    await h.settle()
    assert h.starts == 1
    h.events.emit("turn-settled", {"chatId": "c"})  # the learner's next turn ended
    await h.settle()
    assert h.starts == 2 and steer_ids(h.chats.records["c"].messages) == ["steer_job_1_result"]


async def test_a_live_turn_takes_each_steer_once_and_the_save_completes_delivery() -> None:
    h = Harness()
    h.running.add("c")
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.starts == 0  # a live turn: no idle wake
    taken = h.owed.take("c")
    assert [s["id"] for s in taken] == ["steer_job_1_result"]
    assert h.owed.take("c") == []  # not offered twice to the same turn
    record = h.chats.records["c"]
    h.chats.save(record.model_copy(update={"messages": place_steers(record.messages, taken, before="a1")}))
    h.running.discard("c")
    h.events.emit("turn-settled", {"chatId": "c"})
    await h.settle()
    assert h.starts == 0 and h.wake.pending("c") == []
    saved = h.jobs.get("job_1")
    assert saved is not None and saved.delivery is not None and saved.delivery.status == "delivered"


async def test_a_live_turn_that_did_not_save_its_steers_offers_them_again() -> None:
    h = Harness()
    h.running.add("c")
    h.wake.intake(h.owed_job())
    assert len(h.owed.take("c")) == 1
    h.running.discard("c")
    h.events.emit("turn-settled", {"chatId": "c"})  # the turn failed before saving
    await h.settle()
    assert h.starts == 1 and steer_ids(h.chats.records["c"].messages) == ["steer_job_1_result"]


async def test_a_pending_question_is_not_a_failure() -> None:
    h = Harness()
    h.refusals = [Refused("conflict", "question_pending", "a question awaits")]
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.starts == 1 and "c" not in h.wake.parked and h.wake.pending("c") == ["steer_job_1_result"]


async def test_a_deleted_session_drops_its_obligations() -> None:
    h = Harness()
    h.running.add("c")
    h.wake.intake(h.owed_job())
    h.wake.forget("c")
    assert h.wake.pending("c") == [] and h.owed.take("c") == []


async def test_the_runner_saves_outcome_and_pending_delivery_in_one_update() -> None:
    h = Harness()
    h.running.add("c")  # keep the wake out of it
    job = h.runner.spawn("c", "call_1", "demo", {"request": "x"})
    assert h.jobs.get(job.id).status == "running"  # type: ignore[union-attr]
    await asyncio.gather(*h.runner.tasks.values())
    writes = [w for w in h.jobs.writes if w.id == job.id]
    assert [w.status for w in writes] == ["running", "done"]
    assert writes[-1].delivery is not None and writes[-1].delivery.status == "pending"
    assert h.wake.pending("c") == [f"steer_{job.id}_result"]


async def test_a_worker_past_its_deadline_ends_as_an_honest_error() -> None:
    h = Harness()
    h.running.add("c")  # keep the wake out of it

    async def slow(kind: str, tool_input: dict[str, Any]) -> tuple[WorkerResult, WorkerUsage]:
        await asyncio.sleep(60)
        raise AssertionError("the deadline stops it first")

    h.runner.worker = slow
    h.runner.deadline_s = 0.05
    job = h.runner.spawn("c", "call_1", "demo", {"request": "x"})
    await asyncio.wait_for(asyncio.gather(*h.runner.tasks.values()), timeout=5)
    saved = h.jobs.get(job.id)
    assert saved is not None and saved.status == "error" and saved.result is None
    assert (
        saved.error
        == "the demo worker did not finish within 0.05 seconds, so it was stopped; nothing was produced"
    )
    assert saved.delivery is not None and saved.delivery.status == "pending"  # the lesson is told
    assert h.runner.tasks == {} and not h.runner.computing("c")  # the Background agents row goes
    assert h.wake.pending("c") == [f"steer_{job.id}_result"]
