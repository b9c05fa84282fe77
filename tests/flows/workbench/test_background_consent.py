"""Background consent per subscription over real HTTP (issue 30 item 1; seed §5.1, §8.1;
decision 0030): `GET/PUT /api/background-consent`, kept in settings.json; a finished job's result
held (pending, owned by the wake pipeline, nothing sent) while the lesson's subscription has
consent off, through the gate or through the turn composition's 403, and delivered once consent
is switched on; a lesson the learner stopped is not woken."""

from __future__ import annotations

import json
import time
from typing import Any

from server.core.contracts.models import ModelRef
from server.core.workbench.wake import steer_ids
from tests.flows.conftest import Live
from tests.flows.workbench.test_workbench import Bench, delivered, settled, steer_texts, wait_for
from tests.flows.workbench.test_workbench import bench as bench  # the fixture, shared

ALL_ON = {"chatgpt": True, "github-copilot-subscription": True, "xai-subscription": True}


def consent(live: Live, provider: str, allowed: Any) -> Any:
    return live.client.put("/api/background-consent", json={"provider": provider, "allowed": allowed})


def test_consent_is_on_by_default_switched_per_provider_and_kept(live: Live) -> None:
    assert live.client.get("/api/background-consent").json() == ALL_ON
    response = consent(live, "xai-subscription", False)
    assert response.status_code == 200
    assert response.json() == {**ALL_ON, "xai-subscription": False}
    saved = json.loads((live.data / "settings.json").read_text())
    assert saved["backgroundConsent"]["xai-subscription"] is False
    assert saved["models"]["strong"]  # every other setting kept
    assert live.client.get("/api/background-consent").json() == {**ALL_ON, "xai-subscription": False}
    # bad input: a plain 400 naming what is wrong, nothing changed
    for body in (
        {"provider": "openai", "allowed": False},
        {"provider": "chatgpt", "allowed": "no"},
        {"provider": "chatgpt"},
        {"provider": "chatgpt", "allowed": False, "extra": 1},
    ):
        refused = live.client.put("/api/background-consent", json=body)
        assert refused.status_code == 400, body
        assert refused.json()["detail"]
    assert live.client.get("/api/background-consent").json() == {**ALL_ON, "xai-subscription": False}


def _model_saw_a_steer(bench: Bench) -> bool:
    """Whether any model request so far carried a finished job's steer (the lesson's naming may
    call the scripted model meanwhile; it carries none)."""
    return any(steer_texts(messages) for messages in list(bench.teacher.requests))


def _on_subscription(live: Live, chat_id: str) -> dict[str, Any]:
    """Put the lesson on the ChatGPT subscription; returns the scripted model it had."""
    store = live.services.stores.chats
    record = store.get(chat_id)
    assert record is not None
    scripted = record.model.model_dump(by_alias=True)
    store.save(record.model_copy(update={"model": ModelRef(provider="chatgpt", model="gpt-5")}))
    return scripted


def _back(live: Live, chat_id: str, model: dict[str, Any]) -> None:
    """The lesson back on its scripted model (the test has no subscription to run a turn on)."""
    store = live.services.stores.chats
    record = store.get(chat_id)
    assert record is not None
    store.save(record.model_copy(update={"model": ModelRef.model_validate(model)}))


def test_a_result_waits_for_consent_and_is_delivered_once_it_is_given(bench: Bench, live: Live) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    wait_for(lambda: settled(bench, chat_id))
    scripted = _on_subscription(live, chat_id)
    assert consent(live, "chatgpt", False).status_code == 200
    bench.release()
    wait_for(lambda: chat_id in live.services.wake.held)
    time.sleep(0.3)
    [job] = bench.jobs(chat_id)
    assert job["status"] == "done" and job["delivery"]["status"] == "pending"  # finished, not delivered
    assert live.services.wake.pending(chat_id) == [f"steer_{job['id']}_result"]  # ownership kept
    assert chat_id not in live.services.wake.parked  # a deferral, not a failure
    assert not _model_saw_a_steer(bench) and not steer_ids(bench.messages(chat_id))
    assert live.client.get(f"/api/chats/{chat_id}").json()["lastFailure"] is None
    _back(live, chat_id, scripted)
    assert consent(live, "chatgpt", True).status_code == 200  # consent permits delivery
    wait_for(lambda: delivered(bench, chat_id))
    wait_for(lambda: settled(bench, chat_id))
    assert steer_ids(bench.messages(chat_id)) == [f"steer_{job['id']}_result"]
    assert "demo is ready" in bench.messages(chat_id)[-1]["parts"][-1]["text"]


def test_the_turn_composition_answers_403_and_the_pipeline_holds(bench: Bench, live: Live) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    wait_for(lambda: settled(bench, chat_id))
    scripted = _on_subscription(live, chat_id)
    assert consent(live, "chatgpt", False).status_code == 200
    gate = live.services.wake.consent
    live.services.wake.consent = lambda c: None  # consent looked on at the gate (a race): the run decides
    bench.release()
    wait_for(lambda: chat_id in live.services.wake.held)
    [job] = bench.jobs(chat_id)
    assert job["delivery"]["status"] == "pending" and not _model_saw_a_steer(bench)
    assert not steer_ids(bench.messages(chat_id)) and not live.services.registry.running(chat_id)
    live.services.wake.consent = gate
    _back(live, chat_id, scripted)
    assert consent(live, "chatgpt", True).status_code == 200
    wait_for(lambda: delivered(bench, chat_id))
    assert len(steer_ids(bench.messages(chat_id))) == 1


def test_a_stopped_lesson_is_not_woken_until_the_learner_writes(bench: Bench, live: Live) -> None:
    chat_id = bench.lesson()
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    wait_for(lambda: settled(bench, chat_id))
    store = live.services.stores.chats
    record = store.get(chat_id)
    assert record is not None
    last = dict(record.messages[-1])
    last["metadata"] = {**(last.get("metadata") or {}), "interrupted": True}  # the learner pressed Stop
    store.save(record.model_copy(update={"messages": [*record.messages[:-1], last]}))
    bench.release()
    wait_for(lambda: bench.jobs(chat_id)[0]["status"] == "done")
    time.sleep(0.3)
    assert bench.jobs(chat_id)[0]["delivery"]["status"] == "pending"
    assert not _model_saw_a_steer(bench) and not steer_ids(bench.messages(chat_id))
    assert bench.say(chat_id, "Go on", "u2").status_code == 200  # the learner's next turn takes it
    wait_for(lambda: delivered(bench, chat_id))
    wait_for(lambda: settled(bench, chat_id))
    assert len(steer_ids(bench.messages(chat_id))) == 1
