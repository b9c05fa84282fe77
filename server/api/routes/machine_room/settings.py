"""Model slots, web research and API keys: `GET/PUT /api/settings`, `GET/PUT /api/settings/research`,
`PUT/DELETE /api/keys/{provider}` (model, search and dictation providers; web mode only: in the
desktop app Electron main keeps the keys and passes them in the environment, decision 0018)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, Field, field_validator

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors, refusal
from server.core.contracts.models import ModelSlots, ResearchSettings, RoleOverrides, SecretName

router = APIRouter(route_class=StrictRoute, responses=GUARDED)

KeysOwner = Literal["desktop", "server"]

DESKTOP_KEYS_DETAIL = "In the desktop app, keys are kept by the app itself: enter them in Settings."


async def _keys_owner(request: Request) -> KeysOwner:
    """`desktop` when Electron main owns the keys (the server runs with `LH_API_TOKEN`), else `server`
    (a coroutine: FastAPI runs a plain `def` dependency in a worker thread, issue 16)."""
    owner: KeysOwner = getattr(request.app.state, "keys_owner", "server")
    return owner


KeysOwnerDep = Annotated[KeysOwner, Depends(_keys_owner)]


class SettingsUpdate(BaseModel):
    """`PUT /api/settings` body: the three slots (null clears one) and, optionally, the per-role
    overrides (`{"prober": slot|null, "teacher": slot|null}`)."""

    models: ModelSlots
    roles: RoleOverrides | None = None


class KeyUpdate(BaseModel):
    r"""`PUT /api/keys/{provider}` body: the key, 8-500 printable ASCII characters without
    spaces (it goes into an HTTP header; every provider's keys are such). One trailing line
    break, as a paste may carry, is dropped: the published pattern `^[!-~]+$` allows it too (in
    Python's regex `$` also matches before a final newline)."""

    key: str = Field(min_length=8, max_length=500, json_schema_extra={"pattern": r"^[!-~]+$"})

    @field_validator("key")
    @classmethod
    def _printable(cls, value: str) -> str:
        key = value.removesuffix("\n")
        if not key or not all("!" <= c <= "~" for c in key):
            raise ValueError(
                "the key holds spaces, line breaks or characters a key never has; "
                "paste it exactly as the provider shows it"
            )
        return key


@router.get("/api/settings", responses=errors(503))
async def get_settings(services: ServicesDep, owner: KeysOwnerDep) -> dict[str, Any]:
    """Slots, key presence (never keys; `keys.deepgram` included), offline model state, what runs,
    problems, and `keysOwner`: "desktop" (keys are set through the app's shell) or "server"
    (`/api/keys`)."""
    return {**services.models.status(), "keysOwner": owner}


@router.put("/api/settings", responses=errors(400, 413, 503))
async def put_settings(body: SettingsUpdate, services: ServicesDep, owner: KeysOwnerDep) -> dict[str, Any]:
    """Replace the model slots; answers the new status (as GET). Other settings sections are kept."""
    return {**services.models.save_slots(body.models, body.roles), "keysOwner": owner}


@router.put("/api/settings/roles", responses=errors(400, 413, 503))
async def put_roles(body: RoleOverrides, services: ServicesDep, owner: KeysOwnerDep) -> dict[str, Any]:
    """Replace every role's model override (`{"grader": slot|null, "problemGenerator": ..., ...}`;
    a role left out or null runs its default, `modelRoles[].default`); answers the new status
    (as GET). 400 names an unknown role or a bad slot. Other settings sections are kept."""
    return {**services.models.save_roles(body), "keysOwner": owner}


@router.put("/api/keys/{provider}", status_code=204, responses=errors(400, 409, 413, 503))
async def put_key(
    provider: SecretName, body: KeyUpdate, services: ServicesDep, owner: KeysOwnerDep
) -> Response:
    """Store a key in the OS keychain (or the owner-only file). The key is never echoed or logged.

    Errors: 409 `keys_owned_by_app` in desktop mode (nothing is stored); 400 unknown provider or
    malformed key."""
    if owner == "desktop":
        return refusal(409, "keys_owned_by_app", DESKTOP_KEYS_DETAIL)
    services.models.set_key(provider, body.key)
    return Response(status_code=204)


@router.delete("/api/keys/{provider}", status_code=204, responses=errors(400, 409, 503))
async def delete_key(provider: SecretName, services: ServicesDep, owner: KeysOwnerDep) -> Response:
    """Remove a stored key (an environment variable still applies). Errors: 409 in desktop mode."""
    if owner == "desktop":
        return refusal(409, "keys_owned_by_app", DESKTOP_KEYS_DETAIL)
    services.models.delete_key(provider)
    return Response(status_code=204)


@router.get("/api/settings/research", responses=errors(503))
async def get_research(services: ServicesDep) -> dict[str, Any]:
    """The researcher's web search provider: `{provider, googleCx, baseUrl, keys: {tavily, brave,
    google}}` (key presence, never keys). With no provider, the teacher is not offered `research`."""
    return services.models.research_status()


@router.put("/api/settings/research", responses=errors(400, 413, 503))
async def put_research(body: ResearchSettings, services: ServicesDep) -> dict[str, Any]:
    """Replace the `research` section (other sections are kept); answers the new status."""
    return services.models.save_research(body)
