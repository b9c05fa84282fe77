"""A scripted OpenAI-compatible chat-completions server for end-to-end tests (no network).

`POST /v1/chat/completions` streams the script's reply (text word by word, then at most one tool
call as `tool_calls` deltas), or answers it whole when `stream` is false; `GET /v1/models` lists
one model. Every request body is recorded in `app.state.requests`. The scripted models it serves
are written once in `tests/scripts/` (`over_http(script)` is a `reply` for `create_stub`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from tests.scripts.serving import Reply

__all__ = ["Reply", "create_stub", "default_reply", "last_user_text"]


def last_user_text(body: dict[str, Any]) -> str:
    users = (m for m in reversed(body.get("messages", [])) if m.get("role") == "user")
    last: dict[str, Any] = next(users, {})
    text = last.get("content", "")
    if isinstance(text, list):
        text = " ".join(p.get("text", "") for p in text if isinstance(p, dict))
    return str(text)


def default_reply(body: dict[str, Any]) -> Reply:
    return Reply(f"You asked: *{last_user_text(body)}*. The derivative of $x^2$ is $2x$.")


def create_stub(
    reply: Callable[[dict[str, Any]], Reply | str | Awaitable[Reply | str]] = default_reply,
    delay_s: float = 0.03,
) -> FastAPI:
    """`reply` may be a coroutine function (a script that waits for another request first)."""
    app = FastAPI()
    app.state.requests = []

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "tests"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(request: Request) -> StreamingResponse | JSONResponse:
        body = await request.json()
        app.state.requests.append(body)
        said = reply(body)
        if inspect.isawaitable(said):
            said = await said
        said = Reply(said) if isinstance(said, str) else said
        if said.status is not None:
            error = {"message": f"scripted failure {said.status}", "type": "server_error"}
            return JSONResponse({"error": error}, status_code=said.status)
        base = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body["model"],
        }
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        calls = (
            [
                {
                    "id": said.tool[2],
                    "type": "function",
                    "function": {"name": said.tool[0], "arguments": json.dumps(said.tool[1])},
                }
            ]
            if said.tool
            else None
        )
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": said.text or None}
            if calls:
                message["tool_calls"] = calls
            return JSONResponse(
                {
                    **base,
                    "object": "chat.completion",
                    "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                }
            )

        def event(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
            chunk = {
                **base,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                **extra,
            }
            return f"data: {json.dumps(chunk)}\n\n"

        async def events() -> AsyncIterator[str]:
            yield event({"role": "assistant", "content": ""})
            if said.text:
                for index, word in enumerate(said.text.split(" ")):
                    await asyncio.sleep(delay_s)
                    yield event({"content": word if index == 0 else " " + word})
            if calls:
                await asyncio.sleep(delay_s)
                yield event({"tool_calls": [{"index": 0, **calls[0]}]})
            yield event({}, finish, **({"usage": usage} if said.usage else {}))
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app
