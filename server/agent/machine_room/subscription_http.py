"""What the three subscription logins' HTTP adapters share (issue 19 item 2; seed §8.1): the
client base (`ClientBase`: sending, renewing a grant), the errors they raise in plain words, the
`SubscriptionClient` protocol the service uses, the endpoint bases, and reading OAuth answers
(`answer_json`, `token_grant`, `refreshed_grant`). The providers' adapters are in
`subscription_clients`. No provider body ever reaches a sentence; tokens are never logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import httpx

from server.config import SUBSCRIPTION_BASE_ENV
from server.core.machine_room.subscription_credentials import jwt_expiry
from server.core.machine_room.subscriptions import (
    DEFAULT_INTERVAL_S,
    REVOKED_ERRORS,
    DeviceCode,
    Grant,
    PollOutcome,
)

log = logging.getLogger("lh.subscriptions")

TIMEOUT = httpx.Timeout(20.0, connect=10.0)


class RefreshRevoked(Exception):
    """The provider refused the durable credential: nothing renews it; connect again."""


class RefreshFailed(Exception):
    """A renewal failed for now (network, a server error); `str(exc)` is plain words."""


class ProviderUnavailable(Exception):
    """Starting a login failed; `str(exc)` is plain words for Settings."""


class SubscriptionClient(Protocol):
    provider: str

    async def start(self) -> DeviceCode: ...

    async def poll(self, code: DeviceCode) -> PollOutcome: ...

    async def refresh(self, grant: Grant) -> Grant: ...


def bases(environ: Mapping[str, str]) -> dict[str, str]:
    """The endpoint bases (`config.SUBSCRIPTION_BASE_ENV`), env first, without trailing slashes."""
    return {
        name: (environ.get(env) or default).rstrip("/")
        for name, (env, default) in SUBSCRIPTION_BASE_ENV.items()
    }


def answer_json(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def host_of(url: str) -> str:
    return httpx.URL(url).host or url


def expiry_at(now: float, expires_in: Any, token: str | None = None) -> float | None:
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and expires_in > 0:
        return now + float(expires_in)
    return jwt_expiry(token)


def poll_interval(value: Any) -> float:
    try:
        seconds = float(str(value).strip())
    except ValueError:
        return DEFAULT_INTERVAL_S
    return seconds if seconds >= 0 else DEFAULT_INTERVAL_S


def token_grant(
    tokens: dict[str, Any],
    now: float,
    previous: Grant | None,
    account_id: str | None = None,
    account: str | None = None,
) -> Grant:
    """A grant from an OAuth token answer `{access_token: str, refresh_token?, expires_in? (s)}`
    (`access_token` checked by the caller). What the answer leaves out (a renewal may omit the
    refresh token), and an `account_id`/`account` not given, keeps `previous`'s (None without one).
    The expiry is `now + expires_in`, else the access token's JWT `exp`."""
    access = str(tokens["access_token"])
    refresh = tokens.get("refresh_token")
    return Grant(
        access_token=access,
        refresh_token=refresh if isinstance(refresh, str) else (previous.refresh_token if previous else None),
        expires_at=expiry_at(now, tokens.get("expires_in"), access),
        account_id=account_id or (previous.account_id if previous else None),
        account=account or (previous.account if previous else None),
    )


class ClientBase:
    provider = ""

    def __init__(
        self, client: httpx.AsyncClient | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.client = client or httpx.AsyncClient(timeout=TIMEOUT)
        self.clock = clock

    async def aclose(self) -> None:
        await self.client.aclose()

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            log.warning("%s: %s %s failed: %s", self.provider, method, host_of(url), type(exc).__name__)
            raise ConnectionError(f"could not reach {host_of(url)}") from None

    async def _renew(
        self,
        grant: Grant,
        name: str,
        url: str,
        fields: dict[str, str],
        build: Callable[[dict[str, Any]], Grant],
        *,
        as_json: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Grant:
        """POST `fields` plus the grant's `refresh_token` to `url` (a JSON body with `as_json`, else
        a form) and `build` the renewed grant from the answer. RefreshRevoked without a refresh
        token or when the provider refuses it (`refreshed_grant`); RefreshFailed ("Could not renew the
        {name} login ...") when the provider cannot be reached or answers anything else."""
        if not grant.refresh_token:
            raise RefreshRevoked("no refresh token")
        body = {**fields, "refresh_token": grant.refresh_token}
        encoded: dict[str, Any] = {"json": body} if as_json else {"data": body}
        try:
            response = await self._send("POST", url, headers=headers, **encoded)
        except ConnectionError as exc:
            raise RefreshFailed(f"Could not renew the {name} login ({exc})") from None
        return refreshed_grant(response, name, build)


def refreshed_grant(response: httpx.Response, name: str, build: Callable[[dict[str, Any]], Grant]) -> Grant:
    """A refresh response as a grant; RefreshRevoked for a dead credential, RefreshFailed else."""
    data = answer_json(response)
    error = data.get("error")
    code = error.get("code") if isinstance(error, dict) else error
    if (
        response.status_code == 401
        or (response.status_code == 400 and code in REVOKED_ERRORS)
        or code in REVOKED_ERRORS
    ):
        raise RefreshRevoked(str(code or response.status_code))
    if response.status_code != 200 or not isinstance(data.get("access_token"), str):
        raise RefreshFailed(f"Could not renew the {name} login (HTTP {response.status_code})")
    return build(data)
