"""Every role that calls a model, listed once with its default (seed §7, issue 30 item 2).

A role runs its override from settings' `roles` section when one is set, else its default: the
lesson's own model (`"lesson"`: prober and teacher, seed §3 per-session models) or a named slot
(the background roles, seed §7 `BACKGROUND_MODEL_ROLES`). Pure: the caller says which keys exist
and whether the offline model is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from server.core.contracts.models import ROLE_NAMES, ModelSlots, RoleName, RoleOverrides, SlotName
from server.core.machine_room.model_slots import Resolution, resolve_ref, resolve_slot

RoleDefault = SlotName | Literal["lesson"]


@dataclass(frozen=True)
class ModelRole:
    """One model-using role.

    Attributes:
        name: its wire name in settings' `roles` section ("problemGenerator").
        label: what the Settings page calls it ("Problem writer").
        does: one plain sentence of what it does, for the Settings page.
        default: the slot it runs when not overridden, or "lesson" (the lesson's own model).
        optional: True when a role without a model is skipped, not refused (the vision check: a
            picture is still rendered and checked, only not looked at).
    """

    name: RoleName
    label: str
    does: str
    default: RoleDefault
    optional: bool = False


MODEL_ROLES: tuple[ModelRole, ...] = (
    ModelRole("prober", "Prober", "Finds out what you already know at the start of a lesson.", "lesson"),
    ModelRole("teacher", "Teacher", "Teaches the lesson and asks the questions.", "lesson"),
    ModelRole("partitioner", "Practice planner", "Divides a practice set into problems.", "strong"),
    ModelRole(
        "problemGenerator",
        "Problem writer",
        "Writes each practice problem with its solution and rubric.",
        "strong",
    ),
    ModelRole("grader", "Grader", "Scores your practice answers.", "strong"),
    ModelRole("researcher", "Researcher", "Searches the web for the teacher.", "strong"),
    ModelRole("demoBuilder", "Demo builder", "Builds interactive demos for the teacher.", "strong"),
    ModelRole("visualMaker", "Visual maker", "Draws pictures and diagrams for the teacher.", "strong"),
    ModelRole(
        "visualCheck",
        "Picture checker",
        "Looks at each drawn picture before it is shown (needs a model that reads images).",
        "vision",
        optional=True,
    ),
    ModelRole(
        "extraction",
        "Graph builder",
        "Reads lessons and notes into your knowledge graph (extracting and matching what they teach).",
        "cheap",
    ),
    ModelRole("summaries", "Summaries", "Summarises the older part of a long lesson.", "cheap"),
    ModelRole("naming", "Lesson names", "Gives a new lesson its title.", "cheap"),
)
"""In the order the Settings page lists them; every `RoleName` exactly once."""

ROLES_BY_NAME: dict[RoleName, ModelRole] = {role.name: role for role in MODEL_ROLES}
assert tuple(ROLES_BY_NAME) == ROLE_NAMES, "MODEL_ROLES must list every RoleName once, in its order"


def resolve_role(
    name: RoleName,
    roles: RoleOverrides,
    slots: ModelSlots,
    *,
    keys_present: Mapping[str, bool],
    offline_available: bool,
    key_env: Mapping[str, str],
) -> Resolution | None:
    """What a role runs: its override when set, else its default slot.

    Args:
        name: the role.
        roles: settings' `roles` section (the overrides).
        slots: settings' `models` section.
        keys_present, offline_available, key_env: as `model_slots.resolve_ref`.

    Returns:
        The Resolution (a model, or a problem sentence naming the role, e.g. "Grader override: no
        API key for openai; ..."), or None for a lesson role without an override: it runs each
        lesson's own model, known only per lesson.

    Raises:
        KeyError: `name` is not a role.
    """
    role = ROLES_BY_NAME[name]
    override = roles.of(name)
    if override is not None:
        return resolve_ref(
            override,
            keys_present=keys_present,
            offline_available=offline_available,
            key_env=key_env,
            label=f"{role.label} override",
        )
    if role.default == "lesson":
        return None
    return resolve_slot(
        slots, role.default, keys_present=keys_present, offline_available=offline_available, key_env=key_env
    )
