"""Model slots, web research and API keys: `GET/PUT /api/settings`, `GET/PUT /api/settings/research`,
`PUT/DELETE /api/keys/{provider}` (model providers and search providers)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.core.contracts.models import ModelSlots, ResearchSettings, RoleOverrides, SecretName

router = APIRouter(route_class=StrictRoute)


class SettingsUpdate(BaseModel):
    """`PUT /api/settings` body: the three slots (null clears one) and, optionally, the per-role
    overrides (`{"prober": slot|null, "teacher": slot|null}`)."""

    models: ModelSlots
    roles: RoleOverrides | None = None


class KeyUpdate(BaseModel):
    """`PUT /api/keys/{provider}` body."""

    key: str = Field(min_length=8, max_length=500, pattern=r"^\S+$")


@router.get("/api/settings")
async def get_settings(services: ServicesDep) -> dict[str, Any]:
    """Slots, key presence (never keys), offline model state, what runs, and problems."""
    return services.models.status()


@router.put("/api/settings")
async def put_settings(body: SettingsUpdate, services: ServicesDep) -> dict[str, Any]:
    """Replace the model slots; answers the new status. Other settings sections are kept."""
    return services.models.save_slots(body.models, body.roles)


@router.put("/api/keys/{provider}", status_code=204)
async def put_key(provider: SecretName, body: KeyUpdate, services: ServicesDep) -> Response:
    """Store a key in the OS keychain (or the owner-only file). The key is never echoed or logged."""
    services.models.set_key(provider, body.key)
    return Response(status_code=204)


@router.delete("/api/keys/{provider}", status_code=204)
async def delete_key(provider: SecretName, services: ServicesDep) -> Response:
    services.models.delete_key(provider)
    return Response(status_code=204)


@router.get("/api/settings/research")
async def get_research(services: ServicesDep) -> dict[str, Any]:
    """The researcher's web search provider: `{provider, googleCx, baseUrl, keys: {tavily, brave,
    google}}` (key presence, never keys). With no provider, the teacher is not offered `research`."""
    return services.models.research_status()


@router.put("/api/settings/research")
async def put_research(body: ResearchSettings, services: ServicesDep) -> dict[str, Any]:
    """Replace the `research` section (other sections are kept); answers the new status."""
    return services.models.save_research(body)
