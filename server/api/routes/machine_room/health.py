"""`GET /api/health`: liveness for Electron's handshake and for humans."""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter

from server import __version__
from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


@router.get("/api/health")
async def health(services: ServicesDep) -> dict[str, Any]:
    """`{"status": "ok", "version", "pid", "dataDir"}`."""
    return {"status": "ok", "version": __version__, "pid": os.getpid(), "dataDir": str(services.paths.root)}
