"""Model engines: a resolved slot becomes a pydantic-ai model over the openai SDK (seed §3).

Every provider, the offline model included, goes through the same OpenAI-compatible path.
"""

from __future__ import annotations

from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.openrouter import OpenRouterModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.providers.openrouter import OpenRouterProvider

from server.config import PROVIDER_BASE_URLS
from server.core.contracts.models import ResolvedModel

KEYLESS_PLACEHOLDER = "not-needed"
"""Sent as the API key to local OpenAI-compatible servers that need none (the SDK requires one)."""


def build_model(resolved: ResolvedModel, *, api_key: str | None, base_url: str | None = None) -> Model:
    """A pydantic-ai chat model for a resolved slot.

    Args:
        resolved: provider and model id (from core.model_slots).
        api_key: the provider key (from env or keychain); None for keyless local servers.
        base_url: overrides the endpoint (the offline model's loopback URL, known once it runs).

    Raises:
        ValueError: a keyed provider without a key, or an OpenAI-compatible provider without a URL.
    """
    if resolved.provider == "openrouter":
        if not api_key:
            raise ValueError("openrouter needs an API key")
        return OpenRouterModel(resolved.model, provider=OpenRouterProvider(api_key=api_key))
    if resolved.provider == "openai":
        if not api_key:
            raise ValueError("openai needs an API key")
        openai_url = base_url or PROVIDER_BASE_URLS["openai"]
        return OpenAIChatModel(resolved.model, provider=OpenAIProvider(base_url=openai_url, api_key=api_key))
    compatible_url = base_url or resolved.base_url
    if not compatible_url:
        raise ValueError(f"{resolved.provider} needs a base URL")
    return OpenAIChatModel(
        resolved.model,
        provider=OpenAIProvider(base_url=compatible_url, api_key=api_key or KEYLESS_PLACEHOLDER),
    )
