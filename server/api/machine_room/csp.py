"""The Content-Security-Policy on everything the server answers (issue 19, decision 0020).

`app_policy(socket_origin)` is the app's policy: scripts from the app's own origin only (the built
bundle holds no inline script), styles from it plus inline style attributes (KaTeX's typeset
markup carries `style="…"`), images from it and `data:`/`blob:` URLs (the Workbench's drawings are
`data:` images), fonts from it and `data:` (the build inlines KaTeX's smallest fonts), connections
to the app and to exactly one outside origin, Deepgram's dictation socket (`wss://api.deepgram.com`
unless `LH_DEEPGRAM_API_BASE` says otherwise), frames from the app only (the Workbench's demos,
`GET /api/jobs/{id}/demo`, shown in `sandbox="allow-scripts"` frames), no plugins, no `<base>`
elsewhere, and no framing of the app by anyone.

`DEMO_POLICY` is a demo's own policy (a response that sets its own keeps it): sandboxed with
scripts only (an opaque origin even when opened outside its frame), nothing loaded from anywhere,
inline scripts and styles allowed, framed by the app only.

`ContentSecurityPolicy` is the pure ASGI middleware adding the header to every HTTP response that
has none (pages, assets, API JSON, errors, refusals).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HEADER = b"content-security-policy"

DEMO_POLICY = (
    "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; frame-ancestors 'self'"
)


def app_policy(socket_origin: str) -> str:
    """The app's policy; `socket_origin` is the dictation socket's origin, e.g. `wss://api.deepgram.com`.

    Raises:
        ValueError: the origin is not a bare `ws://` or `wss://` origin (it would widen the policy).
    """
    if not socket_origin.startswith(("ws://", "wss://")) or any(c in socket_origin for c in " ;,'\"\r\n"):
        raise ValueError(f"'{socket_origin}' is not a WebSocket origin")
    if "/" in socket_origin.split("://", 1)[1]:
        raise ValueError(f"'{socket_origin}' is not a bare WebSocket origin (it has a path)")
    directives = (
        ("default-src", "'self'"),
        ("script-src", "'self'"),
        ("style-src", "'self' 'unsafe-inline'"),
        ("img-src", "'self' data: blob:"),
        ("font-src", "'self' data:"),
        ("connect-src", f"'self' {socket_origin}"),
        ("media-src", "'self' blob:"),
        ("frame-src", "'self'"),
        ("worker-src", "'self'"),
        ("object-src", "'none'"),
        ("base-uri", "'self'"),
        ("form-action", "'self'"),
        ("frame-ancestors", "'none'"),
    )
    return "; ".join(f"{name} {value}" for name, value in directives)


class ContentSecurityPolicy:
    """ASGI middleware: `policy` on every HTTP response that does not set a policy of its own.

    Args:
        app: the wrapped application.
        policy: the header's value (`app_policy(...)`).
    """

    def __init__(self, app: ASGIApp, *, policy: str) -> None:
        self.app = app
        self.header = (HEADER, policy.encode("latin-1"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == HEADER for name, _ in headers):
                    headers.append(self.header)
                    message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_policy)
