"""Subscription routes build their own models and never say "check the key" (issue 19 item 2)."""

from __future__ import annotations

import pydantic_ai.exceptions as pe
import pytest
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from server.agent.machine_room.engine import build_subscription_model
from server.agent.machine_room.model_guard import GuardedModel
from server.agent.machine_room.subscription_http import bases
from server.core.contracts.models import ModelSlot, ResolvedModel
from server.core.machine_room.model_failures import FailureKind
from server.core.machine_room.model_slots import resolve_ref
from server.core.machine_room.subscriptions import ScopedAuth

BASES = bases(
    {"LH_CHATGPT_API_BASE": "http://127.0.0.1:9/codex/", "LH_XAI_API_BASE": "http://127.0.0.1:9/xai/v1"}
)
AUTH = ScopedAuth("scoped-token", 10**10, "acct-1", "http://127.0.0.1:9/copilot")


def test_each_provider_gets_its_own_model_and_endpoint() -> None:
    chatgpt = build_subscription_model(
        ResolvedModel(provider="chatgpt", model="gpt-5-codex"), AUTH, api_bases=BASES
    )
    assert isinstance(chatgpt, GuardedModel) and isinstance(chatgpt.wrapped, OpenAIResponsesModel)
    assert chatgpt.where == "127.0.0.1:9" and BASES["chatgpt_api"] == "http://127.0.0.1:9/codex"
    copilot = build_subscription_model(
        ResolvedModel(provider="github-copilot-subscription", model="gpt-4o"), AUTH, api_bases=BASES
    )
    assert isinstance(copilot, GuardedModel) and isinstance(copilot.wrapped, OpenAIChatModel)
    xai = build_subscription_model(
        ResolvedModel(provider="xai-subscription", model="grok-4"), AUTH, api_bases=BASES
    )
    assert isinstance(xai, GuardedModel) and "scoped-token" in xai.secrets
    with pytest.raises(ValueError, match="not a subscription provider"):
        build_subscription_model(ResolvedModel(provider="openai", model="gpt-4o"), AUTH, api_bases=BASES)


def test_a_refused_subscription_token_says_connect_again() -> None:
    model = build_subscription_model(
        ResolvedModel(provider="chatgpt", model="gpt-5-codex"), AUTH, api_bases=BASES
    )
    assert isinstance(model, GuardedModel)
    failure = model._failure(pe.ModelHTTPError(401, "gpt-5-codex", {"error": "bad token scoped-token"}))
    assert failure is not None and failure.kind is FailureKind.AUTH
    assert str(failure) == "the provider refused the ChatGPT subscription login; connect it again in Settings"
    assert "key" not in str(failure)


@pytest.mark.parametrize("provider", ["chatgpt", "github-copilot-subscription", "xai-subscription"])
def test_a_subscription_slot_never_resolves_through_an_api_key(provider: str) -> None:
    slot = ModelSlot(provider=provider, model="m")  # type: ignore[arg-type]
    every_key = {"openai": True, "openrouter": True, "openai-compatible": True}
    outcome = resolve_ref(
        slot, keys_present=every_key, offline_available=True, key_env={}, label="Strong model"
    )
    assert outcome.model is None
    assert (
        outcome.problem is not None
        and "subscription is not connected. Connect it in Settings." in outcome.problem
    )
    connected = resolve_ref(
        slot, keys_present={provider: True}, offline_available=False, key_env={}, label="Strong model"
    )
    assert (
        connected.model is not None and connected.model.provider == provider and not connected.model.offline
    )
