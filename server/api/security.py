"""Loopback security for the HTTP surface (seed §8, machine room; issue 6).

Two modes, chosen at start:

- **Desktop** (`LH_API_TOKEN` set by Electron main): every `/api` request must carry the header
  `x-lh-token` with that per-launch token. Main adds it for the app's exact origin only, so page
  scripts never see it, and other local processes cannot call the API.
- **Web** (no token, `python -m server`): every request must carry a loopback `Host`
  (127.0.0.1, localhost or [::1]), which defeats DNS rebinding, and no foreign `Origin`: an
  `Origin` must be the server's own (loopback host, same port) or listed in
  `LH_ALLOWED_ORIGINS` (comma-separated, e.g. the Vite dev server `http://localhost:5173`).
  `Origin: null` (sandboxed frames, `file:` pages, some redirects) and malformed origins or
  hosts (a port that is not a number in 0..65535) are foreign too.

In both modes the Host and Origin checks apply. Refusals are 403
`{"error": "forbidden", "detail": why}`. Pure ASGI middleware: streaming responses pass through.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_HEADER = "x-lh-token"  # noqa: S105 - a header name, not a secret
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _split_host(value: str) -> tuple[str, int | None] | None:
    """`(lower-cased host, port or None)` of a `host[:port]`, or None when it is malformed
    (a port that is not a number in 0..65535, an unclosed IPv6 bracket)."""
    try:
        parsed = urlsplit("//" + value)
        port = parsed.port
    except ValueError:
        return None
    return (parsed.hostname or "").lower(), port


def _origin_parts(origin: str) -> tuple[str, str, int | None] | None:
    """`(scheme, lower-cased host, port or None)` of an Origin, or None when it is malformed."""
    try:
        parsed = urlsplit(origin)
        port = parsed.port
    except ValueError:
        return None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return None
    return parsed.scheme, parsed.hostname.lower(), port


def refusal_reason(
    headers: dict[str, str], path: str, *, token: str | None, allowed_origins: frozenset[str]
) -> str | None:
    """Why a request is refused, or None when it may pass. Pure, for tests.

    Args:
        headers: lower-cased request headers.
        path: the request path.
        token: the per-launch token (desktop mode), or None (web mode).
        allowed_origins: extra origins accepted besides the server's own.
    """
    host_header = headers.get("host", "")
    split = _split_host(host_header)
    if split is None or split[0] not in LOOPBACK_NAMES:
        return f"Host '{host_header}' is not a loopback address; open the app at http://127.0.0.1:<port>/"
    port = split[1]
    origin = headers.get("origin")
    if origin is not None and origin.rstrip("/") not in allowed_origins:
        if origin == "null":
            return (
                "Origin 'null' (a sandboxed frame, a file: page or a redirect) is not this app; "
                "open the app at http://127.0.0.1:<port>/"
            )
        parts = _origin_parts(origin)
        if parts is None:
            return f"Origin '{origin}' is malformed; requests from other sites are refused"
        if parts[1] not in LOOPBACK_NAMES or parts[2] != port:
            return f"Origin '{origin}' is not this app; requests from other sites are refused"
    if token is not None and (path == "/api" or path.startswith("/api/")):
        supplied = headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(supplied.encode(), token.encode()):
            return "missing or wrong app token; the desktop app adds it, other clients may not call the API"
    return None


class LoopbackGuard:
    """ASGI middleware applying `refusal_reason` to HTTP requests.

    Args:
        app: the wrapped application.
        token: the per-launch token, or None for web mode.
        allowed_origins: extra accepted origins (e.g. the Vite dev server).
    """

    def __init__(self, app: ASGIApp, *, token: str | None, allowed_origins: frozenset[str]) -> None:
        self.app = app
        self.token = token or None
        self.allowed_origins = frozenset(o.rstrip("/") for o in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        reason = refusal_reason(
            headers, scope.get("path", ""), token=self.token, allowed_origins=self.allowed_origins
        )
        if reason is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "forbidden", "detail": reason}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
