"""A loopback fake of the three subscription providers (issue 19 item 2): recorded shapes of their
login endpoints, scripted per test, and their model endpoints (no network).

One FastAPI app serves all of them; point every `LH_*_BASE` at its URL (`provider_env`):

- ChatGPT (Codex device code login): `POST /api/accounts/deviceauth/usercode`,
  `POST /api/accounts/deviceauth/token` (403 while pending, 429 to slow down),
  `POST /oauth/token` (form: authorization_code + PKCE verifier; JSON: refresh_token);
  model: `POST /codex/responses` (Responses API, streamed).
- GitHub Copilot: `POST /login/device/code`, `POST /login/oauth/access_token` (RFC 8628 errors),
  `GET /copilot_internal/v2/token` (`Authorization: token <github token>`), `GET /user`;
  model: `POST /copilot/v1/chat/completions` (the scripted stub).
- xAI: `POST /oauth2/device/code`, `POST /oauth2/token`; model: `POST /xai/v1/chat/completions`.

`state.polls[provider]` is the script of poll answers ("pending", "slow_down", "granted",
"expired", "denied"), consumed one per poll (the last repeats); `state.refresh[provider]` is
"ok", "revoked" or (ChatGPT) "down" (503); `state.seen` records (path, headers, body) of every request.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from tests.stub_openai import create_stub

ACCOUNT_ID = "acct-fake-123"
EMAIL = "learner@example.test"


def fake_jwt(claims: dict[str, Any]) -> str:
    """An unsigned JWT with `claims` (the server only reads claims)."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


@dataclass
class FakeState:
    polls: dict[str, list[str]] = field(
        default_factory=lambda: {p: ["granted"] for p in ("chatgpt", "github", "xai")}
    )
    refresh: dict[str, str] = field(default_factory=lambda: {"chatgpt": "ok", "github": "ok", "xai": "ok"})
    lifetime_s: float = 3600.0
    """Lifetime of each access token issued."""
    interval: str = "0.01"
    seen: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    issued: int = 0
    code_requests: dict[str, int] = field(default_factory=lambda: {"chatgpt": 0, "github": 0, "xai": 0})

    def next_poll(self, provider: str) -> str:
        script = self.polls[provider]
        return script.pop(0) if len(script) > 1 else script[0]

    def paths(self, prefix: str) -> list[str]:
        return [p for p, _, _ in self.seen if p.startswith(prefix)]


RFC_ERRORS = {
    "pending": "authorization_pending",
    "slow_down": "slow_down",
    "expired": "expired_token",
    "denied": "access_denied",
}


def responses_stream(text: str, model: str) -> list[bytes]:
    """A Responses API stream saying `text` (the events pydantic-ai reads)."""
    created = int(time.time())
    base = {
        "id": "resp_fake",
        "object": "response",
        "created_at": created,
        "model": model,
        "status": "in_progress",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    item = {"id": "msg_fake", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    usage = {
        "input_tokens": 10,
        "output_tokens": 10,
        "total_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": base, "sequence_number": 0},
        {"type": "response.output_item.added", "output_index": 0, "item": item, "sequence_number": 1},
        {
            "type": "response.content_part.added",
            "item_id": "msg_fake",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
            "sequence_number": 2,
        },
    ]
    for i, word in enumerate(text.split(" ")):
        events.append(
            {
                "type": "response.output_text.delta",
                "item_id": "msg_fake",
                "output_index": 0,
                "content_index": 0,
                "delta": word if i == 0 else f" {word}",
                "logprobs": [],
                "sequence_number": 3 + i,
            }
        )
    n = len(events)
    events += [
        {"type": "response.output_item.done", "output_index": 0, "item": done_item, "sequence_number": n},
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": [done_item], "usage": usage},
            "sequence_number": n + 1,
        },
    ]
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def create_fake_providers(
    state: FakeState | None = None, reply: str = "Hello from your subscription."
) -> FastAPI:
    """The fake; `app.state.fake` is its `FakeState`."""
    fake = state or FakeState()
    app = FastAPI()
    app.state.fake = fake

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Response:
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        fake.seen.append((request.url.path, {k.lower(): v for k, v in request.headers.items()}, body))
        return await call_next(request)  # type: ignore[no-any-return]

    def token_pair(provider: str) -> dict[str, Any]:
        fake.issued += 1
        access = fake_jwt(
            {
                "exp": int(time.time() + fake.lifetime_s),
                "n": fake.issued,
                "https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID},
            }
        )
        return {
            "access_token": access,
            "refresh_token": f"refresh-{provider}-{fake.issued}",
            "id_token": fake_jwt(
                {"email": EMAIL, "https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID}}
            ),
            "expires_in": fake.lifetime_s,
        }

    # -- ChatGPT ---------------------------------------------------------------------------------
    @app.post("/api/accounts/deviceauth/usercode")
    async def chatgpt_code() -> dict[str, Any]:
        fake.code_requests["chatgpt"] += 1
        return {"device_auth_id": "dev-auth-1", "user_code": "CHAT-1234", "interval": fake.interval}

    @app.post("/api/accounts/deviceauth/token", response_model=None)
    async def chatgpt_poll(request: Request) -> Any:
        body = await request.json()
        assert body == {"device_auth_id": "dev-auth-1", "user_code": "CHAT-1234"}
        step = fake.next_poll("chatgpt")
        if step == "pending":
            return JSONResponse({"error": "deviceauth_authorization_pending"}, status_code=403)
        if step == "slow_down":
            return JSONResponse({"error": "slow_down"}, status_code=429)
        if step in ("expired", "denied"):
            return JSONResponse({"error": RFC_ERRORS[step]}, status_code=400)
        return {"authorization_code": "auth-code-1", "code_verifier": "verifier-1", "code_challenge": "ch-1"}

    @app.post("/oauth/token", response_model=None)
    async def chatgpt_token(request: Request) -> Any:
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            form = await request.form()
            assert form["grant_type"] == "authorization_code" and form["code_verifier"] == "verifier-1"
            return token_pair("chatgpt")
        body = await request.json()
        assert body["grant_type"] == "refresh_token"
        if fake.refresh["chatgpt"] == "revoked":
            return JSONResponse({"error": {"code": "refresh_token_reused"}}, status_code=401)
        if fake.refresh["chatgpt"] == "down":
            return JSONResponse({"error": "temporarily_unavailable"}, status_code=503)
        return token_pair("chatgpt")

    @app.post("/codex/responses")
    async def chatgpt_responses(request: Request) -> StreamingResponse:
        body = await request.json()

        async def stream() -> Any:
            for chunk in responses_stream(reply, body.get("model", "gpt")):
                yield chunk

        return StreamingResponse(stream(), media_type="text/event-stream")

    # -- GitHub Copilot and xAI (RFC 8628) -------------------------------------------------------
    def device_code(provider: str) -> dict[str, Any]:
        fake.code_requests[provider] += 1
        return {
            "device_code": f"device-{provider}",
            "user_code": f"{provider.upper()}-5678",
            "verification_uri": f"https://example.test/{provider}/device",
            "expires_in": 900,
            "interval": float(fake.interval),
        }

    def rfc_poll(provider: str) -> JSONResponse:
        step = fake.next_poll(provider)
        if step == "granted":
            pair = token_pair(provider)
            if provider == "github":
                return JSONResponse({"access_token": "gho_fake_github_token", "token_type": "bearer"})
            return JSONResponse(pair)
        return JSONResponse({"error": RFC_ERRORS[step]}, status_code=200 if provider == "github" else 400)

    @app.post("/login/device/code")
    async def github_code() -> dict[str, Any]:
        return device_code("github")

    @app.post("/login/oauth/access_token")
    async def github_poll() -> JSONResponse:
        return rfc_poll("github")

    @app.get("/copilot_internal/v2/token", response_model=None)
    async def copilot_token(request: Request) -> Any:
        if (
            request.headers.get("authorization") != "token gho_fake_github_token"
            or fake.refresh["github"] == "revoked"
        ):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        fake.issued += 1
        return {
            "token": f"tid=copilot;n={fake.issued}",
            "expires_at": int(time.time() + fake.lifetime_s),
            "refresh_in": 1500,
            "endpoints": {"api": f"{request.base_url}copilot/v1".replace("//copilot", "/copilot")},
        }

    @app.get("/user")
    async def github_user() -> dict[str, str]:
        return {"login": "octo-learner"}

    @app.post("/oauth2/device/code")
    async def xai_code() -> dict[str, Any]:
        return device_code("xai")

    @app.post("/oauth2/token", response_model=None)
    async def xai_token(request: Request) -> Any:
        form = await request.form()
        if form["grant_type"] == "refresh_token":
            if fake.refresh["xai"] == "revoked":
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return token_pair("xai")
        return rfc_poll("xai")

    app.mount("/copilot", create_stub(lambda body: reply, delay_s=0))
    app.mount("/xai", create_stub(lambda body: reply, delay_s=0))
    return app


def provider_env(url: str) -> dict[str, str]:
    """Every subscription base pointed at the fake."""
    return {
        "LH_CHATGPT_AUTH_BASE": url,
        "LH_CHATGPT_API_BASE": f"{url}/codex",
        "LH_GITHUB_BASE": url,
        "LH_GITHUB_API_BASE": url,
        "LH_XAI_AUTH_BASE": url,
        "LH_XAI_API_BASE": f"{url}/xai/v1",
    }
