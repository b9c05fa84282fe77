"""What a lesson turn takes from the learner and writes into the lesson's record (seed §5): the
request checked whole before anything is written, the learner's input placed into the
transcript, the write-ahead of that input, and the reply with its usage and steers.

The writes are one `ChatStore.update` each (the read and the write as one step, so a rename
saved meanwhile stays); they run in a worker thread (`TurnService` awaits them whole).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from server.agent.classroom.ui_messages import message_problem
from server.core.classroom.answers import apply_answers
from server.core.classroom.turns import (
    MessageIndex,
    accept_learner_message,
    learner_message,
    title_after,
    upsert_message,
)
from server.core.clock import Clock, NewId
from server.core.contracts.chat import ChatRecord, ChatRequest, plain_problems
from server.core.ports import ChatStore
from server.core.refusals import Refused
from server.core.transcript import awaits_continuation
from server.core.workbench.wake import place_steers, place_steers_in_answer
from server.services.classroom.turn_stream import TurnState

log = logging.getLogger("lh.turn")


# -- what the turn takes in ---------------------------------------------------------------------
def parse_request(body: bytes) -> ChatRequest:
    """Raises Refused(invalid) naming the first problems of a malformed body."""
    try:
        return ChatRequest.model_validate_json(body)
    except ValidationError as exc:
        problems = plain_problems(exc.errors(include_url=False))  # never a Python class's name
        raise Refused("invalid", "bad_request", f"malformed chat request ({problems})") from exc


def learner_input(
    request: ChatRequest, chats: ChatStore, index: Callable[[str], MessageIndex]
) -> dict[str, Any] | None:
    """The learner's new message (the request's last, a user message), checked whole before
    anything is written (issue 26, item 1); None when the input is the answers to pending
    questions (the last message is the assistant's, as `addToolOutput` leaves it), which are
    checked too. Raises Refused(invalid) naming what is wrong; nothing is written.
    `index`: the lesson's message index, by session id."""
    incoming = request.messages[-1]
    if incoming.role == "user":
        try:
            return learner_message(request)
        except Refused:
            return held_again(request, chats, index)  # a retry of what the record holds, or raise
    if incoming.role == "assistant":  # the answers to pending questions (`addToolOutput`)
        problem = message_problem(incoming.model_dump(mode="python"))
        if problem is not None:  # issue 10, defect 1
            raise Refused(
                "invalid",
                "bad_request",
                f"the message is malformed ({problem}); nothing was saved, send it again",
            )
        return None
    raise Refused(
        "invalid",
        "bad_request",
        f"the last message must be the learner's (role 'user') or the answered questions "
        f"(role 'assistant'), got '{incoming.role}'; nothing was saved",
    )


def held_again(
    request: ChatRequest, chats: ChatStore, index: Callable[[str], MessageIndex]
) -> dict[str, Any]:
    """The last message of `request` when it is, unchanged, a user message the record already
    holds (the browser's retry resends the record's own message: a steer of a wake that
    failed, or a message an older build took); else the refusal `learner_message` raised."""
    raw = request.messages[-1].model_dump(mode="python")
    record = chats.get(request.id)
    if record is not None:
        at = index(record.id).position(record.messages, raw.get("id"))
        if at is not None and record.messages[at] == raw:
            return record.messages[at]
    return learner_message(request)  # raises its Refused again


def with_input(
    record: ChatRecord, request: ChatRequest, message: dict[str, Any] | None, index: MessageIndex
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The transcript with the learner's input placed, and the answered assistant message the
    reply continues (None for a new message). Raises Refused as `accept_learner_message` and
    `apply_answers` do."""
    if message is not None:
        regenerate = request.trigger == "regenerate-message"
        return accept_learner_message(record.messages, message, regenerate=regenerate, index=index), None
    incoming = request.messages[-1].model_dump(mode="json", exclude_none=True)
    messages = answers_or_continuation(record.messages, incoming)
    index.moved(record.messages, messages)  # the last one replaced
    return messages, messages[-1]


def answers_or_continuation(messages: list[dict[str, Any]], incoming: dict[str, Any]) -> list[dict[str, Any]]:
    """The learner's answers applied; or, when they were saved but the teacher never went on
    (`awaits_continuation`), the record as it is, to be continued. Raises Refused as
    `apply_answers` does."""
    try:
        return apply_answers(messages, incoming)
    except Refused as exc:
        same = bool(messages) and messages[-1].get("id") == incoming.get("id")
        if exc.code == "not_pending" and same and awaits_continuation(messages):
            return list(messages)  # the record's own messages, never mutated (issue 15)
        raise


# -- what the turn writes -----------------------------------------------------------------------
def write_ahead(
    chats: ChatStore, chat_id: str, messages: list[dict[str, Any]], clock: Clock
) -> tuple[ChatRecord | None, bool]:
    """Write-ahead: the learner's input is durable before any model starts. Written over the
    record as it is now, not as the turn first read it: resolving the model may take seconds (the
    offline model starting), and a rename made meanwhile must stay (issue 12, item 6); the read and
    the write are one `ChatStore.update`, with the title the first message gives. Only this turn
    writes messages while it holds the session's claim. Returns the saved record (None when the
    session is gone) and whether the title changed. Raises as `ChatStore.update` does (OSError)."""
    renamed = False

    def change(fresh: ChatRecord) -> ChatRecord:
        nonlocal renamed
        title = title_after(fresh.title, messages)
        renamed = title != fresh.title
        return fresh.model_copy(update={"messages": messages, "updated_at": clock(), "title": title})

    return chats.update(chat_id, change), renamed


def persist_reply(
    chats: ChatStore,
    state: TurnState,
    index: MessageIndex,
    clock: Clock,
    new_id: NewId,
) -> ChatRecord | None:
    """Canonical write of the reply and its usage (one `ChatStore.update`: a rename saved
    meanwhile stays); raises loudly (OSError, StoreCorrupt). Returns the saved record (None
    when the session vanished). Thread-safe for the turn that owns `state` (a settled turn
    runs it in a worker thread)."""
    state.fold.saved = True
    reply = state.fold.message()
    stored = chats.update(
        state.chat_id, lambda record: with_reply(record, state, reply, index, clock, new_id)
    )
    if stored is None:  # the session was deleted mid-turn; nothing to attach the reply to
        log.warning("session %s vanished during its turn; reply dropped", state.chat_id)
    return stored


def with_reply(
    record: ChatRecord,
    state: TurnState,
    reply: dict[str, Any] | None,
    index: MessageIndex,
    clock: Clock,
    new_id: NewId,
) -> ChatRecord:
    """`record` with the turn's reply, steers and usage placed (`record` itself when there is
    nothing to write)."""
    if reply is None and not state.usage:
        return record
    update: dict[str, Any] = {"updated_at": clock(), "usage": [*record.usage, *state.usage]}
    if reply is not None:
        update["messages"] = upsert_message(record.messages, reply, index)
    if state.steers and reply is not None and state.continued is not None:
        # an answer turn: after the answered question, its continuation a message of its own
        update["messages"] = place_steers_in_answer(
            update["messages"],
            state.steers,
            reply=reply,
            answered=state.continued,
            tail_id=new_id("m_"),
        )
    elif state.steers:  # delivered into the live run: placed before its reply, each once
        update["messages"] = place_steers(
            update.get("messages", record.messages), state.steers, before=reply["id"] if reply else None
        )
    return record.model_copy(update=update)
