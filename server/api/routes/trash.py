"""The trash over HTTP (issue 31 item 6, decision 0043): deleted lessons and problem sets kept
30 days, listed, restored whole, or removed for good. Deleting goes through the records' own
DELETE routes (they move into the trash)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.core.trash import TRASH_DAYS, RestoreBody

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


@router.get("/api/trash")
async def list_trash(services: ServicesDep) -> dict[str, Any]:
    """`{"entries": [{id, kind: "lesson"|"practiceSet", title, deletedAt, purgeAt, files}],
    "days": 30}`, newest deletion first (entries past their time are removed first)."""
    return {"entries": services.trash.list(), "days": TRASH_DAYS}


@router.post("/api/trash/restore", responses=errors(400, 404, 409, 413))
async def restore(body: RestoreBody, services: ServicesDep) -> dict[str, Any]:
    """Put a trashed lesson (with its plan and Workbench jobs) or problem set back: `{"entry"}`.
    404 when it is not in the trash; 409 when a record of that id exists again."""
    return {"entry": services.trash.restore(body.id)}


@router.delete("/api/trash")
async def empty(services: ServicesDep) -> dict[str, int]:
    """Remove everything in the trash for good: `{"removed": n}`."""
    return {"removed": services.trash.empty()}
