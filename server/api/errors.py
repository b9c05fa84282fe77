"""Every refusal is JSON `{"error": code, "detail": what to do}` with a fitting status.

The statuses each route can give are declared in `/openapi.json` with `errors(...)` (the body
schema `Refusal`); every `/api` route also declares 403 (`GUARDED`, the loopback guard), and
`publish_refusals` drops FastAPI's automatic 422 "Validation Error" (a malformed request is a
400 here). A method a path does not offer is 405 with `Allow` listing the ones it does
(`allowed_methods`).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.body_limit import MAX_BODY_SIZE_SCOPE_KEY
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from server.api.bodies import BodyTooLarge, too_large_detail
from server.core.ports import StoreCorrupt
from server.core.refusals import RefusalKind, Refused

log = logging.getLogger("lh.api")


class Refusal(BaseModel):
    """The body of every refusal (a route may add fields, e.g. the import's `files`)."""

    model_config = ConfigDict(extra="allow")

    error: str = Field(
        min_length=1, description="a code for programs, e.g. `bad_request`, `chat_not_found`, `forbidden`"
    )
    detail: str = Field(min_length=1, description="what happened and what to do, in plain words")


WHY: dict[int, str] = {
    400: "Malformed request (the detail names the field and the problem); nothing was changed",
    403: "Refused by the loopback guard (a foreign Host, Origin or Sec-Fetch-Site, or no app token)",
    404: "Not found (an unknown id; the detail says which)",
    409: "Conflicts with what runs now (e.g. a turn is running); nothing was changed",
    413: "The request body is over this route's limit; it was refused unread",
    422: "Understood but refused by the provider (the detail says what to change)",
    502: "The provider answered something unexpected",
    503: "Unavailable now: no model configured or reachable, or a stored record is unreadable",
}
"""What each declared error status means, for `/openapi.json`."""


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` declaring refusals with the `Refusal` body, e.g. `errors(400, 404, 503)`."""
    schema = Refusal.model_json_schema()
    return {
        status: {"description": WHY[status], "content": {"application/json": {"schema": schema}}}
        for status in statuses
    }


STREAM_OK: dict[int | str, dict[str, Any]] = {
    200: {"description": "The stream (SSE)", "content": {"text/event-stream": {"schema": {"type": "string"}}}}
}
"""`responses=` entry of a route answering a server-sent event stream."""

GUARDED = errors(403)
"""Declared by every router: the loopback guard may refuse any request."""

ALLOW_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
SPA_PATH = "/{path:path}"
"""The frontend's catch-all route (`static.py`): it answers GET for every path, but a `/api` path
it does not serve is not an API resource, so it never counts as allowing a method there."""


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope) -> list[str]:
    """The methods of `ALLOW_ORDER` the routes serve at `scope`'s path (empty: no such path),
    found by asking each route whether it fully matches the path with that method (FastAPI's
    included routers answer this too). The frontend's catch-all counts for page paths only."""
    path = scope.get("path", "")
    api = path == "/api" or path.startswith("/api/")
    methods = []
    for method in ALLOW_ORDER:
        probe = {**scope, "method": method}
        for route in routes:
            match, child = route.matches(dict(probe))
            if match is not Match.FULL:
                continue
            target = child.get("route", route)
            if api and getattr(target, "path", None) == SPA_PATH:
                continue
            methods.append(method)
            break
    return methods


def not_allowed(scope: Scope, routes: Iterable[BaseRoute]) -> JSONResponse:
    """405 with `Allow` when the path exists with other methods, else 404 (an unknown `/api` path)."""
    methods = allowed_methods(routes, scope)
    if not methods:
        return refusal(404, "not_found", "no such API route")
    method = scope.get("method", "")
    return refusal(
        405,
        "method_not_allowed",
        f"{method} is not offered here; use {', '.join(methods)}",
        {"allow": ", ".join(methods)},
    )


def publish_refusals(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop FastAPI's automatic 422 "Validation Error" from every operation of an OpenAPI
    `schema` (a request that fails validation is a 400 `bad_request` here, declared per route),
    and its component schemas once nothing refers to them. Mutates and returns `schema`."""
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            responses = operation.get("responses", {}) if isinstance(operation, dict) else {}
            if "HTTPValidationError" in json.dumps(responses.get("422", {})):
                del responses["422"]
    components = schema.get("components", {}).get("schemas", {})
    if "HTTPValidationError" not in json.dumps({k: v for k, v in schema.items() if k != "components"}):
        components.pop("HTTPValidationError", None)
        if "ValidationError" not in json.dumps(components):
            components.pop("ValidationError", None)
    return schema


def refusal(status: int, code: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": code, "detail": detail}, status_code=status, headers=headers)


STATUS_OF: dict[RefusalKind, int] = {
    "invalid": 400,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "refused_by_provider": 422,
    "provider_failed": 502,
    "unavailable": 503,
}
"""The HTTP status of each kind of refusal (`server.core.refusals.RefusalKind`): the one place the
core's refusals meet HTTP numbers."""


def refused(exc: Refused, **extra: Any) -> JSONResponse:
    """The JSON refusal for a domain refusal: its kind's status, `{"error": code, "detail": ...}`
    and any `extra` fields (e.g. an import's `files: []`); a known wait goes out as `Retry-After`
    (whole seconds, rounded up)."""
    headers = None if exc.retry_after_s is None else {"Retry-After": str(math.ceil(exc.retry_after_s))}
    return JSONResponse(
        {"error": exc.code, "detail": exc.detail, **extra}, status_code=STATUS_OF[exc.kind], headers=headers
    )


def install_error_handlers(app: FastAPI) -> None:
    """Map domain errors to JSON refusals; nothing here swallows a failed canonical write."""

    @app.exception_handler(Refused)
    async def _rejected(_: Request, exc: Refused) -> JSONResponse:
        return refused(exc)

    @app.exception_handler(StoreCorrupt)
    async def _corrupt(_: Request, exc: StoreCorrupt) -> JSONResponse:
        log.error("unreadable record: %s", exc)
        return refusal(503, "store_corrupt", str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return refusal(400, "bad_request", f"malformed request ({_problems(exc.errors(), skip=1)})")

    @app.exception_handler(ValidationError)
    async def _invalid_model(_: Request, exc: ValidationError) -> JSONResponse:
        return refusal(400, "bad_request", f"malformed request ({_problems(exc.errors(), skip=0)})")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 413:
            limit = exc.limit if isinstance(exc, BodyTooLarge) else request.scope.get(MAX_BODY_SIZE_SCOPE_KEY)
            return refusal(413, "too_large", too_large_detail(limit))
        if exc.status_code == 405:
            return not_allowed(request.scope, request.app.router.routes)
        code = {400: "bad_request", 404: "not_found"}.get(exc.status_code, "http_error")
        return refusal(exc.status_code, code, str(exc.detail), dict(exc.headers) if exc.headers else None)

    @app.exception_handler(OSError)
    async def _os_error(_: Request, exc: OSError) -> JSONResponse:
        log.exception("a canonical write failed")
        return refusal(500, "write_failed", f"saving failed ({exc}); nothing was accepted, try again")


def _problems(errors: Sequence[Any], *, skip: int) -> str:
    """The first three validation errors as `where: what` (`skip` drops the leading `body`; a
    validator's own sentence loses pydantic's "Value error, " prefix)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'][skip:]) or 'body'}: {_message(err)}" for err in errors[:3]
    )


def _message(err: Any) -> str:
    return str(err["msg"]).removeprefix("Value error, ")
