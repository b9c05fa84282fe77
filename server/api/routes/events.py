"""`GET /api/events`: the app-scoped change channel (seed §10), the SSE seam over the core's bus.

One connection per window. Each event is `event: <name>` + `data: <json>`; a `: ping` comment
every 25 s keeps proxies and the browser's EventSource from timing the connection out. The server
never ends the stream first, except when it stops (`close_streams`, called as uvicorn begins its
graceful shutdown, so open streams do not hold it up); a disconnect removes the listener. A
window that falls behind by more than `BACKLOG` events gets one `resync` event instead of the
oldest ones (an event only says "refetch", so nothing is lost but the repetition).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from sse_starlette import EventSourceResponse, ServerSentEvent

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, STREAM_OK
from server.core.events import EventBus

router = APIRouter(route_class=StrictRoute, responses=GUARDED)

PING_S = 25.0
BACKLOG = 256
"""Events a connection may hold unsent before they collapse into one `resync`."""


def _ping() -> ServerSentEvent:
    return ServerSentEvent(comment="ping")


async def event_stream(bus: EventBus) -> AsyncIterator[ServerSentEvent]:
    """The bus as SSE events, from subscription until the consumer stops iterating."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    queue: asyncio.Queue[ServerSentEvent | None] = asyncio.Queue()  # None: the server stops
    overflow = False

    def put(event: ServerSentEvent) -> None:
        nonlocal overflow
        if queue.qsize() >= BACKLOG:
            overflow = True
            return
        queue.put_nowait(event)

    def listener(name: str, data: dict[str, Any]) -> None:
        event = ServerSentEvent(event=name, data=json.dumps(data, separators=(",", ":")))
        if threading.get_ident() == loop_thread:
            put(event)
        else:  # an emitter on a worker thread: hand over to the connection's loop
            loop.call_soon_threadsafe(put, event)

    def closing() -> None:
        if threading.get_ident() == loop_thread:
            queue.put_nowait(None)
        else:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    unsubscribe = bus.subscribe(listener, on_close=closing)
    try:
        yield ServerSentEvent(comment="connected", retry=2000)
        while True:
            event = await queue.get()
            if event is None:  # the one time the server ends the stream: it is stopping
                return
            if overflow:
                overflow = False
                while not queue.empty():
                    queue.get_nowait()
                yield ServerSentEvent(event="resync", data="{}")
                continue
            yield event
    finally:
        unsubscribe()


@router.get(
    "/api/events",
    response_model=None,
    response_class=EventSourceResponse,
    responses=STREAM_OK,
)
async def events(services: ServicesDep) -> EventSourceResponse:
    """Server-sent change events: `turn-started`/`turn-settled`/`jobs-changed` `{chatId}`,
    `activity-changed`/`chats-changed`/`graph-changed` `{}` (see `server/core/events.py`)."""
    return EventSourceResponse(
        event_stream(services.events),
        ping=PING_S,
        ping_message_factory=_ping,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
