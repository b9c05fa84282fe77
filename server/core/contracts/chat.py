"""Session (chat) records and the turn request (seed §5, Classroom).

A record is `data/chats/<id>.json`: metadata plus `messages`, a list of AI SDK UIMessages kept
as plain JSON objects (`{"id", "role", "parts": [...], "metadata"?}`) so that the browser's
`useChat` can load them verbatim.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from server.core.contracts.models import Camel, ModelRef

CHAT_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Session ids are file names: letters, digits, '-' and '_' only, 1-64 chars."""

MAX_MESSAGE_CHARS = 100_000
"""Largest learner message accepted, in characters."""

MAX_FILE_BYTES = 1_000_000
"""Largest file a learner message may carry, in bytes once decoded (its base64 data URL is a third
larger; the whole `POST /api/chat` body is at most 2,000,000 bytes, `api.routes.chats`)."""

LEARNER_IMAGE_TYPES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
"""The file media types a learner message may carry, with the leading bytes each file must start
with: images, the only files the app reads (the transcript draws them, `MessageView.tsx`; the
model reads them as image input). The composer itself sends text only."""

LEARNER_SHAPE = (
    'a learner message holds text parts ({"type": "text", "text": ...}) and, optionally, '
    'images as file parts ({"type": "file", "mediaType", "url": a base64 data URL}; PNG, '
    f"JPEG, GIF or WebP, each at most {MAX_FILE_BYTES // 1_000_000} MB)"
)
"""What may be sent, in words (every refusal of a learner message ends with it)."""

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


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_lone_surrogate(value: str) -> str:
    found = _LONE_SURROGATE.search(value)
    if found:
        raise ValueError(
            f"holds a lone surrogate (\\u{ord(found.group()):04x}) at character {found.start()}, "
            "which is not text"
        )
    return value


class LearnerText(BaseModel):
    """A text part of a learner message: `{"type": "text", "text": str}` (what the composer's
    `sendMessage({text})` makes; `state: "done"` is tolerated)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["text"]
    text: str
    state: Literal["done"] | None = None

    _text = field_validator("text")(_no_lone_surrogate)


class LearnerFile(BaseModel):
    """An image a learner message carries: `{"type": "file", "mediaType", "url", "filename"?}`.

    `url` is a base64 data URL of the same media type (`data:image/png;base64,...`) whose bytes
    decode to at most MAX_FILE_BYTES and start as that type's files do; `mediaType` is one of
    LEARNER_IMAGE_TYPES. No other URL (http, file, blob) is taken: the server reads nothing the
    message does not carry."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    type: Literal["file"]
    media_type: str = Field(alias="mediaType")
    url: str
    filename: str | None = Field(default=None, max_length=255)

    _filename = field_validator("filename")(lambda v: v if v is None else _no_lone_surrogate(v))

    @model_validator(mode="after")
    def _readable_image(self) -> LearnerFile:
        signatures = LEARNER_IMAGE_TYPES.get(self.media_type)
        if signatures is None:
            raise ValueError(f"the media type {self.media_type[:60]!r} is not one the app reads")
        prefix = f"data:{self.media_type};base64,"
        if not self.url.startswith(prefix):
            raise ValueError(f"the url must be a base64 data URL starting {prefix!r}")
        encoded = self.url[len(prefix) :]
        if len(encoded) > (MAX_FILE_BYTES + 2) // 3 * 4:
            raise ValueError(f"the file is larger than {MAX_FILE_BYTES:,} bytes")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the data URL is not valid base64") from None
        if not any(data.startswith(s) for s in signatures) or (
            self.media_type == "image/webp" and data[8:12] != b"WEBP"
        ):
            raise ValueError(f"the data is not a {self.media_type} file")
        return self


LearnerPart = Annotated[LearnerText | LearnerFile, Field(discriminator="type")]
"""A part a learner message may hold: the one definition of what the composer may send."""


class LearnerMessage(BaseModel):
    """A new learner message as `POST /api/chat` takes it: `{"id", "role": "user", "parts"}`.

    Text parts and images only (LearnerPart); no other field. The text, all text parts together,
    is at most MAX_MESSAGE_CHARS characters and not blank. Validate with `learner_problem`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1, max_length=200)
    role: Literal["user"]
    parts: list[LearnerPart] = Field(min_length=1)

    _id = field_validator("id")(_no_lone_surrogate)


_PLAIN = {
    "missing": "is missing",
    "extra_forbidden": "is not a field a learner message has",
    "model_type": "should be an object",
    "model_attributes_type": "should be an object",
    "dict_type": "should be an object",
    "list_type": "should be a list",
    "string_type": "should be a string",
    "string_unicode": "is not text (it holds a lone surrogate)",
}


def plain_problem(error: Any) -> str:
    """One pydantic error (an item of `ValidationError.errors()`) as `what: why` in words, never
    naming a Python class (a model's `model_type` error does: "... instance of UIMessage")."""
    loc = [str(p) for p in error.get("loc", ())]
    message = _PLAIN.get(error.get("type"), str(error.get("msg", "is invalid")).removeprefix("Value error, "))
    if "instance of" in message or "<class" in message:
        message = "is not valid"
    return f"{'.'.join(loc) or 'body'}: {message}"


def plain_problems(errors: Sequence[Any], limit: int = 3) -> str:
    """The first `limit` errors of a `ValidationError.errors()` list, each as `plain_problem`."""
    return "; ".join(plain_problem(e) for e in errors[:limit])


def learner_problem(message: dict[str, Any]) -> str | None:
    """None when `message` is a LearnerMessage, else its first problem in words, naming the part by
    index and type, e.g. "part 1 (reasoning) is not something a learner message may hold"."""
    try:
        LearnerMessage.model_validate(message)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = list(error["loc"])
        if len(loc) >= 2 and loc[0] == "parts" and isinstance(loc[1], int):
            raw = message["parts"][loc[1]]
            kind = raw.get("type") if isinstance(raw, dict) else None
            name = f"part {loc[1]}" + (f" ({kind[:60]})" if isinstance(kind, str) else "")
            if not isinstance(raw, dict):
                return f"{name} is not an object"
            if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
                return f"{name} is not something a learner message may hold"
            return f"{name}: " + plain_problem({**error, "loc": loc[3:]}).removeprefix("body: ")
        return plain_problem(error)
    text = text_of(message)
    if not text.strip():
        return "the message has no text; type something and send"
    if len(text) > MAX_MESSAGE_CHARS:
        return f"the message is {len(text):,} characters; the limit is {MAX_MESSAGE_CHARS:,}"
    return None


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
    """`POST /api/chats` body.

    Attributes:
        title: the lesson's title, or None for the automatic one.
        demo: the learner chose the offline demo model on the demo screen (issue 29, item 3); a
            lesson is stamped with the offline model only when this is true.
    """

    title: str | None = Field(default=None, max_length=200)
    demo: bool = False


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
