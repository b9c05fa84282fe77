"""The lesson turn: run the teacher agent over the record and stream UI message chunks.

The record (a list of UIMessages) is the only truth: the model's message history is rebuilt from
it on every turn (seed §5), through pydantic-ai's Vercel AI adapter, which also turns the agent's
events into AI SDK v6 UI message stream chunks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

import orjson
from pydantic_ai import Agent
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from pydantic_ai.ui.vercel_ai.request_types import SubmitMessage, UIMessage

from server.agent.prompts import load_prompt

SDK_VERSION: Literal[6] = 6
"""The AI SDK major the browser speaks (frontend pins ai@6 / @ai-sdk/react@3)."""


def build_teacher(model: Model, *, max_tokens: int | None = None) -> Agent[None, str]:
    """The teacher agent for one turn, built fresh each turn (stateless, seed §5).

    Args:
        model: the session's model.
        max_tokens: cap on reply tokens (the offline demo model rambles without one).
    """
    settings = ModelSettings(max_tokens=max_tokens) if max_tokens else None
    return Agent(model, instructions=load_prompt("teacher"), name="teacher", model_settings=settings)


async def stream_turn(
    agent: Agent[None, str],
    *,
    chat_id: str,
    messages: list[dict[str, Any]],
    reply_id: str,
) -> AsyncIterator[dict[str, Any]]:
    """Run one turn and yield UI message stream chunks as JSON objects.

    Args:
        agent: the role's agent (teacher).
        chat_id: the session id.
        messages: the whole record, oldest first, the learner's new message last.
        reply_id: the id the assistant reply gets (sent in the `start` chunk).

    Yields:
        Chunk dicts, e.g. `{"type": "text-delta", "id": ..., "delta": ...}`; the stream ends with
        `finish` (or `error`). The `[DONE]` terminator is not yielded: the transport adds it.
        Model failures arrive as an `error` chunk, never as an exception.
    """
    run_input = SubmitMessage(id=chat_id, messages=[UIMessage.model_validate(m) for m in messages])
    adapter = VercelAIAdapter(
        agent=agent, run_input=run_input, sdk_version=SDK_VERSION, server_message_id=reply_id
    )
    async for chunk in adapter.run_stream():
        encoded = chunk.encode(SDK_VERSION)
        if encoded == "[DONE]":
            continue
        yield orjson.loads(encoded)
