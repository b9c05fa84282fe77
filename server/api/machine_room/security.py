"""Loopback security for the HTTP surface (seed §8, machine room; issues 6, 10 and 26).

Two modes, chosen at start:

- **Desktop** (`LH_API_TOKEN` set by Electron main): every `/api` request must carry the header
  `x-lh-token` with that per-launch token. Main adds it for the app's exact origin only, so page
  scripts never see it, and other local processes cannot call the API.
- **Web** (no token, `python -m server`): only the checks below.

In both modes every HTTP request must pass three checks (`refusal_reason`, pure):

1. **Host** has the loopback shape (`LOOPBACK_AUTHORITY`): exactly `127.0.0.1`, `localhost` or
   `[::1]`, optionally `:port` (1..65535, decimal, no leading zero). This defeats DNS rebinding.
   Anything else is refused: another name, userinfo (`a@127.0.0.1`), a trailing dot, spaces,
   percent-encoding, control bytes, a second colon, a bare `::1`, another spelling of a loopback
   IP (`[0:0:0:0:0:0:0:1]`, `127.1`) and another loopback IP (`127.0.0.2`: the server binds
   127.0.0.1; a browser sends the name the learner typed, so no page of ours arrives so).
   Browsers canonicalize what the learner types to these shapes; curl sends what it is given.
2. **Origin**, when present, is the request's own: `http://` + the Host's host and port (a
   missing port is 80 on both sides), the exact ASCII serialization a browser sends (no path, no
   trailing slash, lower-case scheme). The server speaks plain http only, so
   `https://127.0.0.1:PORT` is another origin. `Origin: null` (sandboxed frames, `file:` pages,
   some redirects) is foreign. An origin listed in `LH_ALLOWED_ORIGINS` (comma-separated, e.g.
   the Vite dev server `http://localhost:5173`) passes as it is.
3. **Sec-Fetch-Site** (set by every current browser, never by curl, Node's fetch or Electron
   main): absent or `same-origin` passes. Any other value (`same-site`, `cross-site`, `none`, an
   unknown or repeated one) means the request was not made by the app's own pages, so
   - a state-changing request (any method but GET and HEAD) is refused: `none` (a typed URL or
     a bookmark) never posts, and `same-site` is another port or a sibling host;
   - a GET or HEAD of `/api` is refused unless `none` (the learner opened an API URL by hand):
     a foreign page must not read learner data (CORS hides the answer already, this refuses
     before any work is done);
   - pages and assets outside `/api` load from anywhere (a link to the app from another site).
   A request whose Origin is listed in `LH_ALLOWED_ORIGINS` skips this check: that origin is
   trusted on purpose, and a page there is `same-site` (another port) or `cross-site`.

Repeated Host, Origin, Sec-Fetch-Site or token headers are joined with ", " (as HTTP combines
repeated fields) and so never match a shape. Refusals are 403
`{"error": "forbidden", "detail": why}`. Pure ASGI middleware: streaming responses pass through.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_HEADER = "x-lh-token"  # noqa: S105 - a header name, not a secret
LOOPBACK_AUTHORITY = re.compile(
    r"(?P<host>127\.0\.0\.1|(?i:localhost)|\[::1\])(?::(?P<port>[1-9][0-9]{0,4}))?", re.ASCII
)
"""The one accepted `host[:port]` shape of a Host header and of an Origin after `http://`
(matched whole; the port's range is checked after)."""
OWN_SCHEME = "http://"
"""The only scheme this server speaks (it never terminates TLS)."""
SAFE_METHODS = frozenset({"GET", "HEAD"})
"""Methods that change nothing; every other one is state-changing (OPTIONS too: no route answers
it, and a cross-site preflight is better refused than answered)."""
DEFAULT_PORT = 80
OPEN_URL = "open the app at http://127.0.0.1:<port>/"


def loopback_authority(value: str) -> tuple[str, int] | None:
    """`(lower-cased host, port)` of a loopback `host[:port]` in the accepted shape (a missing
    port is 80), or None for anything else (see the module docstring, check 1)."""
    match = LOOPBACK_AUTHORITY.fullmatch(value)
    if match is None:
        return None
    port = int(match["port"]) if match["port"] else DEFAULT_PORT
    if port > 65535:
        return None
    return match["host"].lower(), port


def is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def refusal_reason(
    headers: dict[str, str],
    path: str,
    *,
    method: str,
    token: str | None,
    allowed_origins: frozenset[str],
) -> str | None:
    """Why a request is refused (a sentence for the 403's detail), or None when it may pass.
    Pure, for tests.

    Args:
        headers: lower-cased request header names to values (repeated fields joined by ", ").
        path: the request path.
        method: the request method, upper-case.
        token: the per-launch token (desktop mode), or None (web mode).
        allowed_origins: extra origins accepted besides the server's own, without trailing "/".
    """
    host_header = headers.get("host", "")
    own = loopback_authority(host_header)
    if own is None:
        return f"Host {_shown(host_header)} is not a loopback address in the accepted form; {OPEN_URL}"
    origin = headers.get("origin")
    listed = origin is not None and origin.rstrip("/") in allowed_origins
    if origin is not None and not listed:
        why = _foreign_origin(origin, own)
        if why is not None:
            return why
    site = headers.get("sec-fetch-site")
    if site is not None and site != "same-origin" and not listed:
        if method not in SAFE_METHODS:
            return (
                f"a {method} request that the app's own pages did not make (Sec-Fetch-Site {_shown(site)}) "
                "is refused; only the app itself changes your data"
            )
        if is_api(path) and site != "none":
            return (
                f"another site may not read the app's data (Sec-Fetch-Site {_shown(site)}); "
                "requests from other sites are refused"
            )
    if token is not None and is_api(path):
        supplied = headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(supplied.encode(), token.encode()):
            return "missing or wrong app token; the desktop app adds it, other clients may not call the API"
    return None


def _foreign_origin(origin: str, own: tuple[str, int]) -> str | None:
    """Why `origin` is not the request's own origin `own` (`(host, port)` of the Host), or None."""
    if origin == "null":
        return f"Origin 'null' (a sandboxed frame, a file: page or a redirect) is not this app; {OPEN_URL}"
    scheme, sep, authority = origin.partition("://")
    parsed = loopback_authority(authority) if sep else None
    if parsed is not None and scheme != OWN_SCHEME.removesuffix("://"):
        return f"Origin {_shown(origin)} has the wrong scheme: this server speaks {OWN_SCHEME} only"
    if parsed is None:
        return f"Origin {_shown(origin)} is not this app; requests from other sites are refused"
    if parsed != own:
        return f"Origin {_shown(origin)} is not this app; requests from other sites are refused"
    return None


def _shown(value: str) -> str:
    """`value` quoted for a refusal's detail, cut at 80 characters."""
    return repr(value if len(value) <= 80 else value[:80] + "...")


def request_headers(raw: Any) -> dict[str, str]:
    """An ASGI scope's `headers` as `{lower-cased name: value}`, repeated fields joined by ", "."""
    headers: dict[str, str] = {}
    for key, value in raw:
        name, text = key.decode("latin-1").lower(), value.decode("latin-1")
        headers[name] = f"{headers[name]}, {text}" if name in headers else text
    return headers


class LoopbackGuard:
    """ASGI middleware applying `refusal_reason` to HTTP requests.

    Args:
        app: the wrapped application.
        token: the per-launch token, or None for web mode.
        allowed_origins: extra accepted origins (e.g. the Vite dev server); a trailing "/" is dropped.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, allowed_origins: frozenset[str]) -> None:
        self.app = app
        self.token = token or None
        self.allowed_origins = frozenset(o.rstrip("/") for o in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = refusal_reason(
            request_headers(scope.get("headers", [])),
            scope.get("path", ""),
            method=str(scope.get("method", "GET")).upper(),
            token=self.token,
            allowed_origins=self.allowed_origins,
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
