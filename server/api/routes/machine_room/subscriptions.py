"""Subscription logins over HTTP (issue 19 item 2; seed §8.1; decision 0019).

Web mode (same-origin only, like every `/api` route; each refuses in desktop mode with 409):

    GET    /api/subscriptions                   -> status
    POST   /api/subscriptions/{provider}/login  body {} -> status (starts the device flow; a second
                                                 login while one is pending answers the same status)
    POST   /api/subscriptions/{provider}/cancel body {} -> status
    DELETE /api/subscriptions/{provider}        -> status (forget the saved connection)

Desktop mode only (404 in web mode; 403 without `x-lh-shell-secret` equal to `LH_SHELL_SECRET`):

    PUT    /api/shell/subscription-auth/{provider}  body {"accessToken", "expiresAt", "accountId", "baseUrl"}
    DELETE /api/shell/subscription-auth/{provider}

Status shape: `server.core.machine_room.subscriptions` (never a token). `provider` is one of `chatgpt`,
`github-copilot-subscription`, `xai-subscription` (anything else: 400 naming them).
"""

from __future__ import annotations

import hmac
import math
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.core.machine_room.subscriptions import ScopedAuth, SubscriptionProvider
from server.core.refusals import Refused

router = APIRouter(route_class=StrictRoute, responses=GUARDED)

SHELL_SECRET_HEADER = "x-lh-shell-secret"  # noqa: S105 - a header name, not a secret
DESKTOP_REASON = "the desktop app keeps subscription logins; use Settings"


class Empty(BaseModel):
    """`{}`: the control routes take no fields."""

    model_config = ConfigDict(extra="forbid")


class PushedAuth(BaseModel):
    """`PUT /api/shell/subscription-auth/{provider}` body: scoped request auth, no refresh token
    (an unknown field such as `refreshToken` is refused).

    Attributes:
        accessToken: the bearer (1-20000 printable ASCII characters, no whitespace; one shape
            in every regex dialect: Python, ECMA and Rust read `\\S` differently).
        expiresAt: the access token's expiry, epoch seconds.
        accountId: ChatGPT's account id header value, else null.
        baseUrl: the endpoint the token names (Copilot's `endpoints.api`), else null.
    """

    model_config = ConfigDict(extra="forbid")

    accessToken: str = Field(min_length=1, max_length=20_000, pattern=r"^[!-~]+$")
    expiresAt: float
    accountId: str | None = Field(default=None, max_length=500)
    baseUrl: str | None = Field(default=None, max_length=2_000, pattern=r"^https?://[!-~]+$")

    @field_validator("expiresAt")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value) or value <= 0:
            raise ValueError("expiresAt must be a positive number of epoch seconds")
        return value


def _web_only(services: Any) -> None:
    if services.subscriptions.desktop:
        raise Refused("conflict", "desktop_mode", DESKTOP_REASON)


@router.get("/api/subscriptions", responses=errors(409))
async def get_subscriptions(services: ServicesDep) -> dict[str, Any]:
    """Each provider's state, user code, verification link, expiry, account and error."""
    _web_only(services)
    return services.subscriptions.status()


@router.post("/api/subscriptions/{provider}/login", responses=errors(400, 409, 413))
async def login(provider: SubscriptionProvider, body: Empty, services: ServicesDep) -> dict[str, Any]:
    """Start the device flow (the status then carries the user code and the link)."""
    _web_only(services)
    return await services.subscriptions.login(provider)


@router.post("/api/subscriptions/{provider}/cancel", responses=errors(400, 409, 413))
async def cancel(provider: SubscriptionProvider, body: Empty, services: ServicesDep) -> dict[str, Any]:
    _web_only(services)
    return await services.subscriptions.cancel(provider)


@router.delete("/api/subscriptions/{provider}", responses=errors(400, 409))
async def logout(provider: SubscriptionProvider, services: ServicesDep) -> dict[str, Any]:
    _web_only(services)
    return await services.subscriptions.logout(provider)


async def _shell_only(request: Request, services: ServicesDep) -> None:
    """Runs before the body is read: web mode 404, a missing or wrong secret 403 (compared in
    constant time)."""
    owner = services.subscriptions
    if not owner.desktop:
        raise Refused("not_found", "not_found", "no such route in web mode")
    supplied = request.headers.get(SHELL_SECRET_HEADER, "")
    if not owner.shell_secret or not hmac.compare_digest(supplied.encode(), owner.shell_secret.encode()):
        raise Refused("forbidden", "forbidden", "only the desktop shell may push subscription auth")


@router.put(
    "/api/shell/subscription-auth/{provider}",
    status_code=204,
    dependencies=[Depends(_shell_only)],
    responses=errors(400, 404, 413),
)
async def push_auth(provider: SubscriptionProvider, body: PushedAuth, services: ServicesDep) -> Response:
    """Desktop main pushes scoped request auth (held in memory only, never written)."""
    services.subscriptions.push(
        provider, ScopedAuth(body.accessToken, body.expiresAt, body.accountId, body.baseUrl)
    )
    return Response(status_code=204)


@router.delete(
    "/api/shell/subscription-auth/{provider}",
    status_code=204,
    dependencies=[Depends(_shell_only)],
    responses=errors(400, 404),
)
async def withdraw_auth(provider: SubscriptionProvider, services: ServicesDep) -> Response:
    services.subscriptions.withdraw(provider)
    return Response(status_code=204)
