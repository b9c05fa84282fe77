"""Dictation tokens: the learner's Deepgram key -> a short-lived token for the browser (issue 19).

`DictationTokens.mint(key)` asks Deepgram's token grant (`POST {base}/v1/auth/grant`, deepgram-sdk)
for a JWT the browser opens its listen socket with (subprotocol `["bearer", token]`). The key is
sent to Deepgram only, in the `Authorization` header; it is never logged, echoed or stored here.
Audio never passes through the server.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

import httpx

from server.config import DICTATION_TOKEN_TTL_S
from server.core.machine_room.dictation import (
    NO_KEY_DETAIL,
    DictationEndpoints,
    DictationRefused,
    refusal_for_status,
)

log = logging.getLogger("lh.dictation")

GRANT_TIMEOUT_S = 10.0
"""Seconds for the whole token grant (connect + answer); past it Deepgram counts as unreachable."""


@dataclass(frozen=True)
class DictationToken:
    """What the browser needs to dictate.

    Attributes:
        token: Deepgram's JWT (opens one listen socket; never the learner's key).
        expires_in_s: seconds the token stays valid for opening a socket.
        websocket_url: the `wss://…/v1/listen?…` URL to open with subprotocol `["bearer", token]`.
    """

    token: str
    expires_in_s: float
    websocket_url: str


class DictationTokens:
    """Mints Deepgram tokens against one API base.

    Args:
        endpoints: from `server.core.machine_room.dictation.dictation_endpoints(LH_DEEPGRAM_API_BASE)`.
        timeout_s: the grant's deadline in seconds.
    """

    def __init__(self, endpoints: DictationEndpoints, timeout_s: float = GRANT_TIMEOUT_S) -> None:
        self.endpoints = endpoints
        self.timeout_s = timeout_s

    async def mint(self, api_key: str | None) -> DictationToken:
        """A fresh token for `api_key` (the learner's Deepgram key).

        Raises:
            DictationRefused(conflict, dictation_no_key): no key is set.
            DictationRefused(refused_by_provider, dictation_key_refused): Deepgram answered 401/403.
            DictationRefused(provider_failed, dictation_failed): another status, or an answer without a token.
            DictationRefused(unavailable, dictation_unreachable): no answer (down, refused, timed out) or 429.
        """
        if not api_key:
            raise DictationRefused("conflict", "dictation_no_key", NO_KEY_DETAIL)
        # Imported here: the SDK takes ~0.5 s to import and only dictation needs it.
        from deepgram import AsyncDeepgramClient
        from deepgram.core.api_error import ApiError
        from deepgram.core.parse_error import ParsingError
        from deepgram.environment import DeepgramClientEnvironment

        base, socket = self.endpoints.api_base, self.endpoints.socket_origin
        environment = DeepgramClientEnvironment(base=base, production=socket, agent=socket, agent_rest=base)
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, follow_redirects=False) as http:
                client = AsyncDeepgramClient(
                    api_key=api_key, environment=environment, httpx_client=http, timeout=self.timeout_s
                )
                grant = await client.auth.v1.tokens.grant(
                    ttl_seconds=DICTATION_TOKEN_TTL_S, request_options={"max_retries": 0}
                )
        except ApiError as exc:
            status = exc.status_code or 0
            log.warning("Deepgram's token grant answered %s", status)
            if 200 <= status < 300:  # a 2xx whose body was not JSON
                raise DictationRefused(
                    "provider_failed",
                    "dictation_failed",
                    "Deepgram's answer held no token; try dictating again.",
                ) from None
            raise refusal_for_status(status) from None
        except httpx.TimeoutException:
            log.warning("Deepgram's token grant timed out after %.0f s", self.timeout_s)
            raise DictationRefused(
                "unavailable",
                "dictation_unreachable",
                f"Deepgram did not answer within {self.timeout_s:.0f} s; check the connection and try again.",
            ) from None
        except httpx.HTTPError as exc:
            log.warning("Deepgram's token grant failed: %s", type(exc).__name__)
            raise DictationRefused(
                "unavailable",
                "dictation_unreachable",
                "Deepgram could not be reached; check the internet connection and try again.",
            ) from None
        except (ParsingError, ValueError, TypeError, json.JSONDecodeError):  # a body the SDK could not parse
            raise DictationRefused(
                "provider_failed", "dictation_failed", "Deepgram's answer held no token; try dictating again."
            ) from None
        token = getattr(grant, "access_token", None)
        expires = getattr(grant, "expires_in", None)
        if not isinstance(token, str) or not token.strip():
            raise DictationRefused(
                "provider_failed", "dictation_failed", "Deepgram's answer held no token; try dictating again."
            )
        if not isinstance(expires, int | float) or isinstance(expires, bool) or expires <= 0:
            expires = float(DICTATION_TOKEN_TTL_S)
        return DictationToken(
            token=token, expires_in_s=float(expires), websocket_url=self.endpoints.listen_url
        )
