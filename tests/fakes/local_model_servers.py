"""Loopback fakes of the model servers a learner may run (issue 29 item 2), and of a keyed provider.

`product_app(key, models)` answers `GET /v1/models` the way that product does (the shapes below are
each product's own, trimmed to the fields they send): Ollama (`owned_by: library`), LM Studio
(`owned_by: organization_owner`), llama.cpp's server (a `models` list beside `data`, `meta` on each),
vLLM (`root`, `max_model_len`, `permission`), Jan (`object: model`, `owned_by`). `other_app()` is a
web app on a usual port that is no model server. `keyed_app(key, models)` is an OpenAI-style API that
accepts one key: `POST /v1/chat/completions` answers 401 with a body echoing the key it was sent (as
OpenAI's does), 404 for a model it does not list, else a whole chat completion.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse


def _ollama(models: list[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": 1733000000, "owned_by": "library"} for m in models],
    }


def _lmstudio(models: list[str]) -> dict[str, Any]:
    return {
        "data": [{"id": m, "object": "model", "owned_by": "organization_owner"} for m in models],
        "object": "list",
    }


def _llamacpp(models: list[str]) -> dict[str, Any]:
    return {
        "models": [
            {
                "name": m,
                "model": m,
                "modified_at": "",
                "size": "",
                "digest": "",
                "type": "model",
                "tags": [""],
            }
            for m in models
        ],
        "object": "list",
        "data": [
            {
                "id": m,
                "object": "model",
                "created": 1733000000,
                "owned_by": "llamacpp",
                "meta": {
                    "vocab_type": 2,
                    "n_vocab": 49152,
                    "n_ctx_train": 8192,
                    "n_embd": 576,
                    "n_params": 134515008,
                },
            }
            for m in models
        ],
    }


def _vllm(models: list[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {
                "id": m,
                "object": "model",
                "created": 1733000000,
                "owned_by": "vllm",
                "root": m,
                "parent": None,
                "max_model_len": 8192,
                "permission": [{"id": "modelperm-1", "object": "model_permission", "allow_sampling": True}],
            }
            for m in models
        ],
    }


def _jan(models: list[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": 1, "owned_by": "jan"} for m in models],
    }


ANSWERS = {"ollama": _ollama, "lmstudio": _lmstudio, "llamacpp": _llamacpp, "vllm": _vllm, "jan": _jan}


def product_app(product: str, models: list[str]) -> FastAPI:
    """A fake of `product` (a key of `ANSWERS`) serving `models`; `app.state.asked` counts its
    `GET /v1/models`."""
    app = FastAPI()
    app.state.asked = 0

    @app.get("/v1/models")
    async def listed() -> dict[str, Any]:
        app.state.asked += 1
        return ANSWERS[product](models)

    return app


def other_app() -> FastAPI:
    """A program on a usual port that is no model server: `/v1/models` is a web page."""
    app = FastAPI()

    @app.get("/v1/models")
    async def page() -> HTMLResponse:
        return HTMLResponse("<html><body>My dashboard</body></html>")

    return app


def keyed_app(key: str, models: list[str]) -> FastAPI:
    """An OpenAI-style API accepting only `key`; `app.state.requests` keeps each completion body."""
    app = FastAPI()
    app.state.requests = []

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        app.state.requests.append(body)
        sent = request.headers.get("authorization", "").removeprefix("Bearer ")
        if sent != key:
            error = {"message": f"Incorrect API key provided: {sent}.", "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=401)
        if body.get("model") not in models:
            error = {
                "message": f"The model `{body.get('model')}` does not exist",
                "type": "invalid_request_error",
            }
            return JSONResponse({"error": error}, status_code=404)
        return JSONResponse(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "provider": "Fake",  # OpenRouter names the upstream provider (its SDK requires it)
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "ready"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10},
            }
        )

    return app
