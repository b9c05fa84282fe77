"""Every refusal is JSON `{"error": code, "detail": what to do}` with a fitting status."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.body_limit import MAX_BODY_SIZE_SCOPE_KEY

from server.api.bodies import BodyTooLarge, too_large_detail
from server.core.classroom.turns import TurnRejected
from server.core.ports import StoreCorrupt

log = logging.getLogger("lh.api")


def refusal(status: int, code: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": code, "detail": detail}, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Map domain errors to JSON refusals; nothing here swallows a failed canonical write."""

    @app.exception_handler(TurnRejected)
    async def _rejected(_: Request, exc: TurnRejected) -> JSONResponse:
        return refusal(exc.status, exc.code, exc.detail, exc.headers)

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
        code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}.get(
            exc.status_code, "http_error"
        )
        return refusal(exc.status_code, code, str(exc.detail))

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
