"""Money: a run's usage priced with genai-prices (absence is not zero: unknown is None)."""

from __future__ import annotations

import genai_prices
from pydantic_ai.usage import RunUsage

from server.core.contracts.models import ResolvedModel

PROVIDER_IDS = {"openrouter": "openrouter", "openai": "openai"}


def usage_cost(usage: RunUsage, model: ResolvedModel) -> float | None:
    """Cost in US dollars of `usage` on `model`, or None when the price is unknown (local and
    OpenAI-compatible servers, models genai-prices does not list, or unreported tokens)."""
    provider = PROVIDER_IDS.get(model.provider)
    if provider is None or usage.requests == 0 or not usage.input_tokens:
        return None
    try:
        return float(genai_prices.calc_price(usage, model.model, provider_id=provider).total_price)
    except (LookupError, ValueError):
        return None
