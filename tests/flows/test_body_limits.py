"""Issue 10, defect 8: body-size limits are enforced while the body streams in.

The app is driven at the ASGI level with a body sent in 64 KiB chunks (no Content-Length, like a
chunked upload): it must answer 413 after reading just past the limit, not after the whole body,
and must keep little memory. A declared Content-Length over the limit is refused before any
byte is read.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from server.api.bodies import DEFAULT_MAX_BODY
from server.api.routes.classroom.chats import MAX_BODY_BYTES
from server.api.routes.library.graph import MAX_POSITIONS_BODY
from server.api.routes.library.sources import MAX_FOLDER_BODY
from tests.flows.inprocess import scripted_app

CHUNK = 64 * 1024
TOTAL = 100 * 1024 * 1024


class Sender:
    """An ASGI client that streams `total` bytes in chunks and records what the app read."""

    def __init__(self, total: int, *, declare: bool) -> None:
        self.total, self.declare = total, declare
        self.read = 0
        self.status: int | None = None
        self.body = b""

    def scope(self, method: str, path: str) -> dict[str, Any]:
        headers = [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json")]
        if self.declare:
            headers.append((b"content-length", str(self.total).encode()))
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 5000),
            "server": ("127.0.0.1", 8765),
        }

    async def receive(self) -> dict[str, Any]:
        size = min(CHUNK, self.total - self.read)
        self.read += size
        body = b"x" * size  # a fresh object per chunk, as a server hands them over
        return {"type": "http.request", "body": body, "more_body": self.read < self.total}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")


ROUTES = [
    pytest.param("POST", "/api/chat", MAX_BODY_BYTES, id="chat-2MB"),
    pytest.param("PUT", "/api/graph/positions", MAX_POSITIONS_BODY, id="positions-32MB"),
    pytest.param("PUT", "/api/graph/settings", DEFAULT_MAX_BODY, id="render-settings-default"),
    pytest.param("PUT", "/api/settings", DEFAULT_MAX_BODY, id="settings-default"),
    pytest.param("POST", "/api/graph/import", MAX_FOLDER_BODY, id="import-json"),
]


@pytest.mark.parametrize(("method", "path", "limit"), ROUTES)
async def test_a_chunked_body_over_the_limit_is_refused_before_it_is_read_whole(
    data_dir: Path, method: str, path: str, limit: int
) -> None:
    app = scripted_app(data_dir)
    sender = Sender(TOTAL, declare=False)
    tracemalloc.start()
    try:
        await app(sender.scope(method, path), sender.receive, sender.send)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sender.status == 413, sender.body
    body = json.loads(sender.body)
    assert body["error"] == "too_large" and f"{limit:,}" in body["detail"]
    assert sender.read <= limit + CHUNK, (sender.read, limit)
    assert sender.read < TOTAL
    assert peak < limit + 2_000_000, peak  # the body is never held whole (100 MB)
    print(f"{path}: read {sender.read:,} of {TOTAL:,} bytes, peak traced memory {peak:,} bytes")


@pytest.mark.parametrize(("method", "path", "limit"), ROUTES)
async def test_a_declared_length_over_the_limit_is_refused_unread(
    data_dir: Path, method: str, path: str, limit: int
) -> None:
    app = scripted_app(data_dir)
    sender = Sender(limit + 1, declare=True)
    await app(sender.scope(method, path), sender.receive, sender.send)
    assert sender.status == 413, sender.body
    body = json.loads(sender.body)
    assert body["error"] == "too_large" and f"{limit:,}" in body["detail"]
    assert sender.read == 0
