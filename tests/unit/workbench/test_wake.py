"""The wake pipeline's rules and its registry, with fakes and a fake clock (issue 14, item 4):
one entry per steer id, 409 backoff 500 -> 1000 -> 2000 -> 5000 ms, question deferral, a
failed start parked quietly, delivery only when the marker is in the saved record."""

from __future__ import annotations

import asyncio
from pathlib import Path
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
from server.core.contracts.models import (
    PROVIDERS,
    SUBSCRIPTION_ROUTES,
    BackgroundConsent,
    ModelRef,
    ModelSlot,
    Settings,
)
from server.core.events import EventBus
from server.core.fanout import FanOut, JobOutcomeSaved
from server.core.refusals import Refused
from server.core.workbench.wake import (
    background_allowed,
    backoff_delay,
    delivered,
    idle_wake_ready,
    paused,
    place_steers,
    place_steers_in_answer,
    steer_ids,
    withheld,
)
from server.services.workbench.consent import BackgroundConsentService
from server.services.workbench.runner import JobRunner
from server.services.workbench.steers import OwedSteers
from server.services.workbench.wake import WakeService
from server.store.machine_room.settings import FileSettingsStore
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
            model=ModelRef(provider="openai", model="m"),
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


# -- background consent and the pause (issue 30 item 1; seed §5.1, §8.1) ---------------------------------
def test_background_consent_is_on_by_default_and_independent_per_provider() -> None:
    consent = BackgroundConsent()
    assert consent.view() == {"chatgpt": True, "github-copilot-subscription": True, "xai-subscription": True}
    off = BackgroundConsent.model_validate({"github-copilot-subscription": False})
    assert off.view() == {"chatgpt": True, "github-copilot-subscription": False, "xai-subscription": True}
    # an API key, a local server, the offline model: no consent asked
    assert all(off.allows(p) for p in ("openai", "openrouter", "openai-compatible", "local"))
    wire = Settings(background_consent=off).model_dump(mode="json", by_alias=True)
    assert wire["backgroundConsent"] == off.view()
    assert Settings.model_validate(wire).background_consent == off


@given(
    st.dictionaries(st.sampled_from(list(SUBSCRIPTION_ROUTES)), st.booleans()),
    st.sets(st.sampled_from(PROVIDERS)),
)
def test_a_lesson_is_consented_exactly_when_none_of_its_providers_is_withheld(
    switches: dict[str, bool], providers: set[str]
) -> None:
    consent = BackgroundConsent.model_validate(switches)
    off = {p for p, allowed in switches.items() if not allowed}
    assert withheld(providers, consent) == sorted(providers & off)
    assert background_allowed(providers, consent) == (not providers & off)


def test_a_stopped_reply_pauses_the_lesson_an_errored_one_does_not() -> None:
    stopped = {**msg("a2"), "metadata": {"interrupted": True}}
    failed = {**msg("a2"), "metadata": {"interrupted": True, "error": "rate limited"}}
    assert paused([msg("u1", "user"), stopped])
    assert not paused([msg("u1", "user"), failed])
    assert not paused([msg("u1", "user"), msg("a1")])
    assert paused([stopped, msg("u2", "user")])  # the learner's message, not answered (yet)
    assert not paused([msg("u1", "user"), msg("a1"), steer("s1")])  # a steer left last
    assert not paused([])


class ConsentHarness(Harness):
    """The Harness with the real consent service over a real settings file; the lesson runs on
    the ChatGPT subscription (its prober and teacher run the lesson's own model)."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__()
        record = self.chats.records["c"]
        self.chats.records["c"] = record.model_copy(
            update={"model": ModelRef(provider="chatgpt", model="gpt-5")}
        )
        self.settings = FileSettingsStore(tmp_path / "settings.json")
        self.settings_events: list[str] = []
        self.events.subscribe(lambda event, data: self.settings_events.append(event))
        self.consent = BackgroundConsentService(
            self.settings,
            self.chats,
            lambda ref, role: (ModelSlot(provider=ref.provider, model=ref.model, base_url=ref.base_url), "x"),
            self.events,
        )
        self.stopped: list[str] = []

        async def stop(chat_id: str) -> bool:
            self.stopped.append(chat_id)
            return True

        self.owed = OwedSteers(self.consent.allows)
        self.wake._unsubscribe()  # the Harness's own pipeline is replaced by one with the consent gate
        self.wake = WakeService(
            self.chats,
            self.runner,
            self.events,
            lambda c: c in self.running,
            start_wake=self.start,
            owed=self.owed,
            consent=self.consent.refusal,
            stop_wake=stop,
            sleep=self.fake_sleep,
        )
        self.consent.listeners.append(self.wake.consent_changed)

    async def fake_sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def delivered(self) -> bool:
        saved = self.jobs.get("job_1")
        return saved is not None and saved.delivery is not None and saved.delivery.status == "delivered"


async def test_consent_off_holds_the_result_without_a_start_and_consent_on_delivers_it(
    tmp_path: Path,
) -> None:
    h = ConsentHarness(tmp_path)
    assert h.consent.set("chatgpt", False) == {
        "chatgpt": False,
        "github-copilot-subscription": True,
        "xai-subscription": True,
    }
    assert "subscriptions-changed" in h.settings_events
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.starts == 0 and "c" in h.wake.held and "c" not in h.wake.parked  # a deferral, not a failure
    assert h.wake.pending("c") == ["steer_job_1_result"] and not h.delivered()
    h.events.emit("turn-settled", {"chatId": "c"})  # the lesson's next turn ends: still withheld
    await h.settle()
    assert h.starts == 0 and h.wake.pending("c") == ["steer_job_1_result"]
    h.consent.set("xai-subscription", False)  # another provider's switch changes nothing here
    await h.settle()
    assert h.starts == 0
    h.consent.set("chatgpt", True)  # consent permits delivery: the held result wakes the lesson
    await h.settle()
    assert h.starts == 1 and steer_ids(h.chats.records["c"].messages) == ["steer_job_1_result"]
    assert h.delivered() and h.wake.held == set()
    assert FileSettingsStore(tmp_path / "settings.json").load().background_consent.view() == {
        "chatgpt": True,
        "github-copilot-subscription": True,
        "xai-subscription": False,
    }


async def test_a_403_start_holds_ownership_until_consent_permits_delivery(tmp_path: Path) -> None:
    h = ConsentHarness(tmp_path)
    # consent was on at the gate, off by the time the turn composition looked (a race): 403
    h.refusals = [Refused("forbidden", "background_not_consented", "switched off")]
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.starts == 1 and "c" in h.wake.held and "c" not in h.wake.parked and h.sleeps == []
    assert h.wake.pending("c") == ["steer_job_1_result"]  # the registry still owns it
    h.wake.intake(h.owed_job())  # a repeated submission shares the held entry: no new attempt
    await h.settle()
    assert h.starts == 1
    h.consent.set("chatgpt", False)
    h.consent.set("chatgpt", True)
    await h.settle()
    assert h.starts == 2 and h.delivered()
    assert steer_ids(h.chats.records["c"].messages) == ["steer_job_1_result"]


async def test_a_live_turn_takes_no_steer_without_consent(tmp_path: Path) -> None:
    h = ConsentHarness(tmp_path)
    h.consent.set("chatgpt", False)
    h.running.add("c")
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.owed.take("c") == []  # "live agent and background consent?": no
    h.running.discard("c")
    h.events.emit("turn-settled", {"chatId": "c"})
    await h.settle()
    assert h.starts == 0 and "c" in h.wake.held
    h.consent.set("chatgpt", True)
    await h.settle()
    assert h.delivered()
    # with consent, the live turn takes it (a second job)
    h.running.add("c")
    h.wake.intake(h.owed_job("job_2"))
    assert [s["id"] for s in h.owed.take("c")] == ["steer_job_2_result"]


async def test_an_api_key_lesson_is_not_held_by_a_subscriptions_switch(tmp_path: Path) -> None:
    h = ConsentHarness(tmp_path)
    record = h.chats.records["c"]
    h.chats.records["c"] = record.model_copy(update={"model": ModelRef(provider="openai", model="gpt-5")})
    h.consent.set("chatgpt", False)
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.starts == 1 and h.delivered()


async def test_a_paused_lesson_waits_for_the_learners_next_turn(tmp_path: Path) -> None:
    h = ConsentHarness(tmp_path)
    record = h.chats.records["c"]
    stopped = {**msg("a2"), "metadata": {"interrupted": True}}
    h.chats.records["c"] = record.model_copy(
        update={"messages": [*record.messages, msg("u2", "user"), stopped]}
    )
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.starts == 0 and "c" not in h.wake.parked and "c" not in h.wake.held
    assert h.wake.pending("c") == ["steer_job_1_result"]
    # the learner writes again; that turn ends without taking the steer (it failed early)
    record = h.chats.records["c"]
    h.chats.records["c"] = record.model_copy(
        update={"messages": [*record.messages, msg("u3", "user"), msg("a3")]}
    )
    h.events.emit("turn-settled", {"chatId": "c"})
    await h.settle()
    assert h.starts == 1 and h.delivered()


async def test_consent_off_stops_a_running_idle_wake_never_a_learners_turn(tmp_path: Path) -> None:
    h = ConsentHarness(tmp_path)

    async def start_and_stay(chat_id: str, steers: list[dict[str, Any]]) -> object:
        result = await Harness.start(h, chat_id, steers)
        h.running.add(chat_id)  # the wake's turn runs on
        return result

    h.wake.start_wake = start_and_stay
    h.wake.intake(h.owed_job())
    await h.settle()
    assert h.delivered() and h.wake.woken == {"c"}
    h.consent.set("chatgpt", False)
    await h.settle()
    assert h.stopped == ["c"]  # the idle wake on the withdrawn subscription is stopped
    h.running.discard("c")
    h.events.emit("turn-settled", {"chatId": "c"})
    assert h.wake.woken == set()
    # a learner's own turn on the same subscription is foreground: switching off leaves it running
    h.consent.set("chatgpt", True)
    h.running.add("c")
    h.consent.set("chatgpt", False)
    await h.settle()
    assert h.stopped == ["c"]


async def test_unreadable_settings_never_fail_a_turn_and_park_the_wake_quietly(tmp_path: Path) -> None:
    h = ConsentHarness(tmp_path)
    (tmp_path / "settings.json").write_text("{not json")
    h.running.add("c")
    h.wake.intake(h.owed_job())
    assert h.owed.take("c") == []  # the live turn goes on without the steer; nothing raised
    h.running.discard("c")
    h.events.emit("turn-settled", {"chatId": "c"})
    await h.settle()
    assert h.starts == 0 and "c" in h.wake.parked and h.wake.pending("c") == ["steer_job_1_result"]
    (tmp_path / "settings.json").write_text("{}")
    h.events.emit("turn-settled", {"chatId": "c"})  # the next turn: tried again
    await h.settle()
    assert h.starts == 1 and h.delivered()
