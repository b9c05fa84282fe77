"""One test call to a model with a pasted key (issue 29 item 2): does this key work?

The call goes through the real engine (`engine.build_model`: the guarded transport, its deadlines,
its plain-words failures), asks for a few tokens of a whole answer, and never retries: the learner
waits for one answer, not three. The key is used for this call only; nothing is stored.
"""

from __future__ import annotations

import logging

from pydantic_ai.direct import model_request
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelRequest
from pydantic_ai.settings import ModelSettings

from server.agent.machine_room.engine import build_model
from server.agent.machine_room.model_guard import classify, redact
from server.core.contracts.models import ModelCallSettings, ResolvedModel

log = logging.getLogger("lh.model")

TEST_PROMPT = "Reply with the single word: ready"
"""What the test call asks; any answer counts as working."""

OPENROUTER_NAME = (
    "OpenRouter names a model by its maker and name, "
    "for example anthropic/claude-sonnet-4 or openai/gpt-4o-mini."
)
"""What a test of an OpenRouter model named without its maker says (pydantic-ai refuses to build it)."""

TEST_LIMITS = ModelCallSettings(connect_s=10.0, first_token_s=45.0, idle_s=30.0, retries=0, max_wait_s=0.0)
"""Deadlines of the test call: no retries, so a refused key or a rate limit is told at once."""


async def first_call(resolved: ResolvedModel, api_key: str | None, base_url: str | None = None) -> str | None:
    """Send one tiny request to `resolved` with `api_key`.

    Args:
        resolved: provider and model id (an `openai-compatible` one carries its base URL).
        api_key: the pasted key (None for a keyless server).
        base_url: overrides the provider's endpoint (tests point OpenAI / OpenRouter at a stub).

    Returns:
        None when the model answered; otherwise one plain sentence saying why not (key refused,
        model unknown, no connection, ... from `core/machine_room/model_failures.py`), never the
        provider's body nor the key.
    """
    if resolved.provider == "openrouter" and "/" not in resolved.model:
        return OPENROUTER_NAME
    try:
        model = build_model(resolved, api_key=api_key, base_url=base_url, limits=TEST_LIMITS)
    except (ValueError, UserError) as exc:  # a model name or URL the provider's client refuses
        text = str(exc).rstrip(".")
        return f"{text[:1].upper()}{text[1:]}."
    except Exception as exc:  # e.g. an address the HTTP client cannot parse
        log.warning("test call to %s not built: %s", resolved.provider, type(exc).__name__)
        return f"The app cannot call {resolved.model} at that address; check the server's address."
    try:
        await model_request(
            model,
            [ModelRequest.user_text_prompt(TEST_PROMPT)],
            model_settings=ModelSettings(max_tokens=16, temperature=0.0),
        )
    except Exception as exc:
        failure = classify(exc, resolved.model)
        log.warning(
            "test call to %s failed: %s", resolved.provider, redact(f"{type(exc).__name__}: {exc}", [api_key])
        )
        if failure is None:
            return "The test call failed for a reason the app does not know; see the server log."
        sentence = str(failure)
        return sentence[:1].upper() + sentence[1:]
    return None
