"""The lesson agents' own capabilities (pydantic-ai `AbstractCapability`): finished jobs' steers
delivered into a live run (`SteerInbox`, seed §5.1), and each model response made writable
before the agent acts on it (`NoLoneSurrogates`, issue 26 item 3).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart

from server.agent.classroom.tools import LessonDeps

log = logging.getLogger("lh.turn")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate in a Python string (a pair is one character in Python, never two)."""


class SteerInbox(AbstractCapability[LessonDeps]):
    """Delivers finished background jobs into a live run at its next model-request boundary
    (seed §5.1): each steer message's text is enqueued (pydantic-ai's native steering), so the
    model reads it in the request being prepared. Which steers were taken is the caller's to
    record (`LessonDeps.take_steers` is its intake); the run's stream then carries a
    `data-enqueued-messages` chunk for them."""

    async def before_model_request(self, ctx: RunContext[LessonDeps], request_context: Any) -> Any:
        take = ctx.deps.take_steers
        if take is None:
            return request_context
        for steer in take():
            text = next((p.get("text") for p in steer.get("parts", []) if p.get("type") == "text"), None)
            if text:
                ctx.enqueue(str(text))
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None


class NoLoneSurrogates(AbstractCapability[LessonDeps]):
    """Makes each model response writable before the agent acts on it (issue 26, item 3).

    A provider may send a lone surrogate (`\\udc80` JSON-escaped in its stream, decoded into a
    Python string); no JSON encoder writes one, so the reply could be neither streamed, saved, nor
    sent back to the provider. In a tool call's arguments each one becomes its JSON escape again
    (`\\udc80` as six characters), which the arguments' validation refuses ("lone leading
    surrogate in hex escape"): the call goes back to the model as a retry, like any call it got
    wrong. In text and thinking each becomes U+FFFD. What streamed before the response ended is
    made writable where the turn encodes it (`services.classroom.turn_stream.written`)."""

    async def after_model_request(
        self, ctx: RunContext[LessonDeps], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                if isinstance(part.args, str) and _LONE_SURROGATE.search(part.args):
                    part.args = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", part.args)
                elif isinstance(part.args, dict) and _LONE_SURROGATE.search(json.dumps(part.args)):
                    part.args = json.dumps(part.args)  # ASCII: each lone surrogate as its escape
                else:
                    continue
                log.warning("a %s call held a lone surrogate; it goes back to the model", part.tool_name)
            elif isinstance(part, TextPart | ThinkingPart) and _LONE_SURROGATE.search(part.content):
                part.content = _LONE_SURROGATE.sub("\ufffd", part.content)
        return response

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
