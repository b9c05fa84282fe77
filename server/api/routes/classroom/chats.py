"""Sessions: `GET/POST /api/chats`, `GET /api/chats/{id}`, and the turn `POST /api/chat`."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from server.api.bodies import StrictRoute, inline_schema, request_body
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, STREAM_OK, errors
from server.core.contracts.chat import ChatRecord, ChatRequest, ChatSummary, CreateChat, RenameChat
from server.core.contracts.models import ModelSlot
from server.services.classroom.turn_stream import STREAM_HEADERS


class SessionSettings(BaseModel):
    """`PUT /api/chats/{id}/settings` body: the session's own model.

    Attributes:
        model: the model this lesson runs on from its next turn.
        demo: the learner confirmed the offline demo model (the per-lesson editor's plain
            confirmation, as the demo screen's choice for `POST /api/chats`); a lesson is switched
            to the offline model (`provider: "local"`) only when this is true (issue 29, item 4).
    """

    model: ModelSlot
    demo: bool = False


router = APIRouter(route_class=StrictRoute, responses=GUARDED)

MAX_BODY_BYTES = 2_000_000
"""Largest `POST /api/chat` body accepted (the client sends the whole transcript); enforced while
the body streams in, so a larger one is refused (413) before it is read whole."""


class ChatList(BaseModel):
    """`GET /api/chats`' answer, for `/openapi.json` (the route encodes the rows itself)."""

    chats: list[ChatSummary]


@router.get(
    "/api/chats",
    response_model=None,
    responses={
        200: {
            "description": "Successful Response",
            "content": {"application/json": {"schema": inline_schema(ChatList)}},
        },
        **errors(503),
    },
)
async def list_chats(services: ServicesDep) -> Response:
    """`{"chats": [ChatSummary...]}`, most recently updated first (the body is encoded once per
    change of the rows, `ChatService.list_json`)."""
    return Response(services.chats.list_json(), media_type="application/json")


@router.post("/api/chats", status_code=201, responses=errors(400, 409, 413, 503))
async def create_chat(services: ServicesDep, body: CreateChat | None = None) -> dict[str, Any]:
    """A new session stamped with the strong slot's model; 503 models_not_configured when none
    resolves; 409 demo_not_chosen when it would be the offline demo model and `demo` is not true."""
    record = services.chats.create(body.title if body else None, demo=bool(body and body.demo))
    return record.model_dump(by_alias=True)


class ChatView(ChatRecord):
    """`GET /api/chats/{id}`'s answer, for `/openapi.json` only (the route splices the live fields
    into the stored bytes, see `with_fields`)."""

    running: bool
    last_failure: dict[str, str] | None


def with_fields(body: bytes, fields: dict[str, Any]) -> bytes:
    """The JSON object `body` with `fields` added after its own members, without parsing it:
    its closing brace is replaced by `,"k":v...}`. When `body` already has such a key, the added
    one comes last and wins (as the last duplicate does in `JSON.parse` and orjson).

    Args:
        body: the bytes of one JSON object (trailing whitespace allowed).
        fields: the members to add (orjson-serializable), at least one.
    Raises ValueError when `body` does not end with `}`."""
    head = body.rstrip()
    if not head.endswith(b"}"):
        raise ValueError("not a JSON object")
    head = head[:-1].rstrip()
    tail = orjson.dumps(fields)[1:]  # `"k":v,...}` without its opening brace
    return head + tail if head.endswith(b"{") else head + b"," + tail


@router.get(
    "/api/chats/{chat_id}",
    response_model=None,
    responses={
        200: {
            "description": "Successful Response",
            "content": {"application/json": {"schema": inline_schema(ChatView)}},
        },
        **errors(404, 503),
    },
)
async def get_chat(chat_id: str, services: ServicesDep) -> Response:
    """The whole record (metadata, UIMessages, usage) plus `running` and `lastFailure` (`{detail,
    at}` of the session's last accepted turn when it failed, memory only; else null); 404.

    The record's stored bytes are answered as they are (validated once per file change; a torn
    file is 503 store_corrupt), with the two live fields spliced in: the transcript is never
    re-serialized."""
    body = services.chats.get_json(chat_id)
    live = {
        "running": services.registry.running(chat_id),
        "lastFailure": services.turns.failures.get(chat_id),
    }
    return Response(with_fields(body, live), media_type="application/json")


@router.patch("/api/chats/{chat_id}", responses=errors(400, 404, 413, 503))
async def rename_chat(chat_id: str, body: RenameChat, services: ServicesDep) -> dict[str, Any]:
    """Rename a session; 404 unknown."""
    return services.chats.rename(chat_id, body.title).model_dump(by_alias=True)


@router.delete("/api/chats/{chat_id}", status_code=204, responses=errors(404, 409, 503))
async def delete_chat(chat_id: str, services: ServicesDep) -> Response:
    """Delete a session; 409 while a turn runs, 404 unknown."""
    services.chats.delete(chat_id)
    return Response(status_code=204)


@router.put("/api/chats/{chat_id}/settings", responses=errors(400, 404, 409, 413, 503))
async def put_chat_settings(chat_id: str, body: SessionSettings, services: ServicesDep) -> dict[str, Any]:
    """Pick this session's model (written to its record, not to settings); 409 turn_running while a
    turn runs; 409 demo_not_chosen when it would switch the lesson to the offline demo model and
    `demo` is not true (nothing written); 404 unknown."""
    return services.chats.set_model(chat_id, body.model, demo=body.demo).model_dump(by_alias=True)


@router.get(
    "/api/chats/{chat_id}/stream",
    response_model=None,
    responses={
        **STREAM_OK,
        204: {"description": "No turn runs in this session"},
        **errors(404, 503),
    },
)
async def reattach(chat_id: str, services: ServicesDep) -> StreamingResponse | Response:
    """Reattach to the session's running turn: its stream from the start; 204 when none runs."""
    services.chats.get(chat_id)
    lines = services.turns.follow(chat_id)
    if lines is None:
        return Response(status_code=204)
    return StreamingResponse(lines, media_type="text/event-stream", headers=dict(STREAM_HEADERS))


@router.post("/api/chats/{chat_id}/abort", responses=errors(404, 503))
async def abort_turn(chat_id: str, services: ServicesDep) -> dict[str, Any]:
    """Stop the running turn; it keeps what streamed. `{"aborted": bool}`."""
    services.chats.get(chat_id)
    return {"aborted": await services.turns.abort(chat_id)}


@router.post(
    "/api/chat",
    response_model=None,
    max_body_size=MAX_BODY_BYTES,
    openapi_extra=request_body({"application/json": inline_schema(ChatRequest)}),
    responses={
        **STREAM_OK,
        **errors(400, 404, 409, 413, 503),
    },
)
async def chat_turn(request: Request, services: ServicesDep) -> StreamingResponse:
    """Run one lesson turn and stream the AI SDK UI message stream (SSE, ends with `data: [DONE]`).

    Refusals (nothing written): 400 malformed, 404 unknown session, 409 turn running,
    413 body too large, 503 model not configured or unreachable. The body is parsed by the turn
    service itself (the record's own messages may hold what a strict parse refuses).
    """
    turn = await services.turns.start(await request.body())
    return StreamingResponse(turn.follow(), media_type="text/event-stream", headers=dict(STREAM_HEADERS))
