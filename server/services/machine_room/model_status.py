"""The settings page's view of the models (`GET /api/settings`' model part), projected from what
`ModelService` read: the settings, each slot's resolution, where each key comes from, and the
offline model's state. Never a key: only whether one is set and where from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from server.config import API_KEY_ENV, DICTATION_KEY_ENV, OFFLINE_MODEL_NAME
from server.core.contracts.models import (
    KEYED_PROVIDERS,
    PROVIDERS,
    SLOT_NAMES,
    RoleName,
    SecretName,
    Settings,
)
from server.core.machine_room.model_roles import MODEL_ROLES
from server.core.machine_room.model_slots import Resolution
from server.services.machine_room.offline_model import OfflineModelServer


def settings_status(
    settings: Settings,
    outcomes: Mapping[str, Resolution],
    key_source: Callable[[SecretName], str | None],
    offline: OfflineModelServer | None,
    offline_available: bool,
    roles: Mapping[RoleName, Resolution | None] | None = None,
) -> dict[str, Any]:
    """The view: `{models, roles, providers, keys: {<provider>: {set, source, env}}, offline:
    {available, running, model, error, lastCrash, recentCrash, restarts, tokensPerSecond,
    expectedWaitS, build: OfflineBuild.status() | None}, resolved: {<slot>:
    ResolvedModel (camelCase) | None}, modelRoles: [{role, label, does, default, optional,
    override, runs, problem}], problems: [sentence]}`.

    `modelRoles` lists every model-using role once (`model_roles.MODEL_ROLES`, in order):
    `default` is a slot name or "lesson"; `override` the role's slot in settings' `roles` (or
    null); `runs` the ResolvedModel it runs now (null: a lesson role without an override, which
    runs each lesson's own model, or a role that cannot run); `problem` why it cannot run (an
    override's problem is also in `problems`; a default slot's is said once, by its slot).

    Args:
        settings: the loaded settings.
        outcomes: each slot's resolution (`SLOT_NAMES`), in that order.
        roles: each role's resolution (`ModelService.resolve_role`); None: `modelRoles` is empty.
        key_source: where a key comes from ("env" / "store"), None when not set.
        offline: the offline model's server, None when there is none.
        offline_available: whether the offline model can be offered.
    """
    resolved: dict[str, Any] = {}
    problems: list[str] = []
    for name in SLOT_NAMES:
        outcome = outcomes[name]
        resolved[name] = outcome.model.model_dump(by_alias=True) if outcome.model else None
        if outcome.problem and (name != "vision" or settings.models.vision is not None):
            problems.append(outcome.problem)  # an unset vision slot is optional, not a problem
    model_roles: list[dict[str, Any]] = []
    for role in MODEL_ROLES if roles is not None else ():
        role_outcome = roles[role.name] if roles is not None else None
        override = settings.roles.of(role.name)
        problem = role_outcome.problem if role_outcome is not None else None
        if problem and override is not None:
            problems.append(problem)
        model_roles.append(
            {
                "role": role.name,
                "label": role.label,
                "does": role.does,
                "default": role.default,
                "optional": role.optional,
                "override": override.model_dump(mode="json", by_alias=True) if override else None,
                "runs": (
                    role_outcome.model.model_dump(by_alias=True)
                    if role_outcome and role_outcome.model
                    else None
                ),
                "problem": None if role.optional and override is None else problem,
            }
        )
    keys: dict[str, dict[str, Any]] = {}
    for p in KEYED_PROVIDERS:
        source = key_source(p)
        keys[p] = {"set": source is not None, "source": source, "env": API_KEY_ENV[p]}
    for secret, env in DICTATION_KEY_ENV.items():
        source = key_source(secret)  # type: ignore[arg-type]
        keys[secret] = {"set": source is not None, "source": source, "env": env}
    return {
        "models": settings.models.model_dump(mode="json", by_alias=True),
        "roles": settings.roles.model_dump(mode="json", by_alias=True),
        "providers": list(PROVIDERS),
        "keys": keys,
        "offline": {
            "available": offline_available,
            "running": bool(offline and offline.running),
            "model": OFFLINE_MODEL_NAME,
            "error": offline.error if offline else None,
            "lastCrash": offline.last_crash if offline else None,
            "recentCrash": offline.recent_crash if offline else None,
            "restarts": offline.restarts if offline else 0,
            "tokensPerSecond": offline.speed.tokens_per_s if offline else None,
            "expectedWaitS": offline.speed.expected_wait_s if offline else None,
            "build": offline.build_status() if offline else None,
        },
        "resolved": resolved,
        "modelRoles": model_roles,
        "problems": problems,
    }
