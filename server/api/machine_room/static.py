"""Serve the built frontend (`server/static/`) at `/`, with index.html for client routes."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from server.api.errors import SPA_PATH, not_allowed

MISSING_FRONTEND = """<!doctype html><title>Learning Harness</title>
<h1>The frontend is not built</h1>
<p>Run <code>npm ci &amp;&amp; npm run build</code> in <code>frontend/</code>, or reinstall the package
(<code>pip install -e .</code> builds it). The API is up at <code>/api/health</code>.</p>"""


def static_dir() -> Path:
    return Path(str(resources.files("server").joinpath("static")))


def mount_frontend(app: FastAPI, root: Path | None = None) -> None:
    """Serve `root/assets` as files and `root/index.html` for every other non-API path (a GET of
    an unknown `/api` path is a JSON 404; of one offering other methods, 405 with `Allow`)."""
    root = root or static_dir()
    index = root / "index.html"
    if (root / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=root / "assets"), name="assets")

    @app.get(SPA_PATH, include_in_schema=False, response_model=None)
    async def spa(path: str, request: Request) -> FileResponse | HTMLResponse | JSONResponse:
        if path.startswith("api/") or path == "api":
            # a GET of an API path that only takes other methods is 405 with `Allow`, else 404
            return not_allowed(request.scope, request.app.router.routes)
        if "\x00" in path:
            return HTMLResponse(
                '{"error":"bad_request","detail":"the path holds a NUL byte; no such page"}',
                status_code=400,
                media_type="application/json",
            )
        served = _served_file(root, path) if path else None
        if served is not None:
            return FileResponse(served)
        if index.is_file():
            return FileResponse(index, headers={"cache-control": "no-cache"})
        return HTMLResponse(MISSING_FRONTEND, status_code=503)


def _served_file(root: Path, path: str) -> Path | None:
    """`root/path` resolved when it is a regular file inside `root`; None otherwise (also for an
    over-long or otherwise unusable name)."""
    try:
        candidate = (root / path).resolve()
        inside = candidate.is_file() and candidate.is_relative_to(root.resolve())
    except (OSError, ValueError):
        return None
    return candidate if inside else None
