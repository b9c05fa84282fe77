"""Sessions: `GET/POST /api/chats`, `GET /api/chats/{id}`, and the turn `POST /api/chat`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from server.api.deps import ServicesDep
from server.core.contracts.chat import CreateChat

router = APIRouter()

MAX_BODY_BYTES = 2_000_000
"""Largest `POST /api/chat` body accepted (the client sends the whole transcript)."""


@router.get("/api/chats")
async def list_chats(services: ServicesDep) -> dict[str, Any]:
    """`{"chats": [ChatSummary...]}`, most recently updated first."""
    return {"chats": [row.model_dump(by_alias=True) for row in services.chats.list()]}


@router.post("/api/chats", status_code=201)
async def create_chat(services: ServicesDep, body: CreateChat | None = None) -> dict[str, Any]:
    """A new session stamped with the strong slot's model; 503 models_not_configured when none resolves."""
    record = services.chats.create(body.title if body else None)
    return record.model_dump(by_alias=True)


@router.get("/api/chats/{chat_id}")
async def get_chat(chat_id: str, services: ServicesDep) -> dict[str, Any]:
    """The whole record: metadata and UIMessages; 404 chat_not_found."""
    return services.chats.get(chat_id).model_dump(by_alias=True)


@router.post("/api/chat", response_model=None)
async def chat_turn(request: Request, services: ServicesDep) -> StreamingResponse | JSONResponse:
    """Run one lesson turn and stream the AI SDK UI message stream (SSE, ends with `data: [DONE]`).

    Refusals (nothing written): 400 malformed, 404 unknown session, 409 turn running,
    413 body too large, 503 model not configured or unreachable.
    """
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        return JSONResponse(
            {"error": "too_large", "detail": f"the request is over {MAX_BODY_BYTES} bytes"}, status_code=413
        )
    turn = await services.turns.start(body)
    return StreamingResponse(turn.lines, media_type="text/event-stream", headers=turn.headers)
