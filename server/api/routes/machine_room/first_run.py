"""The first screen's ways to a real teacher (issue 29 item 2): `GET /api/first-run/local-servers`
(model servers already running on this machine) and `POST /api/first-run/key-test` (one test call
with a pasted key). Neither stores anything; the page then stores the key (`PUT /api/keys/{provider}`
or the desktop shell) and the slots (`PUT /api/settings`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field, field_validator

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.api.routes.machine_room.settings import KeyUpdate
from server.core.contracts.models import Camel, ModelSlot
from server.services.machine_room.first_run import TestedProvider

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


class TestedSlot(ModelSlot):
    """The model a key is tested on: a keyed provider's slot (subscriptions sign in instead)."""

    provider: TestedProvider  # narrower than a slot's providers


class KeyTest(Camel):
    """`POST /api/first-run/key-test` body: `{"key": "<the pasted key>", "slot": {"provider":
    "openrouter" | "openai" | "openai-compatible", "model": "<model id>", "baseUrl"?: "<URL>"}}`.

    The key follows `PUT /api/keys/{provider}`'s rules (8-500 printable ASCII characters, no
    spaces; one trailing line break dropped); `baseUrl` is required for `openai-compatible`."""

    key: str = Field(min_length=8, max_length=500, json_schema_extra={"pattern": r"^[!-~]+$"})
    slot: TestedSlot

    @field_validator("key")
    @classmethod
    def _printable(cls, value: str) -> str:
        return KeyUpdate._printable(value)  # the keys route's rule, word for word


@router.get("/api/first-run/local-servers", responses=errors(503))
async def local_servers(services: ServicesDep) -> dict[str, Any]:
    """Model servers on this machine: every usual port (Ollama 11434, LM Studio 1234, llama.cpp
    server 8080, vLLM 8000, Jan 1337) asked on 127.0.0.1 for an OpenAI-compatible `/v1/models`.

    Returns `{"servers": [{key, name, port, baseUrl, models}], "asked": [{key, name, port}]}`
    (see `FirstRunService.local_servers`); takes at most about 2 s."""
    return await services.first_run.local_servers()


@router.post("/api/first-run/key-test", responses=errors(400, 413, 503))
async def key_test(body: KeyTest, services: ServicesDep) -> dict[str, Any]:
    """One tiny request to the slot's model with the pasted key: `{"works": true, "detail":
    "Works: <model> answered."}` or `{"works": false, "detail": "<why not, in plain words>"}`
    (never the provider's body nor the key). Nothing is stored. 400: a malformed key or slot."""
    slot = body.slot
    return await services.first_run.test_key(slot.provider, body.key, slot.model, slot.base_url)
