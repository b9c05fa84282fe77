"""Every model-using role listed once with its default slot, and what each runs (issue 30 item 2,
seed §7 `BACKGROUND_MODEL_ROLES`): an override when set, else the default slot; the lesson roles
run the lesson's own model."""

from __future__ import annotations

from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.contracts.models import (
    ROLE_NAMES,
    SLOT_NAMES,
    ModelSlot,
    ModelSlots,
    RoleName,
    RoleOverrides,
)
from server.core.machine_room.model_roles import MODEL_ROLES, ROLES_BY_NAME, resolve_role

KEYS = {"openai": True, "openrouter": False, "openai-compatible": False}
ENV = {"openai": "LH_OPENAI_API_KEY", "openrouter": "LH_OPENROUTER_API_KEY"}


def test_every_role_is_listed_once_with_a_default_and_a_sentence() -> None:
    assert [r.name for r in MODEL_ROLES] == list(get_args(RoleName))
    assert len(set(ROLE_NAMES)) == len(ROLE_NAMES)
    by_wire = set(RoleOverrides.model_json_schema(by_alias=True)["properties"])
    assert by_wire == set(ROLE_NAMES)  # settings' `roles` section holds exactly these
    for role in MODEL_ROLES:
        assert role.label and role.does.endswith((".", ")"))
        assert role.default in (*SLOT_NAMES, "lesson")
    # seed §7: the practice roles pinned to the strong slot; §3: prober/teacher the lesson's model
    assert {
        r.name: r.default for r in MODEL_ROLES if r.name in ("partitioner", "problemGenerator", "grader")
    } == {
        "partitioner": "strong",
        "problemGenerator": "strong",
        "grader": "strong",
    }
    assert ROLES_BY_NAME["prober"].default == ROLES_BY_NAME["teacher"].default == "lesson"
    assert {ROLES_BY_NAME[n].default for n in ("extraction", "summaries", "naming")} == {"cheap"}
    assert [r.name for r in MODEL_ROLES if r.optional] == ["visualCheck"]


slot_models = st.one_of(
    st.none(), st.builds(lambda m: ModelSlot(provider="openai", model=m), st.sampled_from(["s1", "s2"]))
)
override_models = st.dictionaries(
    st.sampled_from(ROLE_NAMES),
    st.builds(lambda m: ModelSlot(provider="openai", model=m), st.sampled_from(["o1", "o2", "o3"])),
)


@given(
    strong=slot_models,
    cheap=slot_models,
    vision=slot_models,
    overrides=override_models,
    offline=st.booleans(),
)
def test_a_role_runs_its_override_else_its_default_slot(
    strong: ModelSlot | None,
    cheap: ModelSlot | None,
    vision: ModelSlot | None,
    overrides: dict[str, ModelSlot],
    offline: bool,
) -> None:
    slots = ModelSlots(strong=strong, cheap=cheap, vision=vision)
    roles = RoleOverrides.model_validate({k: v.model_dump() for k, v in overrides.items()})
    for role in MODEL_ROLES:
        outcome = resolve_role(
            role.name, roles, slots, keys_present=KEYS, offline_available=offline, key_env=ENV
        )
        if role.name in overrides:
            assert outcome is not None and outcome.model is not None
            assert outcome.model.model == overrides[role.name].model
        elif role.default == "lesson":
            assert outcome is None  # each lesson's own model
        else:
            chosen = getattr(slots, role.default)
            fallback = strong if role.default == "cheap" and chosen is None else chosen
            assert outcome is not None
            if fallback is not None:
                assert outcome.model is not None and outcome.model.model == fallback.model
            elif role.default == "vision" or not offline:
                assert outcome.model is None and outcome.problem
            else:
                assert outcome.model is not None and outcome.model.offline


def test_an_override_that_cannot_run_says_which_role_and_what_to_set() -> None:
    roles = RoleOverrides.model_validate({"grader": {"provider": "openrouter", "model": "x/y"}})
    outcome = resolve_role(
        "grader", roles, ModelSlots(), keys_present=KEYS, offline_available=True, key_env=ENV
    )
    assert outcome is not None and outcome.model is None
    assert outcome.problem is not None
    assert outcome.problem.startswith("Grader override: no API key for openrouter")
    assert "LH_OPENROUTER_API_KEY" in outcome.problem


def test_an_unknown_role_is_refused_in_settings() -> None:
    with pytest.raises(ValueError, match="teachr"):
        RoleOverrides.model_validate({"teachr": {"provider": "openai", "model": "x"}})
    with pytest.raises(KeyError):
        RoleOverrides().of("teachr")  # type: ignore[arg-type]
