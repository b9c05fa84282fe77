"""The learner's side of a turn: what is accepted into the record, and how (seed §5).

Pure functions over the record's message list. The turn service calls them before the model
starts (write-ahead) and after it ends (the reply).
"""

from __future__ import annotations

from typing import Any

from server.core.contracts.chat import (
    DEFAULT_TITLE,
    LEARNER_SHAPE,
    ChatRequest,
    LearnerMessage,
    learner_problem,
    text_of,
)
from server.core.contracts.jobs import is_steer
from server.core.refusals import Refused

JsonObj = dict[str, Any]
TITLE_CHARS = 60


def learner_message(request: ChatRequest) -> JsonObj:
    """The learner's new message: the last message of the request, checked against the one
    definition of what a learner may send (`contracts.chat.LearnerMessage`: text parts, and images
    as data URLs; not blank, at most MAX_MESSAGE_CHARS characters).

    Raises:
        Refused("invalid", bad_request): not a user message, or not of that shape; the detail names
            the first problem (the part by index and type) and says what may be sent.
    """
    message = request.messages[-1]
    if message.role != "user":
        raise Refused(
            "invalid",
            "bad_request",
            f"the last message must be the learner's (role 'user'), got '{message.role}'",
        )
    raw = message.model_dump(mode="python")
    problem = learner_problem(raw)
    if problem is not None:
        raise Refused("invalid", "bad_request", refusal_of(problem))
    return LearnerMessage.model_validate(raw).model_dump(mode="json", by_alias=True, exclude_none=True)


def refusal_of(problem: str) -> str:
    """The 400 detail of a refused learner message: its problem, what may be sent, and that
    nothing was written."""
    return f"the message cannot be taken ({problem}): {LEARNER_SHAPE}; nothing was saved, send it again"


class MessageIndex:
    """Where each message id last sits in one lesson's message list, so accepting a message and
    placing the reply cost what is new rather than a scan of the record (issue 15).

    It follows one list object at a time (records are immutable values: a list, once made, is
    never changed). Asked about another list, it is rebuilt from that one (one pass); `moved`
    carries it to a list made from the followed one by replacing messages in place (same ids)
    and appending."""

    def __init__(self) -> None:
        self._messages: list[JsonObj] | None = None
        self._at: dict[Any, int] = {}

    def position(self, messages: list[JsonObj], message_id: Any) -> int | None:
        """The index of the last message with `message_id` in `messages`, or None."""
        try:
            if self._messages is not messages:
                self._messages = None
                self._at = {m.get("id"): i for i, m in enumerate(messages)}
                self._messages = messages
            return self._at.get(message_id)
        except TypeError:  # an unhashable id (a hand-edited record): scanned instead
            return _position(messages, message_id)

    def moved(self, old: list[JsonObj], new: list[JsonObj]) -> None:
        """`new` is `old` with messages replaced by ones of the same ids and others appended: the
        index follows `new` (anything else, e.g. a cut, leaves it to be rebuilt)."""
        if self._messages is not old or len(new) < len(old):
            self._messages = None
            return
        try:
            for index in range(len(old), len(new)):
                self._at[new[index].get("id")] = index
        except TypeError:
            self._messages = None
            return
        self._messages = new


def accept_learner_message(
    messages: list[JsonObj], message: JsonObj, *, regenerate: bool = False, index: MessageIndex | None = None
) -> list[JsonObj]:
    """The record's messages with the learner's new message accepted (write-ahead).

    A message already in the record is accepted again only when it is the last one (its earlier
    turn produced no reply: a retry), or on a regenerate when only assistant replies follow it
    (they are replaced by the new reply). Otherwise re-posting an answered message is refused.
    `index`: the lesson's `MessageIndex` (then it follows the list returned).

    A client id never replaces a message of another role, nor a finished job's result (a steer,
    a user-role message the server wrote), unless it is that very message again (a retry).

    Raises:
        Refused("conflict", already_answered): the message was already answered.
        Refused("conflict", id_taken): the id is that of a message that is not the learner's.
    """
    wanted = message.get("id")
    record = messages
    # the index, else one scan from the end, where a retried message is (issue 15)
    at = index.position(messages, wanted) if index is not None else _position(messages, wanted)
    if at is not None and not _learners(messages[at], message):
        raise Refused(
            "conflict",
            "id_taken",
            f"the message id {str(wanted)[:80]!r} belongs to a message that is not the learner's "
            "(the teacher's reply, or a finished job's result); nothing was changed. Send your "
            "message with a new id (reload the session if the page is out of date)",
        )
    if regenerate and at is not None and all(m.get("role") == "assistant" for m in messages[at + 1 :]):
        messages = messages[: at + 1]
    if at is not None and at != len(messages) - 1:
        raise Refused(
            "conflict",
            "already_answered",
            "this message was already answered; reload the session to see the current transcript",
        )
    out = list(messages)
    if at is None:
        out.append(message)
    else:
        out[at] = message
    if index is not None:
        index.moved(record, out)
    return out


def _learners(stored: JsonObj, message: JsonObj) -> bool:
    """Whether `message` may take the place of the record's `stored` message of the same id: a
    learner message only, and a steer only by itself (the retry of a wake that failed)."""
    if stored.get("role") != message.get("role"):
        return False
    return not is_steer(stored) or stored == message


def _position(messages: list[JsonObj], message_id: Any) -> int | None:
    """The index of the last message with `message_id`, or None."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("id") == message_id:
            return index
    return None


def upsert_message(
    messages: list[JsonObj], message: JsonObj, index: MessageIndex | None = None
) -> list[JsonObj]:
    """A new list with `message` replacing the one with the same id, or appended.

    Idempotent: re-posting the same message never duplicates it. `index`: the lesson's
    `MessageIndex` (then it follows the list returned).
    """
    out = list(messages)
    wanted = message.get("id")
    at = index.position(messages, wanted) if index is not None else _position(messages, wanted)
    if at is None:
        out.append(message)
    else:
        out[at] = message
    if index is not None:
        index.moved(messages, out)
    return out


def title_after(title: str, messages: list[JsonObj]) -> str:
    """The session title once a learner message exists: the default is replaced by the first
    learner message's first line (at most 60 characters); a chosen title is kept."""
    if title != DEFAULT_TITLE:
        return title
    for message in messages:
        if message.get("role") == "user":
            first_line = text_of(message).strip().splitlines()[0] if text_of(message).strip() else ""
            if first_line:
                return first_line if len(first_line) <= TITLE_CHARS else first_line[: TITLE_CHARS - 1] + "…"
    return title
