"""Issue 16 (health p99 during a vault import): `/api/health` is answered on the event loop alone.

FastAPI runs a plain `def` dependency in a worker thread of anyio's pool; the services dependency
every route takes was one, so each request (health too) waited for a pool thread and two GIL
hand-offs, which an import's busy worker threads stretched. Here the server's pool is held full
(one token, taken by a thread that waits): health must still answer at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import anyio.to_thread
import httpx

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets
from tests.livehttp import serve


def test_health_answers_while_every_worker_thread_is_taken(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    app = create_app(build_services(DataPaths(data_dir), offline=False, secrets=FakeSecrets()))
    release = threading.Event()
    held: list[asyncio.Task[bool]] = []

    async def occupy() -> dict[str, int]:
        """Test-only route, on the server's loop: its thread pool gets one token, held."""
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = 1
        held.append(asyncio.ensure_future(anyio.to_thread.run_sync(release.wait)))
        while limiter.borrowed_tokens < 1:
            await asyncio.sleep(0.01)
        return {"borrowed": int(limiter.borrowed_tokens)}

    app.add_api_route("/api/test-occupy", occupy)
    app.router.routes.insert(0, app.router.routes.pop())  # before the app's catch-all for /api
    with serve(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        try:
            assert client.get("/api/test-occupy").json() == {"borrowed": 1}
            start = time.monotonic()
            answer = client.get("/api/health", timeout=3)  # a thread hop would wait for the token
            assert answer.status_code == 200 and answer.json()["status"] == "ok"
            assert time.monotonic() - start < 3
        finally:
            release.set()
