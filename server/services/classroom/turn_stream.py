"""The chunk stream of one lesson turn on its way to the browser (seed §5): what the turn
accumulates, and each chunk written once as an SSE event of the AI SDK UI message stream.

The agents yield chunks as JSON-shaped dicts (`agent.classroom.lesson.stream_turn`, never
encoded there); the turn rewords a few of them (errors in learner words, steers shown as
artifacts) and folds each into the reply it saves; `sse_event` then encodes it, the one JSON
encode a chunk gets, and the liveness registry broadcasts those bytes as they are.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pydantic_core

from server.core.classroom.ui_stream import AssistantMessageFold
from server.core.contracts.chat import TurnUsage
from server.core.contracts.jobs import ARTIFACT_PART

log = logging.getLogger("lh.turn")

STREAM_HEADERS = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""Headers of the AI SDK UI message stream (SSE)."""

DONE = b"data: [DONE]\n\n"
"""The stream's terminator, the last event of every turn."""

PREAMBLE_TYPES = {"start", "start-step", "message-metadata"}
"""Chunks before a reply's first content: a turn reads past them before it answers (`_prime`)."""

Chunks = AsyncIterator[dict[str, Any]]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate in a Python string (a pair is one character in Python, never two)."""


@dataclass
class TurnState:
    """What one turn accumulates: the reply being folded and each agent run's usage."""

    chat_id: str
    fold: AssistantMessageFold
    usage: list[TurnUsage] = field(default_factory=list)
    offline: bool = False
    """Whether the role running now runs on the offline model (its crashes are explained)."""
    started: float = field(default_factory=time.monotonic)
    """`time.monotonic()` when the turn began: crashes of the offline model since then are its own."""
    steers: list[dict[str, Any]] = field(default_factory=list)
    """Steer messages the live run took at its model-request boundaries (seed §5.1): saved into
    the record just before this turn's reply, which is what completes their delivery."""
    announced: int = 0
    """How many of `steers` the stream has shown (as `data-subagent-artifact` chunks)."""
    continued: dict[str, Any] | None = None
    """The answered assistant message this turn's reply continues (an answer turn), as saved."""


def sse_event(chunk: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """`chunk` as the browser reads it and its SSE event (`data: <JSON>\\n\\n`, UTF-8): one
    orjson encode. A chunk orjson cannot write comes back as `written` makes it (so fold and
    save what the event carries). Raises orjson.JSONEncodeError for a value no JSON holds."""
    try:
        return chunk, b"data: " + orjson.dumps(chunk) + b"\n\n"
    except orjson.JSONEncodeError:
        chunk = written(chunk)
        return chunk, b"data: " + orjson.dumps(chunk) + b"\n\n"


def sse(chunk: dict[str, Any]) -> bytes:
    """The SSE event of a chunk the turn makes itself (see `sse_event`)."""
    return sse_event(chunk)[1]


def written(chunk: dict[str, Any]) -> dict[str, Any]:
    """What a JSON round trip through pydantic's encoder makes of a chunk orjson cannot write
    (what the agents' chunks went through before they were encoded once): an integer past 64 bits
    read back as a float, and each lone surrogate made U+FFFD (logged). A model can send a lone
    surrogate (`\\udc80`, JSON-escaped by its provider, decoded into the text or a tool call's
    arguments): no JSON encoder writes one, so the chunk could neither be streamed nor saved
    (issue 26, item 3); a tool call whose arguments held one is refused by their validation all
    the same (`lesson.NoLoneSurrogates`), so it goes back to the model as a retry."""
    try:
        return dict(orjson.loads(pydantic_core.to_json(chunk)))
    except pydantic_core.PydanticSerializationError:
        log.warning("a %s chunk from the model held a lone surrogate; replaced by U+FFFD", chunk.get("type"))
        return dict(orjson.loads(pydantic_core.to_json(_without_lone_surrogates(chunk))))


def _without_lone_surrogates(value: Any) -> Any:
    """`value` (JSON-shaped) with every lone surrogate in its strings made U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    return value


def artifact_chunk(steer: dict[str, Any]) -> dict[str, Any]:
    """The live stream's view of a steer delivered into the running reply (the browser draws the
    artifact at once; the saved record holds the steer message itself)."""
    part: dict[str, Any] = next((p for p in steer.get("parts", []) if p.get("type") == ARTIFACT_PART), {})
    return {"type": ARTIFACT_PART, "id": steer.get("id"), "data": part.get("data")}


async def close(chunks: Chunks) -> None:
    """Close the chunk stream (its agent run ends); never raises."""
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except (Exception, asyncio.CancelledError):  # closing must not mask the real outcome
            log.debug("closing the chunk stream failed", exc_info=True)
