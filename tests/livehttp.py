"""A real uvicorn server in a background thread, on a free loopback port, for flow tests."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

from server.api.app import close_streams


class _Server(uvicorn.Server):
    """Ends open event streams as the shutdown begins, as `python -m server` does."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        close_streams(self.config.app)
        await super().shutdown(sockets=sockets)


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run `app` until the block ends; yields its base URL (`http://127.0.0.1:<port>`)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
