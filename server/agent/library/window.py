"""A windowed model's requests fit its context window (seed §6 budgets; the offline model's 4,096
tokens): a retry carries one failed answer, cut; each request's answer cap is what the window
leaves; THE GRAPH SO FAR is cut to what the first request leaves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext

from server.core.tokens import estimate_tokens

RETRY_ANSWER_TOKENS = 512
"""A windowed model's least answer room on a retry (its own tokens): a retry keeps the first
request whole and cuts the failed answer it carries back, and its retry prompt, to leave this."""
CUT_NOTE = "(cut to fit the model's context window)"


@dataclass(frozen=True)
class Window:
    """A model's known small context window (the offline model's).

    Attributes:
        tokens: the window, in the model's own tokens.
        per_estimate: the model's tokens per `estimate_tokens` token.
        answer_tokens: the answer cap of a first request (`max_tokens`, the model's tokens).
        overhead_tokens: what every request carries besides its messages (instructions, tool
            schema), estimated tokens.
    """

    tokens: int
    per_estimate: float
    answer_tokens: int
    overhead_tokens: int


def _part_tokens(part: object) -> int:
    if isinstance(part, UserPromptPart):
        return estimate_tokens(part.content) if isinstance(part.content, str) else 0
    if isinstance(part, TextPart):
        return estimate_tokens(part.content)
    if isinstance(part, ToolCallPart):
        return estimate_tokens(part.tool_name + part.args_as_json_str())
    if isinstance(part, RetryPromptPart):
        return estimate_tokens(part.model_response())
    if isinstance(part, ToolReturnPart):
        return estimate_tokens(part.model_response_str())
    return 0


def messages_tokens(messages: Sequence[ModelMessage]) -> int:
    """The estimated tokens (`estimate_tokens`) of the messages' texts, tool calls and returns."""
    return sum(_part_tokens(p) for m in messages for p in m.parts)


def _cut_text(text: str, tokens: int) -> str:
    keep = max(0, tokens * 4 - len(CUT_NOTE) - 2)
    return text if estimate_tokens(text) <= tokens else text[:keep] + "… " + CUT_NOTE


def _without_input(error: Any) -> Any:
    return {k: v for k, v in error.items() if k != "input"} if isinstance(error, dict) else error


def _cut_part(part: Any, tokens: int) -> Any:
    if isinstance(part, TextPart):
        return replace(part, content=_cut_text(part.content, tokens))
    if isinstance(part, ToolCallPart):
        args = part.args_as_json_str()
        if estimate_tokens(part.tool_name + args) <= tokens:
            return part
        return replace(part, args={"cut": _cut_text(args, max(0, tokens - 8))})
    if isinstance(part, RetryPromptPart | ToolReturnPart) and isinstance(part.content, list):
        # a refused submit's reasons each repeat the input they refused: the reasons go back alone
        reasons: list[Any] = [_without_input(e) for e in part.content]
        part = replace(part, content=reasons)
    if isinstance(part, RetryPromptPart) and _part_tokens(part) > tokens:
        return replace(part, content=_cut_text(part.model_response(), tokens))
    if isinstance(part, ToolReturnPart) and _part_tokens(part) > tokens:
        # a text return is cut as it is (its response form would wrap it again: {"error": ...})
        text = part.content if isinstance(part.content, str) else part.model_response_str()
        return replace(part, content=_cut_text(text, max(0, tokens - 8)))
    return part


def cut_message(message: ModelMessage, tokens: int) -> ModelMessage:
    """`message` with its parts cut to about `tokens` estimated tokens in all (shared evenly)."""
    sized = [p for p in message.parts if _part_tokens(p)]
    if not sized or messages_tokens([message]) <= tokens:
        return message
    each = max(0, tokens // len(sized))
    if isinstance(message, ModelRequest):
        return replace(message, parts=[_cut_part(p, each) for p in message.parts])
    return replace(message, parts=[_cut_part(p, each) for p in message.parts])


def fit_retry_history(messages: list[ModelMessage], window: Window) -> list[ModelMessage]:
    """The messages a windowed model's next request sends (seed §6 budgets; offline model).

    A first request is sent as it is. A retry keeps the first request (the user prompt, whole),
    the LAST failed answer and its retry prompt only: older failed answers are dropped (pydantic-ai
    re-sends the whole run, and a small model's invalid answers run to a thousand tokens each).
    The failed answer, then the retry prompt, are cut (`CUT_NOTE`) so that the request leaves the
    answer `RETRY_ANSWER_TOKENS`. Pure; the kept messages are copies when cut."""
    if len(messages) < 3:
        return messages
    first, answer, retry = messages[0], messages[-2], messages[-1]
    limit = int((window.tokens - RETRY_ANSWER_TOKENS) / window.per_estimate) - window.overhead_tokens
    room = max(0, limit - messages_tokens([first]))
    retry_tokens = messages_tokens([retry])
    retry_room = max(room // 2, room - messages_tokens([answer]))
    if retry_tokens > retry_room:
        retry = cut_message(retry, retry_room)
    answer = cut_message(answer, max(0, room - messages_tokens([retry])))
    return [first, answer, retry]


def answer_room(messages: Sequence[ModelMessage], window: Window) -> int:
    """The answer cap (`max_tokens`, the model's tokens) a request of `messages` leaves in the
    window: the first request's cap, lowered to what is left (at least 1; a request that leaves
    nothing fails plainly, `context_exceeded`)."""
    used = (window.overhead_tokens + messages_tokens(messages)) * window.per_estimate
    return max(1, min(window.answer_tokens, int(window.tokens - used)))


@dataclass
class FitWindow(AbstractCapability[Any]):
    """A windowed model's requests fit its window: retries carry one failed answer, cut
    (`fit_retry_history`), and each request's answer cap is what the window leaves
    (`answer_room`). Keyed models never get it."""

    window: Window

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        messages = fit_retry_history(list(request_context.messages), self.window)
        request_context.messages = list(messages)
        ctx.messages[:] = messages
        request_context.model_settings = {
            **(request_context.model_settings or {}),
            "max_tokens": answer_room(messages, self.window),
        }
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # takes a window, not a spec


def bounded_digest(text: str, tokens: int) -> str:
    """THE GRAPH SO FAR (`digest`) cut to at most `tokens` estimated tokens for a windowed model:
    its heading and its LAST lines that fit (the latest stretches' propositions, the likeliest
    to continue), in order; "" when not even one line fits."""
    if estimate_tokens(text) <= tokens:
        return text
    heading, *lines = text.split("\n")
    left = tokens - estimate_tokens(heading + "\n")
    kept: list[str] = []
    for line in reversed(lines):
        cost = estimate_tokens(line + "\n")
        if cost > left:
            break
        kept.append(line)
        left -= cost
    return "\n".join([heading, *reversed(kept)]) if kept else ""
