"""What a keyed model's extractor retry resends (issue 28 item 7): pydantic-ai re-sends the whole
run on every retry, so each refused submit and each refusal (a pack's listed every misnamed
finding with all the pack's note ids) rode along again: a refused pack's fourth request reached
1.27 MB. `BoundRetries` keeps the first request whole and only the LAST refused answer and its
refusal, cut to `RETRY_RESEND_TOKENS` in all. (A windowed model's requests have their own fit,
`window.FitWindow`.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import ModelRequestContext

from server.agent.library.window import cut_message, messages_tokens

RETRY_RESEND_TOKENS = 8_000
"""What an extractor's retry (a single job's or a pack's, keyed models) sends beyond its first
request, at most: estimated tokens (`estimate_tokens`, about 4 characters each, so ~32 KB) of
the last refused answer and the reasons it was refused, together. Older refused answers are
dropped; the reasons keep at least half of it, the answer is cut to the rest (`window.CUT_NOTE`).
Enforced in `bound_retry_history`, applied by `BoundRetries` in
`agent.library.extraction._extractor_agent` and `_pack_agent`."""


def bound_retry_history(
    messages: list[ModelMessage], resend_tokens: int = RETRY_RESEND_TOKENS
) -> list[ModelMessage]:
    """The messages a keyed model's extractor retry sends: a first request as it is; a retry
    keeps the first request (the user prompt: the source or the pack's notes, whole), then the
    last answer and the request refusing it, cut so that both together hold at most about
    `resend_tokens` estimated tokens (the refusal keeps at least half, or all the answer leaves).
    Pure; cut messages are copies. `messages`: the run's history, oldest first, ending with the
    request to send (pydantic-ai's shape: request, answer, request, ...)."""
    if len(messages) < 3:
        return messages
    first, answer, retry = messages[0], messages[-2], messages[-1]
    retry_room = max(resend_tokens // 2, resend_tokens - messages_tokens([answer]))
    retry = _fit(retry, retry_room)
    answer = _fit(answer, max(0, resend_tokens - messages_tokens([retry])))
    return [first, answer, retry]


def _fit(message: ModelMessage, tokens: int) -> ModelMessage:
    """`message` cut (`cut_message`) to at most `tokens` estimated tokens: a cut tool call's
    arguments are re-quoted as a JSON string (escapes add to them), so an overshoot is cut again,
    shorter by its ratio (twice at most, then to nothing)."""
    cut = cut_message(message, tokens)
    target = tokens
    for _ in range(2):
        size = messages_tokens([cut])
        if size <= tokens:
            return cut
        target = max(0, target * tokens // size - 1)
        cut = cut_message(message, target)
    return cut if messages_tokens([cut]) <= tokens else cut_message(message, 0)


@dataclass
class BoundRetries(AbstractCapability[Any]):
    """An extractor's retries resend at most `resend_tokens` beyond the first request
    (`bound_retry_history`); the run's kept history is the bounded one too."""

    resend_tokens: int = RETRY_RESEND_TOKENS

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        messages = bound_retry_history(list(request_context.messages), self.resend_tokens)
        request_context.messages = list(messages)
        ctx.messages[:] = messages
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # not a spec capability
