"""A lesson's record (UIMessages) as pydantic-ai messages, each message converted once and kept
while it stays the same (issue 15); a message the Vercel AI adapter cannot load is loaded without
the parts that fail, so no record can stop its lesson (issue 26).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from pydantic_ai.ui.vercel_ai.request_types import UIMessage

log = logging.getLogger("lh.turn")


class ModelHistory:
    """One lesson's UIMessages converted to pydantic-ai messages, each once (issue 15).

    Keyed by message id, valid while the message is the very same object (records are immutable
    values; `core.transcript.for_model` copies only messages it changes) or an equal one (the
    view's context message is made anew each turn, and changes only when the summary or the
    window does). Each turn gets fresh
    message objects with fresh part lists, so a run never changes what the cache holds.
    A system prompt a record's message carries (a `system` UIMessage) is left out, as the
    adapter's server-owned system prompt did (`stream_turn`): the agents' instructions are theirs."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[dict[str, Any], list[ModelMessage]]] = {}

    def convert(self, messages: list[dict[str, Any]]) -> list[ModelMessage]:
        out: list[ModelMessage] = []
        kept: dict[str, tuple[dict[str, Any], list[ModelMessage]]] = {}
        for message in messages:
            key = str(message.get("id"))
            hit = self._cache.get(key)
            if hit is not None and hit[0] is not message and hit[0] == message:
                hit = (message, hit[1])  # a new object, the same content (the context message)
            elif hit is None or hit[0] is not message:
                hit = (message, _without_system_prompts(_load(message)))
            kept[key] = hit
            out.extend(_with_own_parts(m) for m in hit[1])
        self._cache = kept
        return out


def _load(message: dict[str, Any]) -> list[ModelMessage]:
    """One record message as pydantic-ai messages. A message the adapter cannot load (it raises
    for a part it does not support in that role) is loaded without the parts that fail alone, and
    the log names them; when it still fails, it is left out (logged). Never raises for a message
    that passed `ui_messages.usable_for_model`, so no record can stop its lesson (issue 26)."""
    try:
        return VercelAIAdapter.load_messages([UIMessage.model_validate(message)])
    except Exception as exc:
        problem = exc
    parts = message.get("parts") or []
    kept: list[Any] = []
    dropped: list[str] = []
    for index, part in enumerate(parts):
        try:
            VercelAIAdapter.load_messages([UIMessage.model_validate({**message, "parts": [part]})])
        except Exception:
            dropped.append(f"part {index} ({str(part.get('type'))[:60] if isinstance(part, dict) else '?'})")
        else:
            kept.append(part)
    try:
        loaded = VercelAIAdapter.load_messages([UIMessage.model_validate({**message, "parts": kept})])
    except Exception:
        log.warning("message %s left out for the model: it cannot be loaded (%r)", message.get("id"), problem)
        return []
    log.warning(
        "message %s: %s left out for the model: the adapter cannot load them (%r)",
        message.get("id"),
        ", ".join(dropped) or "no part",
        problem,
    )
    return loaded


def _without_system_prompts(messages: list[ModelMessage]) -> list[ModelMessage]:
    """`messages` without `SystemPromptPart`s (a request left empty is dropped): what
    `ReinjectSystemPrompt(replace_existing=True)` removed from the history of every request, done
    once per message instead of per run (issue 15)."""
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(isinstance(p, SystemPromptPart) for p in message.parts):
            parts = [p for p in message.parts if not isinstance(p, SystemPromptPart)]
            if not parts:
                continue
            message = replace(message, parts=parts)
        out.append(message)
    return out


def _with_own_parts(message: ModelMessage) -> ModelMessage:
    """A shallow copy of `message` with its own part list (what `dataclasses.replace(message,
    parts=list(message.parts))` gives, without re-running `__init__`: ~4x faster, and a
    lesson's view holds hundreds of messages per turn; issue 15)."""
    copied = object.__new__(type(message))
    copied.__dict__.update(message.__dict__)
    copied.parts = list(message.parts)  # type: ignore[assignment]
    return copied
