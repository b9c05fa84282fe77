"""Issue 26, item 6 (a burst stalls the server): `python -m server` prepares every route before
its ready line, so no burst's first requests build FastAPI's per-route state on the event loop
(a 170 ms stall under load, docs/benchmarks.md). The check reads FastAPI's own cache of endpoint
contexts: if a FastAPI upgrade moves it, this test says so (and `prepare_routes` logs and lets
the routes be prepared on first use)."""

from __future__ import annotations

from pathlib import Path

from fastapi.routing import APIRoute, _endpoint_context_cache, _IncludedRouter

from server.__main__ import prepare_routes
from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets


def _endpoints(routes: list) -> list:
    out = []
    for route in routes:
        if isinstance(route, _IncludedRouter):
            out += _endpoints(route.original_router.routes)
        elif isinstance(route, APIRoute):
            out.append(route.endpoint)
    return out


def test_every_route_is_prepared_before_the_first_request(tmp_path: Path) -> None:
    app = create_app(build_services(DataPaths(tmp_path), offline=False, secrets=FakeSecrets()))
    endpoints = _endpoints(app.router.routes)
    assert any(e.__name__ == "chat_turn" for e in endpoints)
    assert prepare_routes(app) == len(endpoints)
    assert all(id(e) in _endpoint_context_cache for e in endpoints)
