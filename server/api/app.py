"""The FastAPI application factory (nothing is built at import time)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp

from server import __version__
from server.api.bodies import DEFAULT_MAX_BODY, JsonTooLarge
from server.api.errors import GUARDED, install_error_handlers, publish_refusals
from server.api.machine_room.csp import ContentSecurityPolicy, app_policy
from server.api.machine_room.security import LoopbackGuard
from server.api.machine_room.static import mount_frontend
from server.api.routes import events
from server.api.routes import trash as trash_routes
from server.api.routes.classroom import chats
from server.api.routes.classroom import export as lesson_export
from server.api.routes.library import graph, graph_export, sources
from server.api.routes.machine_room import backup as backup_routes
from server.api.routes.machine_room import dictation, first_run, health, settings, subscriptions
from server.api.routes.machine_room import search as search_routes
from server.api.routes.practice import export as set_export
from server.api.routes.practice import sets
from server.api.routes.workbench import consent, jobs
from server.config import DEEPGRAM_API_BASE_ENV, DEFAULT_DEEPGRAM_API_BASE
from server.core.machine_room.dictation import dictation_endpoints
from server.services.bootstrap import Services
from server.services.machine_room.dictation import DictationTokens


class HarnessApp(FastAPI):
    """FastAPI with the body limiter's own 413 rewritten as a JSON refusal (`JsonTooLarge`), and
    an `/openapi.json` that declares the refusals the routes really give (`publish_refusals`)."""

    def build_middleware_stack(self) -> ASGIApp:
        return JsonTooLarge(super().build_middleware_stack())

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            self.openapi_schema = publish_refusals(super().openapi())
        return self.openapi_schema


def create_app(
    services: Services,
    *,
    static_root: Path | None = None,
    token: str | None = None,
    allowed_origins: frozenset[str] = frozenset(),
    request_stop: Callable[[], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> FastAPI:
    """The app for one set of services (one data dir).

    Args:
        services: built by `server.services.bootstrap.build_services`.
        static_root: the built frontend (defaults to the package's `static/`).
        token: the per-launch API token (desktop mode, from `LH_API_TOKEN`); None in web mode.
        allowed_origins: extra origins accepted besides the app's own (`LH_ALLOWED_ORIGINS`).
        request_stop: stops the server gracefully; offered as `POST /api/shutdown` in desktop
            mode only (token-protected), for platforms without a graceful signal (Windows).
        environ: where `LH_DEEPGRAM_API_BASE` is read (defaults to `os.environ`): dictation's
            token grant goes there, and the CSP's `connect-src` allows its WebSocket origin.

    Raises:
        ValueError: `LH_DEEPGRAM_API_BASE` is not an http(s) URL.
    """

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await services.startup()
        try:
            yield
        finally:
            await services.shutdown()

    app = HarnessApp(
        title="Learning Harness", version=__version__, lifespan=lifespan, max_body_size=DEFAULT_MAX_BODY
    )
    app.state.services = services
    # Who keeps the API keys: Electron main in desktop mode (decision 0018), else this server.
    app.state.keys_owner = "desktop" if token else "server"
    install_error_handlers(app)
    env = os.environ if environ is None else environ
    endpoints = dictation_endpoints(env.get(DEEPGRAM_API_BASE_ENV) or DEFAULT_DEEPGRAM_API_BASE)
    app.state.dictation = DictationTokens(endpoints)
    for module in (
        health,
        settings,
        chats,
        lesson_export,
        jobs,
        consent,
        sources,
        graph_export,
        graph,
        sets,
        set_export,
        events,
        dictation,
        subscriptions,
        first_run,
    ):
        app.include_router(module.router)
    app.include_router(backup_routes.router)  # decision 0041
    app.include_router(search_routes.router)  # decision 0044
    app.include_router(trash_routes.router)  # decision 0043
    if token and request_stop is not None:

        @app.post("/api/shutdown", status_code=202, responses=GUARDED)
        async def shutdown() -> dict[str, bool]:
            """Desktop mode: stop gracefully (running turns keep what streamed)."""
            request_stop()
            return {"stopping": True}

    mount_frontend(app, static_root)
    app.add_middleware(LoopbackGuard, token=token, allowed_origins=allowed_origins)
    # Outermost: refusals carry the policy too.
    app.add_middleware(ContentSecurityPolicy, policy=app_policy(endpoints.socket_origin))
    return app


def close_streams(app: object) -> None:
    """End the app's open `GET /api/events` streams (the server is stopping): call it when the
    ASGI server begins its graceful shutdown, which otherwise waits for endless streams."""
    state = getattr(app, "state", None)
    services = getattr(state, "services", None) if state is not None else None
    if isinstance(services, Services):
        services.events.close()
