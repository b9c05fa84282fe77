"""Subscription logins (seed §8.1; issue 19 item 2): the device-flow state machine, refresh-ahead
timing and the status projection, pure (a token's claims and the credential file's record are in
`subscription_credentials`).

Three providers, each a single saved connection: `chatgpt` (OpenAI's device code login as the
Codex CLI does it), `github-copilot-subscription` (GitHub's device flow, then the Copilot token
exchange) and `xai-subscription` (a standard RFC 8628 device authorization grant). The adapters
(`server.agent.machine_room.subscription_clients`) speak HTTP and turn each poll into a `PollOutcome`; this
module decides what the login's state becomes. Nothing here holds a token in what it projects:
`status_view` is the only shape that leaves the server (docs/decisions/0019-subscription-logins.md).

Status shape (identical in web mode, `GET /api/subscriptions`, and in desktop mode,
`window.lhDesktop.subscriptions.status()`)::

    {"mode": "web"|"desktop",
     "providers": {"<id>": {"state": "disconnected"|"pending"|"connected"|"error",
                            "userCode": str|null, "verificationUri": str|null,
                            "expiresAt": number|null, "account": str|null, "error": str|null}}}

`expiresAt` is in epoch seconds: the access token's expiry when connected, the user code's when
pending.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, get_args

SubscriptionProvider = Literal["chatgpt", "github-copilot-subscription", "xai-subscription"]
SUBSCRIPTION_PROVIDERS: tuple[SubscriptionProvider, ...] = get_args(SubscriptionProvider)

LABELS: dict[str, str] = {
    "chatgpt": "ChatGPT subscription",
    "github-copilot-subscription": "GitHub Copilot subscription",
    "xai-subscription": "xAI subscription",
}
"""What Settings calls each provider (the model slot picker's labels)."""

SHORT_NAMES: dict[str, str] = {
    "chatgpt": "ChatGPT",
    "github-copilot-subscription": "GitHub Copilot",
    "xai-subscription": "xAI",
}

SLOW_DOWN_STEP_S = 5.0
"""RFC 8628 §3.5: on `slow_down` the polling interval grows by 5 seconds, for good."""
DEFAULT_INTERVAL_S = 5.0
"""The polling interval when the provider names none (RFC 8628 §3.2)."""
DEFAULT_CODE_LIFETIME_S = 15 * 60.0
"""A user code's lifetime when the provider names none (the Codex CLI's 15 minutes)."""
REFRESH_LEAD_S = 300.0
"""An access token is renewed this many seconds before it expires (refresh-ahead)."""

State = Literal["disconnected", "pending", "connected", "error"]
PollKind = Literal["pending", "slow_down", "expired", "denied", "granted", "failed"]


def not_connected_sentence(provider: str) -> str:
    """The model-call refusal when a subscription route has no connection (contract wording)."""
    return (
        f"Your {SHORT_NAMES.get(provider, provider)} subscription is not connected. Connect it in Settings."
    )


def expired_sentence(provider: str, *, desktop: bool) -> str:
    """The model-call refusal when the scoped auth passed its expiry. In desktop mode Electron main
    renews it and pushes it again; in web mode a failed renewal leaves the state in error."""
    name = SHORT_NAMES.get(provider, provider)
    if desktop:
        return f"Your {name} subscription login expired; the app is renewing it, try again"
    return (
        f"Your {name} subscription login expired and could not be renewed just now; "
        "try again, or connect it again in Settings"
    )


def revoked_sentence(provider: str) -> str:
    """The state's error when a refresh is refused (`invalid_grant`, 401): nothing renews it."""
    return f"Your {SHORT_NAMES.get(provider, provider)} subscription login was revoked; connect again"


def refused_sentence(provider: str) -> str:
    """A model call refused for its credentials (HTTP 401/403) on a subscription route."""
    return (
        f"the provider refused the {SHORT_NAMES.get(provider, provider)} subscription login; "
        "connect it again in Settings"
    )


@dataclass(frozen=True)
class DeviceCode:
    """What the provider answered to the device code request.

    Attributes:
        handle: what polling sends back (RFC 8628 `device_code`; OpenAI's `device_auth_id`).
        user_code: the code the learner types on the verification page (public).
        verification_uri: the page where the learner types it.
        expires_at: when the user code stops working, epoch seconds.
        interval_s: seconds between polls.
    """

    handle: str
    user_code: str
    verification_uri: str
    expires_at: float
    interval_s: float


@dataclass(frozen=True)
class Grant:
    """Tokens a finished login or a refresh produced (never projected).

    Attributes:
        access_token: what model requests carry (`Authorization: Bearer ...`).
        refresh_token: renews the access token (Copilot: the GitHub OAuth token, exchanged again).
        expires_at: the access token's expiry, epoch seconds (None: unknown, treated as long-lived).
        account_id: ChatGPT's `chatgpt-account-id` header value; None elsewhere.
        account: who is signed in, for Settings (an e-mail, a login), or None.
        base_url: where model requests go when the token says (Copilot's `endpoints.api`), else None.
    """

    access_token: str
    refresh_token: str | None
    expires_at: float | None
    account_id: str | None = None
    account: str | None = None
    base_url: str | None = None


@dataclass(frozen=True)
class PollOutcome:
    """One poll of the token endpoint, classified by the adapter.

    Attributes:
        kind: pending (authorization_pending), slow_down, expired (expired_token), denied
            (access_denied), granted, failed (anything else: `detail` says it in plain words).
        grant: the tokens when granted.
        detail: plain words for `failed` (never a raw provider body).
    """

    kind: PollKind
    grant: Grant | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Login:
    """One provider's login state (in memory; the durable part is the credential file).

    Attributes:
        state: disconnected | pending | connected | error.
        code: the device code while pending.
        interval_s: the current polling interval while pending (grows on slow_down).
        expires_at: pending: the user code's expiry; connected: the access token's; else None.
        account: who is signed in (connected), else None.
        error: plain words (state error), else None.
    """

    state: State = "disconnected"
    code: DeviceCode | None = None
    interval_s: float = DEFAULT_INTERVAL_S
    expires_at: float | None = None
    account: str | None = None
    error: str | None = None


DISCONNECTED = Login()


def pending(code: DeviceCode) -> Login:
    """A login that waits for the learner to enter `code.user_code`."""
    interval = code.interval_s if code.interval_s > 0 else DEFAULT_INTERVAL_S
    return Login(state="pending", code=code, interval_s=interval, expires_at=code.expires_at)


def connected(grant: Grant) -> Login:
    return Login(state="connected", expires_at=grant.expires_at, account=grant.account)


def failed(error: str) -> Login:
    return Login(state="error", error=error)


def on_poll(login: Login, outcome: PollOutcome, now: float) -> Login:
    """The next state after one poll (RFC 8628 §3.5).

    - pending: unchanged, unless the user code has expired by `now` (then error).
    - slow_down: the interval grows by `SLOW_DOWN_STEP_S`.
    - expired: error "The code expired before it was entered; connect again".
    - denied: error "The sign-in was declined; connect again".
    - granted: connected.
    - failed: error with the adapter's plain words.

    A login that is no longer pending (cancelled, finished) ignores late polls.
    """
    if login.state != "pending":
        return login
    if outcome.kind == "granted" and outcome.grant is not None:
        return connected(outcome.grant)
    if outcome.kind == "expired" or (
        outcome.kind in ("pending", "slow_down") and login.expires_at is not None and now >= login.expires_at
    ):
        return failed("The code expired before it was entered; connect again")
    if outcome.kind == "denied":
        return failed("The sign-in was declined; connect again")
    if outcome.kind == "slow_down":
        return replace(login, interval_s=login.interval_s + SLOW_DOWN_STEP_S)
    if outcome.kind == "pending":
        return login
    return failed(outcome.detail or "The sign-in failed; connect again")


def next_poll_delay(login: Login, now: float) -> float | None:
    """Seconds until the next poll of a pending login, never past the code's expiry; None when
    the login is not pending."""
    if login.state != "pending":
        return None
    if login.expires_at is None:
        return login.interval_s
    return max(0.0, min(login.interval_s, login.expires_at - now))


def refresh_due(expires_at: float | None, now: float, lead_s: float = REFRESH_LEAD_S) -> bool:
    """Whether an access token expiring at `expires_at` should be renewed now (refresh-ahead: within
    `lead_s` of its expiry, or past it). An unknown expiry never is."""
    return expires_at is not None and now >= expires_at - lead_s


def refresh_delay(expires_at: float | None, now: float, lead_s: float = REFRESH_LEAD_S) -> float | None:
    """Seconds until a refresh is due (0 when due now); None for an unknown expiry."""
    if expires_at is None:
        return None
    return max(0.0, expires_at - lead_s - now)


@dataclass(frozen=True)
class ScopedAuth:
    """What one model request needs, and nothing that renews it (no refresh token).

    Attributes:
        access_token: the bearer.
        expires_at: epoch seconds (None: unknown).
        account_id: ChatGPT's account id header, else None.
        base_url: the endpoint the token names (Copilot), else None (the provider's default).
    """

    access_token: str
    expires_at: float | None
    account_id: str | None = None
    base_url: str | None = None

    def __repr__(self) -> str:  # never a token in a log line or a traceback
        return (
            f"ScopedAuth(expires_at={self.expires_at!r}, account_id={self.account_id!r}, "
            f"base_url={self.base_url!r})"
        )


class SubscriptionAuth(Protocol):
    """The one port a model route reads its credentials through (web owner or desktop push)."""

    desktop: bool

    def connected(self, provider: str) -> bool:
        """Whether a connection (or pushed auth) exists, expired or not."""
        ...

    async def current(self, provider: str) -> ScopedAuth | None:
        """The scoped auth for one request (web mode renews it first when due), or None."""
        ...

    def error(self, provider: str) -> str | None:
        """The login's error in plain words (e.g. revoked), else None."""
        ...


def auth_problem(provider: str, auth: ScopedAuth | None, now: float, *, desktop: bool) -> str | None:
    """Why a model call on a subscription route cannot run with `auth`, or None when it can."""
    if auth is None:
        return not_connected_sentence(provider)
    if auth.expires_at is not None and now >= auth.expires_at:
        return expired_sentence(provider, desktop=desktop)
    return None


def provider_view(login: Login) -> dict[str, Any]:
    """One provider's projection (camelCase, no token)."""
    code = login.code if login.state == "pending" else None
    return {
        "state": login.state,
        "userCode": code.user_code if code else None,
        "verificationUri": code.verification_uri if code else None,
        "expiresAt": login.expires_at if login.state in ("pending", "connected") else None,
        "account": login.account if login.state == "connected" else None,
        "error": login.error if login.state == "error" else None,
    }


def status_view(desktop: bool, logins: dict[str, Login]) -> dict[str, Any]:
    """The status shape of the contract, for every provider (a missing one is disconnected)."""
    return {
        "mode": "desktop" if desktop else "web",
        "providers": {p: provider_view(logins.get(p, DISCONNECTED)) for p in SUBSCRIPTION_PROVIDERS},
    }


def classify_device_error(error: Any) -> PollKind:
    """An RFC 8628 §3.5 token-endpoint `error` as a poll outcome kind (anything unknown: failed)."""
    return {
        "authorization_pending": "pending",
        "slow_down": "slow_down",
        "expired_token": "expired",
        "access_denied": "denied",
    }.get(error if isinstance(error, str) else "", "failed")  # type: ignore[return-value]


REVOKED_ERRORS = frozenset(
    {
        "invalid_grant",
        "refresh_token_expired",
        "refresh_token_reused",
        "refresh_token_invalidated",
        "unauthorized_client",
    }
)
"""Token-endpoint errors that mean a refresh token will never work again (OAuth 2.0 §5.2, and
OpenAI's own codes as the Codex CLI reads them)."""


class CredentialRefused(Exception):
    """A saved credential file that cannot be used (garbage, a wrong shape, readable by others);
    the store has set it aside. `str(exc)` is plain words for Settings."""


class SubscriptionStore(Protocol):
    """Web mode's saved connections, one per provider (owner-only files)."""

    def load(self, provider: str) -> Grant | None:
        """The saved connection or None. Raises CredentialRefused (file set aside) or OSError."""
        ...

    def save(self, provider: str, grant: Grant) -> None:
        """Replace atomically, owner-only. Raises OSError."""
        ...

    def delete(self, provider: str) -> bool: ...
