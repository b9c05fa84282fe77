"""The chunk stream of one lesson turn on its way to the browser (seed §5): read up to the first
content (`prime`: a model that fails before it is a 503), then relayed to the end (`relay`), each
chunk reworded where a learner would not understand it, folded into the reply the turn saves, and
written once as an SSE event of the AI SDK UI message stream.

The agents yield chunks as JSON-shaped dicts (`agent.classroom.lesson.stream_turn`, never
encoded there); errors become learner words here (`learner_facing`, `plain_tool_error`; a model's
failure is said by `core.machine_room.model_failures`); `sse_event` then encodes the chunk, the one
JSON encode it gets, and the liveness registry broadcasts those bytes as they are. Everything a
chunk passes through lives in this module, so the streaming path calls no other classroom module.
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
from server.core.machine_room.model_failures import (
    failure_in_text,
    learner_words,
    refusal_code,
    tool_error_sentence,
)
from server.core.refusals import Refused
from server.services.liveness import RunningTurn
from server.services.machine_room.models import ModelService

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


EARLY_END = (
    "the model's reply ended early (its stream closed without finishing); what arrived is kept, "
    "marked as cut short. Send your message again to continue"
)


APP_FAILURE = (
    "the turn failed because of an error in the app (the server log has the details); what arrived "
    "is kept, marked as cut short. Send your message again to continue"
)
"""What the learner reads of a turn that failed on the app's side after it opened (never the
exception's text: it names Python classes)."""

APP_FAILURE_BEFORE = (
    "the turn could not start because of an error in the app (the server log has the details); "
    "your message is saved. Send it again to continue"
)
"""The same, for a turn that failed before its first token (`lastFailure`)."""

_REPR = re.compile(
    r"<class '|<[A-Za-z_][\w.]* object at 0x|Traceback \(most recent|\b[A-Z]\w*(?:Error|Exception)\b"
    r"|\bpydantic(?:_core|_ai)?\.|\bserver\.\w+\."
)
"""Python's insides in an error text: a class or object repr, a traceback, an exception class's
name, a module path."""


def plain_or(text: str, instead: str) -> str:
    """`text`, unless it shows Python's insides (a class, an object repr, a traceback): then
    `instead` (the text goes to the log)."""
    if _REPR.search(text):
        log.warning("an error text not fit for a learner: %s", text[:2000])
        return instead
    return text


def learner_facing(chunk: dict[str, Any], offline: bool = False, before: bool = False) -> dict[str, Any]:
    """An `error` chunk in words a learner can act on (the framework's text stays in the log): the
    guarded model's failure as it is (one plain sentence), a known framework error said plainly,
    any other error (the app's own) as APP_FAILURE (`before` the first token: the sentence for a
    turn that did not start). Any other chunk is returned unchanged."""
    if chunk.get("type") != "error":
        return chunk
    failure = chunk.get("failure")
    chunk = {k: v for k, v in chunk.items() if k != "failure"}  # server-side only (`stream_turn`)
    text = str(chunk.get("errorText", ""))
    log.warning("turn error: %s", text)
    gave_up = failure_in_text(text, offline=offline)  # the framework's retries ran out
    if gave_up is not None:
        text = learner_words(gave_up)
    elif not failure and _REPR.search(text):
        # not the guarded model's failure (one plain sentence already) nor one known above, and
        # its text names Python's insides: the app's own error (issue 26)
        log.warning("an error not fit for a learner: %s", text[:2000])
        text = APP_FAILURE_BEFORE if before else APP_FAILURE
    return {**chunk, "errorText": text}


def plain_tool_error(chunk: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A `tool-input-error` / `tool-output-error` chunk whose errorText is pydantic's raw error list
    made one plain sentence (`tool_error_sentence`, trial finding 2); the raw text goes to the log.
    `names` maps tool call ids to tool names, learned from the turn's earlier chunks (updated here).
    Any other chunk is returned unchanged."""
    call_id = str(chunk.get("toolCallId", ""))
    if chunk.get("toolName"):
        names[call_id] = str(chunk["toolName"])
    if chunk.get("type") not in ("tool-input-error", "tool-output-error"):
        return chunk
    raw = str(chunk.get("errorText") or "")
    text = tool_error_sentence(names.get(call_id), raw)
    if text == raw:
        return chunk
    log.info("tool call %s failed: %s", call_id, raw[:2000])
    return {**chunk, "errorText": text}


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
    the same (`agent.classroom.capabilities.NoLoneSurrogates`), so it goes back to the model as a retry."""
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


async def prime(chunks: Chunks, state: TurnState, models: ModelService) -> list[bytes]:
    """Read `chunks` up to the first content chunk, folding each; returns their SSE events. A model
    error before any content is a 503, not a stream: raises Refused(unavailable) in learner words
    (the offline model's crash explained, a retry delay kept) after closing `chunks`."""
    preamble: list[bytes] = []
    async for chunk in chunks:
        if chunk.get("type") == "error":
            state.fold.add(chunk)
            await close(chunks)
            crash = (
                await models.offline_failure(state.started, chunk.get("failure")) if state.offline else None
            )
            if crash:
                raise Refused(
                    "unavailable",
                    "model_unreachable",
                    f"{crash}. Send your message again in a moment, or add an API key in Settings "
                    "to use a hosted model.",
                )
            # the guarded engine's errors are one plain sentence that says what to do
            # (server.core.machine_room.model_failures); nothing is appended to it
            said = str(learner_facing(chunk, state.offline, before=True).get("errorText") or "")
            if said == APP_FAILURE_BEFORE:  # the app's own error, not the model's
                raise Refused("unavailable", "model_unreachable", said)
            text = plain_or(said or "the model gave no reason", APP_FAILURE_BEFORE).strip().rstrip(".")
            failure = chunk.get("failure") or {}
            wait = failure.get("retryAfterS")
            raise Refused(
                "unavailable",
                refusal_code(failure.get("kind")),
                f"the model failed before replying: {text}",
                float(wait) if isinstance(wait, int | float) else None,
            )
        chunk, line = sse_event(chunk)
        state.fold.add(chunk)
        preamble.append(line)
        if chunk.get("type") not in PREAMBLE_TYPES:
            break
    return preamble


async def relay(
    turn: RunningTurn, state: TurnState, preamble: list[bytes], chunks: Chunks, models: ModelService
) -> None:
    """Publish the `preamble` events, then the rest of `chunks` to their end, each in learner words,
    folded and encoded once; a failure of the stream (a refusal after the handoff, the app's own
    error, an end without `finish`) becomes an `error` chunk the learner sees live and finds again
    in the saved reply. Never raises but for cancellation; afterwards the fold is marked
    interrupted unless it finished."""
    for line in preamble:
        turn.publish(line)
    tool_names: dict[str, str] = {}
    try:
        async for chunk in chunks:
            chunk = plain_tool_error(chunk, tool_names)
            crash = (
                await models.offline_failure(state.started, chunk.get("failure"))
                if chunk.get("type") == "error" and state.offline
                else None
            )
            if crash:
                chunk = {"type": "error", "errorText": f"{crash}. Send your message again in a moment."}
            else:
                chunk = learner_facing(chunk, state.offline)  # saved as the learner read it
            chunk, line = sse_event(chunk)  # the chunk's one encode
            state.fold.add(chunk)
            turn.publish(line)
    except Refused as exc:  # e.g. the teacher's model cannot run after the handoff
        fail(turn, state, exc.detail)
    except Exception:
        log.exception("turn of session %s failed", state.chat_id)
        fail(turn, state, APP_FAILURE)
    if not state.fold.finished and state.fold.error_text is None:
        # the stream ended without `finish` and without an error: say so, live and saved
        fail(turn, state, EARLY_END)
    if not state.fold.finished:
        state.fold.interrupted = True


def fail(turn: RunningTurn, state: TurnState, text: str) -> None:
    """An error the learner sees live and finds again in the saved reply (`metadata.error`)."""
    chunk, line = sse_event({"type": "error", "errorText": text})
    state.fold.add(chunk)
    turn.publish(line)
