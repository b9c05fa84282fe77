"""A scripted OpenAI-compatible chat-completions server for end-to-end tests (no network).

`POST /v1/chat/completions` streams the script's reply word by word (or answers it whole when
`stream` is false); `GET /v1/models` lists one model. Every request body is recorded.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse


def default_reply(body: dict[str, Any]) -> str:
    last = next((m for m in reversed(body.get("messages", [])) if m.get("role") == "user"), {})
    text = last.get("content", "")
    if isinstance(text, list):
        text = " ".join(p.get("text", "") for p in text if isinstance(p, dict))
    return f"You asked: *{text}*. The derivative of $x^2$ is $2x$."


def create_stub(reply: Callable[[dict[str, Any]], str] = default_reply, delay_s: float = 0.03) -> FastAPI:
    app = FastAPI()
    app.state.requests = []

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "tests"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(request: Request) -> StreamingResponse | JSONResponse:
        body = await request.json()
        app.state.requests.append(body)
        text = reply(body)
        created = int(time.time())
        base = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": created,
            "model": body["model"],
        }
        if not body.get("stream"):
            return JSONResponse(
                {
                    **base,
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                }
            )

        async def events() -> AsyncIterator[str]:
            first = {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
            yield f"data: {json.dumps(first)}\n\n"
            words = text.split(" ")
            for index, word in enumerate(words):
                await asyncio.sleep(delay_s)
                delta = word if index == 0 else " " + word
                chunk = {**base, "choices": [{"index": 0, "delta": {"content": delta}}]}
                yield f"data: {json.dumps(chunk)}\n\n"
            last = {
                **base,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": 10,
                    "completion_tokens": len(words),
                    "total_tokens": 10 + len(words),
                },
            }
            yield f"data: {json.dumps(last)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app
