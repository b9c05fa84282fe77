"""Session (chat) records and the turn request (seed §5, Classroom).

A record is `data/chats/<id>.json`: metadata plus `messages`, a list of AI SDK UIMessages kept
as plain JSON objects (`{"id", "role", "parts": [...], "metadata"?}`) so that the browser's
`useChat` can load them verbatim.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from server.core.contracts.models import Camel, ModelRef

CHAT_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Session ids are file names: letters, digits, '-' and '_' only, 1-64 chars."""

MAX_MESSAGE_CHARS = 100_000
"""Largest learner message accepted, in characters."""

DEFAULT_TITLE = "New lesson"

TitleBy = Literal["auto", "model", "learner"]
"""Who set a session's title: `auto` (the default, or the first learner message's first line),
`model` (the naming side channel, once), `learner` (a title given at creation or a rename; never
overwritten)."""


class UIMessage(BaseModel):
    """An AI SDK UIMessage as stored and as sent by the browser.

    Parts are validated for shape (`type` present) only; their inner fields belong to the AI SDK.
    """

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1, max_length=200)
    role: Literal["system", "user", "assistant"]
    parts: list[dict[str, Any]]

    @field_validator("parts")
    @classmethod
    def _parts_have_type(cls, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for index, part in enumerate(parts):
            if not isinstance(part.get("type"), str):
                raise ValueError(f"part {index} has no string 'type'")
        return parts


class TurnUsage(Camel):
    """Usage of one agent run within a turn (seed: absence is not zero).

    Attributes:
        message_id: the assistant message the run wrote into.
        role: prober | teacher.
        provider / model: what ran.
        input_tokens / output_tokens: provider-reported tokens; None when not reported.
        requests: model requests made.
        cost_usd: in US dollars, priced with genai-prices; None when the price is unknown.
        at: ISO-8601 UTC time the run ended.
    """

    message_id: str
    role: str
    provider: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    requests: int = 0
    cost_usd: float | None = None
    at: str


class ChatRecord(Camel):
    """One session record (the canonical truth of a lesson).

    Attributes:
        id: the session id (see CHAT_ID_PATTERN).
        title: shown in the session list.
        created_at / updated_at: ISO-8601 UTC timestamps.
        title_by: who set the title (TitleBy); the naming side channel writes only over `auto`.
        model: the model stamped from the strong slot at creation.
        messages: UIMessages as JSON objects, oldest first.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    id: str
    title: str = DEFAULT_TITLE
    title_by: TitleBy = "auto"
    created_at: str
    updated_at: str
    model: ModelRef
    messages: list[dict[str, Any]] = Field(default_factory=list)
    usage: list[TurnUsage] = Field(default_factory=list)


class ChatSummary(Camel):
    """A row of the session list."""

    id: str
    title: str
    created_at: str
    updated_at: str
    model: ModelRef
    message_count: int
    running: bool = False


class CreateChat(Camel):
    """`POST /api/chats` body."""

    title: str | None = Field(default=None, max_length=200)


class RenameChat(Camel):
    """`PATCH /api/chats/{id}` body."""

    title: str = Field(min_length=1, max_length=200)

    @field_validator("title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("title must not be blank")
        return value.strip()


class ChatRequest(BaseModel):
    """`POST /api/chat` body, as `DefaultChatTransport` of `ai@6` sends it.

    Attributes:
        id: the session id.
        messages: the client's messages; only the last one (the learner's new message) is taken,
            everything before it comes from the record.
        trigger: submit-message (a new learner message) or regenerate-message.
    """

    model_config = ConfigDict(extra="allow")

    id: str
    messages: list[UIMessage] = Field(min_length=1)
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not CHAT_ID_PATTERN.match(value):
            raise ValueError("session id must be 1-64 letters, digits, '-' or '_'")
        return value


def text_of(message: dict[str, Any] | UIMessage) -> str:
    """The concatenated text parts of a UIMessage (other parts ignored)."""
    parts = message.parts if isinstance(message, UIMessage) else message.get("parts", [])
    return "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


def summarize(record: ChatRecord, *, running: bool = False) -> ChatSummary:
    """The session-list row of a record."""
    return ChatSummary(
        id=record.id,
        title=record.title,
        created_at=record.created_at,
        updated_at=record.updated_at,
        model=record.model,
        message_count=len(record.messages),
        running=running,
    )
