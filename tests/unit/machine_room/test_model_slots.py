"""Slot resolution: BYOK slots, the offline fallback, and honest problems (seed §3)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from server.config import API_KEY_ENV
from server.core.contracts.models import ModelSlot, ModelSlots
from server.core.machine_room.model_slots import resolve_slot, stamp_from

NO_KEYS = {"openrouter": False, "openai": False, "openai-compatible": False}


def resolve(slots: ModelSlots, name: str, *, keys: dict | None = None, offline: bool = True):
    return resolve_slot(
        slots,
        name,
        keys_present=keys or NO_KEYS,
        offline_available=offline,  # type: ignore[arg-type]
        key_env=API_KEY_ENV,
    )


def test_fresh_install_runs_the_offline_model() -> None:
    outcome = resolve(ModelSlots(), "strong")
    assert outcome.model is not None and outcome.model.offline and outcome.problem is None


def test_nothing_installed_and_nothing_chosen_says_what_to_set() -> None:
    outcome = resolve(ModelSlots(), "strong", offline=False)
    assert outcome.model is None and "LH_OPENROUTER_API_KEY" in (outcome.problem or "")


def test_keyed_provider_without_key_is_a_problem_not_a_silent_fallback() -> None:
    slots = ModelSlots(strong=ModelSlot(provider="openrouter", model="anthropic/claude-sonnet-4"))
    outcome = resolve(slots, "strong")
    assert outcome.model is None
    assert "no API key for openrouter" in (outcome.problem or "") and "LH_OPENROUTER_API_KEY" in (
        outcome.problem or ""
    )
    # the slot is named as the Settings page names it, never by its key (issue 18)
    assert (outcome.problem or "").startswith("Strong model: ") and "strong:" not in (outcome.problem or "")
    unset = resolve(ModelSlots(), "strong", offline=False).problem or ""
    assert unset.startswith("Strong model: ")
    ok = resolve(slots, "strong", keys={**NO_KEYS, "openrouter": True})
    assert ok.model is not None and ok.model.model == "anthropic/claude-sonnet-4" and not ok.model.offline


def test_cheap_follows_strong_and_vision_needs_a_choice() -> None:
    slots = ModelSlots(
        strong=ModelSlot(provider="openai-compatible", model="llama3", base_url="http://127.0.0.1:11434/v1")
    )
    cheap = resolve(slots, "cheap")
    assert cheap.model is not None and cheap.model.model == "llama3"
    vision = resolve(slots, "vision")
    assert vision.model is None and "vision" in (vision.problem or "")


def test_openai_compatible_needs_no_key_but_needs_a_url() -> None:
    with pytest.raises(ValidationError, match="baseUrl"):
        ModelSlot(provider="openai-compatible", model="x")
    with pytest.raises(ValidationError):
        ModelSlot(provider="openai-compatible", model="x", base_url="not a url")
    slot = ModelSlot(provider="openai-compatible", model="x", base_url="http://127.0.0.1:8080/v1/")
    assert slot.base_url == "http://127.0.0.1:8080/v1"


@pytest.mark.parametrize("model", ["", "   "])
def test_blank_model_ids_are_refused(model: str) -> None:
    with pytest.raises(ValidationError):
        ModelSlot(provider="openai", model=model)


def test_local_without_the_extra_says_how_to_install() -> None:
    outcome = resolve(ModelSlots(strong=ModelSlot(provider="local", model="x")), "strong", offline=False)
    assert outcome.model is None and "[local]" in (outcome.problem or "")


def test_stamp_keeps_the_slot_verbatim_or_names_the_offline_model() -> None:
    slot = ModelSlot(provider="openai", model="gpt-5-mini")
    resolved = resolve(ModelSlots(strong=slot), "strong", keys={**NO_KEYS, "openai": True}).model
    assert resolved is not None
    assert stamp_from(resolved, slot).model == "gpt-5-mini"
    offline = resolve(ModelSlots(), "strong").model
    assert offline is not None and stamp_from(offline, None).provider == "local"
