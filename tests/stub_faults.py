"""A fault-injecting OpenAI-compatible chat-completions server (issue 10's fault matrix).

The requested model name picks the fault, so a test chooses it through the settings' slot:

| model | behaviour |
|---|---|
| `ok` | streams "Hello learner." and finishes |
| `429` / `429-once` | 429 with `Retry-After: 1` (always / the first request only, then `ok`) |
| `429-long` | 429 with `Retry-After: 3600` |
| `500` / `500-once` | 500 with a body (always / once) |
| `401`, `404` | that status with a provider-style error body |
| `echo-key` | 400 whose body repeats the request's Authorization header (a leaky provider) |
| `hang-before` | sends nothing for an hour (no headers) |
| `hang-after` | streams one text chunk, then nothing for an hour |
| `malformed` | one text chunk, then `data: {not json` |
| `reset` | one text chunk, then the connection is cut mid-body |
| `early-end` | one text chunk, then the stream closes without `finish_reason` and `[DONE]` |
| `garbage-tool` | a tool call whose arguments are not JSON |
| `no-images` | 400 "image input is not supported" for a request holding an image content part, else `ok` |

A request with `"stream": false` (extraction, practice: pydantic-ai's non-streamed `agent.run`)
gets the same statuses and `hang-before`, and whole-answer variants of the rest:

| model | behaviour when not streamed |
|---|---|
| `ok` | a whole answer "Hello learner." |
| `hang-after` | the headers and the first bytes of the JSON body, then nothing for an hour (a slow body) |
| `malformed` | a complete 200 body that is not JSON |
| `early-end` | the JSON body cut off in the middle (the HTTP body itself complete: truncated JSON) |
| `reset` | the first bytes of the JSON body, then the connection is cut |
| `garbage-tool` | a call of the first tool the request offers, its arguments not JSON |

`app.state.requests` counts requests per model.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse


class CutConnection(Exception):
    """Raised inside a streaming body: uvicorn drops the connection mid-body."""


def create_fault_stub() -> FastAPI:
    app = FastAPI()
    app.state.requests = Counter()

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(request: Request) -> Response:
        body = await request.json()
        model = str(body.get("model"))
        app.state.requests[model] += 1
        count = app.state.requests[model]
        base = {
            "id": "chatcmpl-f",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def event(delta: dict[str, Any], finish: str | None = None) -> str:
            return (
                "data: "
                + json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                + "\n\n"
            )

        def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
            return JSONResponse(
                {"error": {"message": message, "type": "error", "code": str(status)}}, status, headers=headers
            )

        if model in ("429", "429-once") and (model == "429" or count == 1):
            return error(429, "Rate limit reached for requests; internal trace 9f8e7d", {"retry-after": "1"})
        if model == "429-long":
            return error(429, "Rate limit reached", {"retry-after": "3600"})
        if model in ("500", "500-once") and (model == "500" or count == 1):
            return error(500, "upstream exploded: stack trace at /srv/llm/worker.py line 42")
        if model == "401":
            return error(401, "Incorrect API key provided: sk-abc***xyz")
        if model == "404":
            return error(404, f"The model `{model}` does not exist")
        if model == "no-images" and any(
            isinstance(m.get("content"), list) and any(c.get("type") == "image_url" for c in m["content"])
            for m in body.get("messages", [])
        ):
            return error(400, "image input is not supported")
        if model == "echo-key":
            return error(400, f"bad request from {request.headers.get('authorization')}")
        if model == "hang-before":
            await asyncio.sleep(3600)
        if not body.get("stream"):
            return whole(model, base, body)

        async def events() -> AsyncIterator[str]:
            yield event({"role": "assistant", "content": ""})
            if model == "garbage-tool":
                call = {"index": 0, "id": "call_g", "type": "function",
                        "function": {"name": "quiz", "arguments": "{{{not json"}}  # fmt: skip
                yield event({"tool_calls": [call]})
                yield event({}, "tool_calls")
                yield "data: [DONE]\n\n"
                return
            yield event({"content": "Hello"})
            if model == "hang-after":
                await asyncio.sleep(3600)
            if model == "malformed":
                yield "data: {not json\n\n"
            if model == "reset":
                await asyncio.sleep(0.05)
                raise CutConnection("cut")
            if model == "early-end":
                return
            yield event({"content": " learner."})
            yield event({}, "stop")
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


def whole(model: str, base: dict[str, Any], body: dict[str, Any]) -> Response:
    """The non-streamed answer of `model` (see the module docstring)."""
    message: dict[str, Any] = {"role": "assistant", "content": "Hello learner."}
    finish = "stop"
    if model == "garbage-tool":
        offered = [t["function"]["name"] for t in body.get("tools", [])] or ["quiz"]
        function = {"name": offered[0], "arguments": "{{{not json"}
        call = {"id": "call_g", "type": "function", "function": function}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
    text = json.dumps(
        {
            **base,
            "object": "chat.completion",
            "usage": usage,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
    )
    if model == "malformed":
        return Response("{not json", media_type="application/json")
    if model == "early-end":
        return Response(text[: len(text) // 2], media_type="application/json")

    async def slowly() -> AsyncIterator[str]:
        yield text[:20]
        if model == "reset":
            await asyncio.sleep(0.05)
            raise CutConnection("cut")
        await asyncio.sleep(3600)

    if model in ("hang-after", "reset"):
        return StreamingResponse(slowly(), media_type="application/json")
    return Response(text, media_type="application/json")
