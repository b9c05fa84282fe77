"""The subscription connection owner (issue 19 item 2; seed §8.1): one per server process.

Web mode (no `LH_API_TOKEN`): this service owns the three logins. It runs the device flows (one
background polling task per pending login; a second login while one is pending answers the same
pending status), keeps each connection in its owner-only file (`<data dir>/subscriptions/`), and
renews an access token ahead of its expiry when a model call asks for it, one renewal at a time
per provider (an `asyncio.Lock` each).

Desktop mode (`LH_API_TOKEN` set): Electron main owns the logins and the credential files; it
pushes scoped request auth (no refresh token) through `push`/`withdraw`
(`PUT/DELETE /api/shell/subscription-auth/{provider}`). This service then only holds what was
pushed, in memory, and never reads or writes the data dir.

Either way the model routes read credentials through one port, `current(provider)` (see
`server.core.machine_room.subscriptions.SubscriptionAuth`), and every change of a state emits
`subscriptions-changed` (notify -> fetch).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from server.agent.machine_room.subscription_http import (
    ProviderUnavailable,
    RefreshFailed,
    RefreshRevoked,
    SubscriptionClient,
)
from server.core.events import EventBus
from server.core.machine_room.subscriptions import (
    DISCONNECTED,
    REFRESH_LEAD_S,
    SUBSCRIPTION_PROVIDERS,
    CredentialRefused,
    DeviceCode,
    Grant,
    Login,
    ScopedAuth,
    SubscriptionStore,
    connected,
    failed,
    next_poll_delay,
    on_poll,
    pending,
    refresh_due,
    revoked_sentence,
    status_view,
)

log = logging.getLogger("lh.subscriptions")


class UnknownProvider(ValueError):
    """Not one of `SUBSCRIPTION_PROVIDERS`."""


class SubscriptionService:
    """The process-global owner.

    Args:
        store: web mode's credential files (None in desktop mode: nothing is written).
        clients: provider id -> its HTTP adapter (`server.agent.machine_room.subscription_clients`).
        events: the bus behind `GET /api/events`.
        desktop: True when Electron main owns the logins (`LH_API_TOKEN` set).
        shell_secret: desktop mode's `LH_SHELL_SECRET` (None: pushes are refused).
        clock: epoch seconds (tests pass a fake).
        sleep: waits between polls (tests pass a fast one).
        lead_s: renew this many seconds before an access token expires.
    """

    def __init__(
        self,
        store: SubscriptionStore | None,
        clients: Mapping[str, SubscriptionClient],
        events: EventBus | None,
        *,
        desktop: bool,
        shell_secret: str | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        lead_s: float = REFRESH_LEAD_S,
    ) -> None:
        self.store = None if desktop else store
        self.clients = dict(clients)
        self.events = events
        self.desktop = desktop
        self.shell_secret = shell_secret or None
        self.clock = clock
        self.sleep = sleep
        self.lead_s = lead_s
        self._logins: dict[str, Login] = {}
        self._grants: dict[str, Grant] = {}
        self._pushed: dict[str, ScopedAuth] = {}
        self._loaded: set[str] = set()
        self._polls: dict[str, asyncio.Task[None]] = {}
        self._refresh_locks: dict[str, asyncio.Lock] = {}
        self._login_locks: dict[str, asyncio.Lock] = {}

    # -- reading ---------------------------------------------------------------------------------
    def _check(self, provider: str) -> None:
        if provider not in SUBSCRIPTION_PROVIDERS:
            raise UnknownProvider(
                f"unknown subscription provider {provider!r}; one of {', '.join(SUBSCRIPTION_PROVIDERS)}"
            )

    def _load(self, provider: str) -> None:
        """Read the provider's file once (web mode); a refused file is an error state, kept aside."""
        if provider in self._loaded or self.store is None:
            return
        self._loaded.add(provider)
        try:
            grant = self.store.load(provider)
        except CredentialRefused as exc:
            log.warning("%s: %s", provider, exc)
            self._logins[provider] = failed(str(exc))
            return
        except OSError as exc:
            log.warning("%s: the saved login could not be read: %s", provider, exc)
            self._logins[provider] = failed(
                f"The saved login could not be read ({exc.strerror or exc}); connect again"
            )
            return
        if grant is not None:
            self._grants[provider] = grant
            self._logins[provider] = connected(grant)

    def login_state(self, provider: str) -> Login:
        self._check(provider)
        if self.desktop:
            auth = self._pushed.get(provider)
            return Login(state="connected", expires_at=auth.expires_at) if auth else DISCONNECTED
        self._load(provider)
        return self._logins.get(provider, DISCONNECTED)

    def status(self) -> dict[str, Any]:
        """The contract's status shape (no token)."""
        return status_view(self.desktop, {p: self.login_state(p) for p in SUBSCRIPTION_PROVIDERS})

    # -- the SubscriptionAuth port ----------------------------------------------------------------
    def connected(self, provider: str) -> bool:
        """Whether a connection (web) or pushed auth (desktop) exists, expired or not."""
        if provider not in SUBSCRIPTION_PROVIDERS:
            return False
        if self.desktop:
            return provider in self._pushed
        self._load(provider)
        return provider in self._grants

    def error(self, provider: str) -> str | None:
        """The provider's error state in plain words (e.g. a revoked login), else None."""
        if provider not in SUBSCRIPTION_PROVIDERS or self.desktop:
            return None
        return self.login_state(provider).error

    async def current(self, provider: str) -> ScopedAuth | None:
        """Scoped auth for one model request. Web mode renews the token first when it expires
        within `lead_s` (one renewal per provider at a time; a call that waited for another's
        renewal uses its result). None when there is no connection (or it was just revoked)."""
        if provider not in SUBSCRIPTION_PROVIDERS:
            return None
        if self.desktop:
            return self._pushed.get(provider)
        self._load(provider)
        grant = self._grants.get(provider)
        if grant is None:
            return None
        if refresh_due(grant.expires_at, self.clock(), self.lead_s):
            grant = await self._refresh(provider)
            if grant is None:
                return None
        return ScopedAuth(grant.access_token, grant.expires_at, grant.account_id, grant.base_url)

    async def _refresh(self, provider: str) -> Grant | None:
        lock = self._refresh_locks.setdefault(provider, asyncio.Lock())
        async with lock:
            grant = self._grants.get(provider)
            if grant is None or not refresh_due(grant.expires_at, self.clock(), self.lead_s):
                return grant  # renewed (or forgotten) while this call waited
            try:
                renewed = await self.clients[provider].refresh(grant)
            except RefreshRevoked:
                log.warning("%s: the saved login was refused on renewal; it is forgotten", provider)
                self._forget(provider)
                self._set(provider, failed(revoked_sentence(provider)))
                return None
            except RefreshFailed as exc:
                log.warning("%s: renewal failed: %s", provider, exc)
                return grant  # still usable until it expires; the model call says so after
            self._save(provider, renewed)
            return renewed

    def _save(self, provider: str, grant: Grant) -> None:
        self._grants[provider] = grant
        if self.store is not None:
            try:
                self.store.save(provider, grant)
            except OSError as exc:  # the connection works for this run; the next start asks again
                log.error("%s: saving the login failed: %s", provider, exc)
                self._set(
                    provider, failed(f"The login could not be saved ({exc.strerror or exc}); connect again")
                )
                return
        self._set(provider, connected(grant))

    def _forget(self, provider: str) -> None:
        self._grants.pop(provider, None)
        if self.store is not None:
            try:
                self.store.delete(provider)
            except OSError as exc:
                log.error("%s: removing the saved login failed: %s", provider, exc)

    def _set(self, provider: str, login: Login) -> None:
        before = self._logins.get(provider, DISCONNECTED)
        self._logins[provider] = login
        if before != login and self.events is not None:
            self.events.emit("subscriptions-changed", {})

    # -- web mode controls ------------------------------------------------------------------------
    async def login(self, provider: str) -> dict[str, Any]:
        """Start the device flow; a login already pending answers its status unchanged. A
        provider that cannot start leaves the state in error with plain words."""
        self._check(provider)
        self._load(provider)
        lock = self._login_locks.setdefault(provider, asyncio.Lock())
        async with lock:
            if self.login_state(provider).state == "pending":
                return self.status()
            try:
                code = await self.clients[provider].start()
            except ProviderUnavailable as exc:
                self._set(provider, failed(str(exc)))
                return self.status()
            self._set(provider, pending(code))
            self._polls[provider] = asyncio.create_task(
                self._poll_loop(provider, code), name=f"login-{provider}"
            )
        return self.status()

    async def _poll_loop(self, provider: str, code: DeviceCode) -> None:
        try:
            while True:
                login = self._logins.get(provider, DISCONNECTED)
                if login.code is not code:
                    return  # cancelled or replaced
                delay = next_poll_delay(login, self.clock())
                if delay is None:
                    return
                await self.sleep(delay)
                if self._logins.get(provider, DISCONNECTED).code is not code:
                    return
                outcome = await self.clients[provider].poll(code)
                login = self._logins.get(provider, DISCONNECTED)
                if login.code is not code:
                    return
                after = on_poll(login, outcome, self.clock())
                if after.state == "connected" and outcome.grant is not None:
                    self._save(provider, outcome.grant)
                    return
                self._set(provider, after)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: the sign-in poll failed", provider)
            if self._logins.get(provider, DISCONNECTED).code is code:
                self._set(provider, failed("The sign-in failed unexpectedly; connect again"))
        finally:
            if self._polls.get(provider) is asyncio.current_task():
                self._polls.pop(provider, None)

    async def cancel(self, provider: str) -> dict[str, Any]:
        """Stop a pending login (the saved connection, if any, stays); nothing pending: no change."""
        self._check(provider)
        self._load(provider)
        if self.login_state(provider).state != "pending":
            return self.status()
        await self._stop_poll(provider)
        grant = self._grants.get(provider)
        self._set(provider, connected(grant) if grant else DISCONNECTED)
        return self.status()

    async def logout(self, provider: str) -> dict[str, Any]:
        """Forget the saved connection (and stop a pending login)."""
        self._check(provider)
        self._load(provider)
        await self._stop_poll(provider)
        self._forget(provider)
        self._set(provider, DISCONNECTED)
        return self.status()

    async def _stop_poll(self, provider: str) -> None:
        task = self._polls.pop(provider, None)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- desktop mode: what Electron main pushes --------------------------------------------------
    def push(self, provider: str, auth: ScopedAuth) -> None:
        """Hold main's scoped auth for `provider` (replaces what was pushed before)."""
        self._check(provider)
        before = self._pushed.get(provider)
        self._pushed[provider] = auth
        if before != auth and self.events is not None:
            self.events.emit("subscriptions-changed", {})

    def withdraw(self, provider: str) -> None:
        """Drop what main pushed (a logout or a failed renewal in main)."""
        self._check(provider)
        if self._pushed.pop(provider, None) is not None and self.events is not None:
            self.events.emit("subscriptions-changed", {})

    async def shutdown(self) -> None:
        """Stop pending logins' polling (a login left pending is simply not finished) and close
        the adapters' HTTP connections."""
        for provider in list(self._polls):
            await self._stop_poll(provider)
        closed: set[int] = set()
        for client in self.clients.values():
            close = getattr(client, "aclose", None)
            if close is not None and id(client) not in closed:
                closed.add(id(client))
                with contextlib.suppress(Exception):
                    await close()
