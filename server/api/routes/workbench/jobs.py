"""The Workbench's reads: `GET /api/chats/{chat_id}/jobs` (a session's background jobs) and
`GET /api/jobs/{job_id}/demo` (a finished demo's page, for its sandboxed frame).
Aborting a computing worker goes through `POST /api/activity/abort` with its job id. Transport
only: each route is one call of the Workbench's reads (`services.job_reads`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.api.machine_room.csp import DEMO_POLICY

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


@router.get("/api/chats/{chat_id}/jobs", responses=errors(404, 503))
async def chat_jobs(chat_id: str, services: ServicesDep) -> dict[str, Any]:
    """`{jobs: [JobRecord]}` oldest first: kind, input, worker status (`running`/`done`/`error`/
    `aborted`), result, usage and `delivery` (`{kind, status: pending|delivered, steerId}`); 404
    for an unknown session."""
    return {"jobs": services.job_reads.of_session(chat_id)}


@router.get(
    "/api/jobs/{job_id}/demo",
    response_model=None,
    response_class=HTMLResponse,
    responses={200: {"description": "The demo's page"}, **errors(404, 503)},
)
async def demo_page(job_id: str, services: ServicesDep) -> HTMLResponse:
    """A finished demo's HTML as its own page, for the transcript's `sandbox="allow-scripts"` frame.

    It carries its own policy (`DEMO_POLICY`: sandboxed, scripts and styles inline only, nothing
    loaded from anywhere, framed by the app only) instead of the app's: a `srcdoc` frame would
    inherit the app's `script-src 'self'` and the demo's scripts would not run (decision 0020).
    404 `not_found` when the job does not exist or holds no finished demo.
    """
    return HTMLResponse(
        services.job_reads.demo(job_id).html,
        headers={
            "content-security-policy": DEMO_POLICY,
            "referrer-policy": "no-referrer",
            "x-content-type-options": "nosniff",
            "cache-control": "no-cache",
        },
    )
