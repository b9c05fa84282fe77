"""Dictation's endpoints and refusals, pure (seed README "Dictation"; issue 19).

The server mints short-lived Deepgram tokens; the browser streams the microphone to Deepgram over
a WebSocket with that token, so audio never passes through the server. Everything here is
computed from the configured API base (`LH_DEEPGRAM_API_BASE`, default `https://api.deepgram.com`):
the token grant URL, the socket's origin (which the Content-Security-Policy's `connect-src` allows,
and nothing else outside the app) and the listen URL the browser opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from server.core.refusals import Refused

LISTEN_PATH = "/v1/listen"
LISTEN_QUERY = "model=nova-3&interim_results=true&smart_format=true&punctuate=true"
"""Deepgram's live options: interim results (shown greyed while the learner speaks) and formatted,
punctuated finals (appended to the field). The browser's MediaRecorder sends WebM/Opus chunks,
a container Deepgram recognises without an `encoding` parameter."""

NO_KEY_DETAIL = "Add a Deepgram key in Settings to dictate."


@dataclass(frozen=True)
class DictationEndpoints:
    """Where dictation talks to Deepgram.

    Attributes:
        api_base: the HTTP(S) base without a trailing slash, e.g. `https://api.deepgram.com`.
        socket_origin: its WebSocket origin, e.g. `wss://api.deepgram.com` (scheme, host, port).
        listen_url: the socket URL the browser opens, e.g.
            `wss://api.deepgram.com/v1/listen?model=nova-3&...`.
    """

    api_base: str
    socket_origin: str
    listen_url: str


def dictation_endpoints(base: str) -> DictationEndpoints:
    """The endpoints for an API base URL (`https://host[:port][/prefix]`; `http` for loopback fakes).

    Raises:
        ValueError: the base is not an http(s) URL with a host (the sentence names the setting).
    """
    try:
        parts = urlsplit(base.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"LH_DEEPGRAM_API_BASE '{base}' is not a URL") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(
            f"LH_DEEPGRAM_API_BASE '{base}' is not an http(s) URL such as https://api.deepgram.com"
        )
    scheme = "wss" if parts.scheme == "https" else "ws"
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host if port is None else f"{host}:{port}"
    prefix = parts.path.rstrip("/")
    origin = f"{scheme}://{netloc}"
    return DictationEndpoints(
        api_base=f"{parts.scheme}://{netloc}{prefix}",
        socket_origin=origin,
        listen_url=f"{origin}{prefix}{LISTEN_PATH}?{LISTEN_QUERY}",
    )


class DictationRefused(Refused):
    """No token could be minted. Nothing was stored; the key never appears in `detail`.

    Kinds and codes: `conflict` `dictation_no_key` (no key), `refused_by_provider`
    `dictation_key_refused` (Deepgram refused the key), `provider_failed` `dictation_failed` (an
    answer without a token), `unavailable` `dictation_unreachable` (down, timed out or busy); the
    detail is a sentence in plain words saying what happened and what to do.
    """


def refusal_for_status(status: int) -> DictationRefused:
    """What Deepgram's non-2xx answer to a token grant means for the learner (its body is never
    shown: it may echo request details)."""
    if status in (401, 403):
        return DictationRefused(
            "refused_by_provider",
            "dictation_key_refused",
            f"Deepgram refused the key (it answered {status}). Check the Deepgram key in Settings: "
            "it may be mistyped, revoked, or lack the Member role needed to grant tokens.",
        )
    if status == 429:
        return DictationRefused(
            "unavailable",
            "dictation_unreachable",
            "Deepgram is busy (too many requests); try dictating again in a minute.",
        )
    return DictationRefused(
        "provider_failed",
        "dictation_failed",
        f"Deepgram answered {status} instead of a token; try dictating again in a moment.",
    )
