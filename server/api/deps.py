"""FastAPI dependency: the services built for this app instance."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from server.services.container import Services


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(_services)]
