"""FastAPI dependency: the services built for this app instance."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from server.services.bootstrap import Services


async def _services(request: Request) -> Services:
    """The app's `Services`. A coroutine on purpose (issue 16): FastAPI runs a plain `def`
    dependency in a worker thread, so every request (even `/api/health`) took a thread hop and
    two GIL hand-offs, which a busy import's worker threads stretched to hundreds of ms."""
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(_services)]
