"""The Workbench's reads: `GET /api/chats/{chat_id}/jobs` (a session's background jobs).
Aborting a computing worker goes through `POST /api/activity/abort` with its job id."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep

router = APIRouter(route_class=StrictRoute)


@router.get("/api/chats/{chat_id}/jobs")
async def chat_jobs(chat_id: str, services: ServicesDep) -> dict[str, Any]:
    """`{jobs: [JobRecord]}` oldest first: kind, input, worker status (`running`/`done`/`error`/
    `aborted`), result, usage and `delivery` (`{kind, status: pending|delivered, steerId}`); 404
    for an unknown session."""
    services.chats.get(chat_id)  # 404 when the session does not exist
    return {
        "jobs": [job.model_dump(mode="json", by_alias=True) for job in services.stores.jobs.list(chat_id)]
    }
