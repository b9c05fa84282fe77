"""Dictation: `POST /api/dictation/token` (issue 19; seed README "Dictation").

The server only mints a short-lived Deepgram token with the learner's key; the browser opens the
listen socket itself and the audio never passes through here.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors, refused
from server.core.machine_room.dictation import DictationRefused
from server.services.machine_room.dictation import DictationTokens

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


class TokenRequest(BaseModel):
    """`POST /api/dictation/token` body: empty (`{}` or none); nothing else is accepted."""

    model_config = ConfigDict(extra="forbid")


@router.post("/api/dictation/token", response_model=None, responses=errors(400, 409, 413, 422, 502, 503))
async def dictation_token(
    request: Request, services: ServicesDep, body: TokenRequest | None = None
) -> dict[str, Any] | JSONResponse:
    """A token for one dictation: `{token, expiresIn (s), websocketUrl}`; the browser opens
    `websocketUrl` with the WebSocket subprotocol `["bearer", token]` within `expiresIn` seconds.

    Errors (`{error, detail}`, the detail in plain words, never Deepgram's body nor the key):
    409 `dictation_no_key` (no Deepgram key: "Add a Deepgram key in Settings to dictate."),
    422 `dictation_key_refused` (Deepgram answered 401/403), 502 `dictation_failed` (another answer),
    503 `dictation_unreachable` (Deepgram down, timed out, or busy).
    """
    tokens: DictationTokens = request.app.state.dictation
    try:
        minted = await tokens.mint(services.models.dictation_key())
    except DictationRefused as exc:
        return refused(exc)
    return {"token": minted.token, "expiresIn": minted.expires_in_s, "websocketUrl": minted.websocket_url}
