"""The learner's side of a turn: what is accepted into the record, and how (seed §5).

Pure functions over the record's message list. The turn service calls them before the model
starts (write-ahead) and after it ends (the reply).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.core.contracts.chat import DEFAULT_TITLE, MAX_MESSAGE_CHARS, ChatRequest, text_of

JsonObj = dict[str, Any]
TITLE_CHARS = 60


@dataclass(frozen=True)
class TurnRejected(Exception):
    """A turn request that cannot be accepted. Nothing was written.

    Attributes:
        status: the HTTP status to answer (400, 404, 409, 503).
        code: a stable error code, e.g. "bad_request", "turn_running".
        detail: a sentence saying what was wrong and what to do.
    """

    status: int
    code: str
    detail: str

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}"


def learner_message(request: ChatRequest) -> JsonObj:
    """The learner's new message: the last message of the request, validated.

    Raises:
        TurnRejected(400): the last message is not a user message, has no text, or is too long.
    """
    message = request.messages[-1]
    if message.role != "user":
        raise TurnRejected(
            400, "bad_request", f"the last message must be the learner's (role 'user'), got '{message.role}'"
        )
    text = text_of(message)
    if not text.strip():
        raise TurnRejected(400, "bad_request", "the learner's message has no text; type something and send")
    if len(text) > MAX_MESSAGE_CHARS:
        raise TurnRejected(
            400, "bad_request", f"the message is {len(text)} characters; the limit is {MAX_MESSAGE_CHARS}"
        )
    return message.model_dump(mode="json", exclude_none=True)


def upsert_message(messages: list[JsonObj], message: JsonObj) -> list[JsonObj]:
    """A new list with `message` replacing the one with the same id, or appended.

    Idempotent: re-posting the same message never duplicates it.
    """
    out = list(messages)
    for index, existing in enumerate(out):
        if existing.get("id") == message.get("id"):
            out[index] = message
            return out
    out.append(message)
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
