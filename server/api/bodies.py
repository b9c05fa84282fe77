"""Request bodies: strict JSON for every route, and the body-size limits (issue 10).

Every router uses `StrictRoute`: the JSON FastAPI parses for a pydantic body goes through
`server.core.json_body.parse_json_body` (no `NaN`/`Infinity`, no integer beyond ±2^53, no
overflowing number, nesting at most 64 deep), so those are refused with 400 before validation.

Body sizes are enforced while the body streams in (Starlette's `RequestBodyLimitMiddleware`, set
per app and per route through FastAPI's `max_body_size`): a declared `Content-Length` over the
limit is refused before any byte is read, and a chunked body as soon as it passes the limit;
`errors.py` answers 413 `too_large` naming the limit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.body_limit import MAX_BODY_SIZE_SCOPE_KEY
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.core.json_body import BodyRefused, parse_json_body

DEFAULT_MAX_BODY = 1_000_000
"""Largest request body of a route without its own limit (settings, renames, keys, deletes)."""


class BadBody(StarletteHTTPException):
    """A body refused while parsing (400 `bad_request`, the reason as detail)."""

    def __init__(self, detail: str) -> None:
        super().__init__(status_code=400, detail=detail)


class BodyTooLarge(StarletteHTTPException):
    """A body over a limit a route checks itself (413 `too_large`, naming `limit`)."""

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=too_large_detail(limit))
        self.limit = limit


async def json_body(request: Request, limit: int | None = None) -> Any:
    """The request's JSON, strictly parsed; with `limit`, read while counting (a longer body is
    refused as soon as it passes the limit). Raises BadBody or BodyTooLarge."""
    if limit is None:
        data = await request.body()
    else:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(limit)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge(limit)
            chunks.append(chunk)
        data = b"".join(chunks)
    try:
        return parse_json_body(data)
    except BodyRefused as exc:
        raise BadBody(str(exc)) from exc


class StrictRequest(Request):
    """A Request whose `json()` is `json_body` (used by FastAPI for pydantic bodies)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = await json_body(self)
        return self._json


class StrictRoute(APIRoute):
    """An APIRoute whose requests parse JSON strictly."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictRequest(request.scope, request.receive))

        return strict


def inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON schema with its `$defs` inlined (for `openapi_extra` request bodies of
    routes that parse their own body; the models are not recursive)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(defs[ref.removeprefix("#/$defs/")])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def request_body(content: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`openapi_extra` publishing a required request body: `{media type: JSON schema}`."""
    return {"requestBody": {"required": True, "content": {k: {"schema": v} for k, v in content.items()}}}


class JsonTooLarge:
    """Outermost ASGI wrapper: Starlette's body limiter answers a declared `Content-Length` over
    the limit with a plain-text 413 of its own; this rewrites it as the app's JSON refusal."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        replacing = False

        async def rewrite(message: Message) -> None:
            nonlocal replacing
            if message["type"] == "http.response.start" and message["status"] == 413:
                headers = dict(message.get("headers", []))
                replacing = headers.get(b"content-type", b"").startswith(b"text/plain")
                if replacing:
                    body = too_large_body(scope.get(MAX_BODY_SIZE_SCOPE_KEY))
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 413,
                            "headers": [
                                (b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": body})
                    return
            if replacing:
                return
            await send(message)

        await self.app(scope, receive, rewrite)


def too_large_detail(limit: object) -> str:
    size = f"over {limit:,} bytes" if isinstance(limit, int) else "too large"
    return f"the request body is {size}; it was refused unread past the limit, send less"


def too_large_body(limit: object) -> bytes:
    return json.dumps({"error": "too_large", "detail": too_large_detail(limit)}).encode()
