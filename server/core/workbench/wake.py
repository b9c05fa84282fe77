"""The wake pipeline's pure rules (seed §5.1): when a finished job's steer may enter a lesson,
where it goes in the record, and when its delivery is complete.

Delivery is complete only when the steer message (its deterministic id) is in the saved record;
a stream that showed it, or an HTTP 200, is not delivery. No steer id ever appears twice in a
record: every placement here skips ids already present.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from server.core.contracts.jobs import JobRecord, is_steer
from server.core.contracts.models import BackgroundConsent
from server.core.transcript import awaits_continuation, pending_questions

JsonObj = dict[str, Any]

BACKOFF_S: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0)
"""Seconds between idle-wake attempts refused with 409 (a turn began meanwhile): the existing
client backoff 500 -> 1000 -> 2000 -> 5000 ms, then 5000 ms again."""


def backoff_delay(attempt: int) -> float:
    """Seconds to wait before idle-wake attempt `attempt` + 1 (0-based), after a 409."""
    return BACKOFF_S[min(max(attempt, 0), len(BACKOFF_S) - 1)]


def message_ids(messages: list[JsonObj]) -> set[str]:
    return {str(m.get("id")) for m in messages}


def delivered(messages: list[JsonObj], steer_id: str) -> bool:
    """Whether the steer's marker (its message) is in the saved record."""
    return steer_id in message_ids(messages)


def pending_delivery(job: JobRecord) -> bool:
    """Whether a job still owes its lesson a steer."""
    return job.delivery is not None and job.delivery.status == "pending"


def idle_wake_ready(messages: list[JsonObj]) -> bool:
    """Whether a turn-free lesson may be woken now: no question awaits the learner (a result that
    arrives while a quiz is pending waits for the answer, and goes into that answer's turn), and
    the lesson is not waiting for a continuation of answers already saved."""
    return not pending_questions(messages) and not awaits_continuation(messages)


def paused(messages: list[JsonObj]) -> bool:
    """Whether the lesson is paused by the learner (seed §5.1, the gate's "unpaused"): its last
    message is a teacher reply cut short without an error (`metadata.interrupted` and no
    `metadata.error`: the learner pressed Stop, or the app closed mid-reply), or the learner's own
    message with no reply after it (Stop before the first word, or a turn that failed before
    its first word: the learner retries or writes again). A paused lesson is not woken by a
    finished job: the result waits for the learner's next turn, which takes it. A reply cut short
    by a model error is not a pause; nor is a steer message left last."""
    if not messages:
        return False
    last = messages[-1]
    if last.get("role") == "user":
        return not is_steer(last)
    if last.get("role") != "assistant":
        return False
    meta = last.get("metadata")
    return isinstance(meta, dict) and meta.get("interrupted") is True and not meta.get("error")


def background_allowed(providers: Iterable[str], consent: BackgroundConsent) -> bool:
    """Whether work the learner did not start may run on every one of `providers` (the models
    a lesson's turn may call: its own and its prober/teacher overrides). Only subscriptions ask
    consent (seed §8.1: independent per provider, default ON)."""
    return all(consent.allows(p) for p in providers)


def withheld(providers: Iterable[str], consent: BackgroundConsent) -> list[str]:
    """The subscriptions among `providers` whose background consent is off (sorted, once each)."""
    return sorted({p for p in providers if not consent.allows(p)})


def place_steers(
    messages: list[JsonObj], steers: list[JsonObj], *, before: str | None = None
) -> list[JsonObj]:
    """The record's messages with steer messages placed: before the message with id `before`
    (the reply of the live turn that received them at a model-request boundary) when it is in the
    record, else at the end. Steers already in the record, or repeated in `steers`, are skipped
    (exactly once). The input list is not changed."""
    present = message_ids(messages)
    new: list[JsonObj] = []
    for steer in steers:
        sid = str(steer.get("id"))
        if sid in present:
            continue
        present.add(sid)
        new.append(steer)
    if not new:
        return list(messages)
    ids = [m.get("id") for m in messages]
    at = ids.index(before) if before is not None and before in ids else len(messages)
    return [*messages[:at], *new, *messages[at:]]


def place_steers_in_answer(
    messages: list[JsonObj], steers: list[JsonObj], *, reply: JsonObj, answered: JsonObj, tail_id: str
) -> list[JsonObj]:
    """An answer turn's record with the steers it took placed just after the answered question
    (where the model read them: the answer's tool result, then the steer text).

    `reply` (in `messages`) continues `answered`, the assistant message whose question the learner
    answered: it is split back into `answered` as it was, the new steers, and the reply's new parts
    as their own assistant message with id `tail_id` (dropped when nothing but step markers is
    new). Steers already in the record are skipped (exactly once); with none left, or `reply` not
    in `messages`, the messages are returned as they are. The input list is not changed."""
    present = message_ids(messages)
    new: list[JsonObj] = []
    for steer in steers:
        sid = str(steer.get("id"))
        if sid not in present:
            present.add(sid)
            new.append(steer)
    ids = [m.get("id") for m in messages]
    if not new or reply.get("id") not in ids:
        return list(messages)
    at = ids.index(reply.get("id"))
    rest = list(reply.get("parts", []))[len(answered.get("parts", [])) :]
    tail = (
        [{**reply, "id": tail_id, "parts": rest}] if any(p.get("type") != "step-start" for p in rest) else []
    )
    return [*messages[:at], answered, *new, *tail, *messages[at + 1 :]]


def steer_ids(messages: list[JsonObj]) -> list[str]:
    """The ids of the steer messages in a record, in order (for checking exactly-once)."""
    return [str(m.get("id")) for m in messages if is_steer(m)]
