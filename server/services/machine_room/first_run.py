"""The first screen's ways to a real teacher (issue 29 item 2): a pasted key's one test call, and the
model servers already running on this machine.

`FirstRunService.local_servers()` asks every port of the table (`core/machine_room/local_servers.py`)
on 127.0.0.1 at once for an OpenAI-compatible `/v1/models`; `test_key()` sends one tiny request with
a pasted key through the real engine (`agent/machine_room/first_call.py`). Neither stores anything:
the page stores the key (the keys route, or the desktop shell) and the slots (`PUT /api/settings`)
once the learner chose.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import httpx

from server.agent.machine_room.first_call import first_call
from server.config import PROVIDER_BASE_URLS
from server.core.contracts.models import ResolvedModel
from server.core.machine_room.local_servers import LOCAL_SERVERS, LocalServer, models_of

log = logging.getLogger("lh.first_run")

TestedProvider = Literal["openrouter", "openai", "openai-compatible"]

ASK_TIMEOUT_S = 2.0
"""How long one port's answer is awaited (a loopback server answers its model list in
milliseconds; a closed port refuses at once)."""

MAX_ANSWER_BYTES = 1_000_000
"""A model list larger than this is not read (no product's list comes near)."""

FirstCall = Callable[[ResolvedModel, "str | None", "str | None"], Awaitable["str | None"]]
"""(resolved, key, base URL override) -> None when it works, else the sentence why not."""


class FirstRunService:
    """Finds local model servers and tests pasted keys.

    Args:
        servers: the products and ports asked (`core/machine_room/local_servers.ports_in`).
        provider_bases: OpenAI's and OpenRouter's API base URLs (tests point them at a loopback
            stub; the real ones by default).
        call: the one test call (the real engine's by default).
        timeout_s: how long each port's answer is awaited, in seconds.
    """

    def __init__(
        self,
        servers: tuple[LocalServer, ...] = LOCAL_SERVERS,
        provider_bases: Mapping[str, str] = PROVIDER_BASE_URLS,
        call: FirstCall = first_call,
        timeout_s: float = ASK_TIMEOUT_S,
    ) -> None:
        self.servers = servers
        self.provider_bases = provider_bases
        self.call = call
        self.timeout_s = timeout_s

    async def local_servers(self) -> dict[str, Any]:
        """Ask every port of the table at once.

        Returns:
            `{"servers": [{key, name, port, baseUrl, models: [id, ...]}], "asked": [{key, name,
            port}]}`: `servers` are those that answered an OpenAI-compatible model list (in the
            table's order; `models` may be empty: the server runs but has no model), `asked` every
            port asked. A port that is closed, slow (over `timeout_s`) or answers something else is
            left out. Never raises for what a port does.
        """
        timeout = httpx.Timeout(self.timeout_s, connect=self.timeout_s)
        async with httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False) as client:
            answers = await asyncio.gather(*(self._ask(client, server) for server in self.servers))
        return {
            "servers": [
                {"key": s.key, "name": s.name, "port": s.port, "baseUrl": s.base_url, "models": models}
                for s, models in zip(self.servers, answers, strict=True)
                if models is not None
            ],
            "asked": [{"key": s.key, "name": s.name, "port": s.port} for s in self.servers],
        }

    @staticmethod
    async def _ask(client: httpx.AsyncClient, server: LocalServer) -> list[str] | None:
        try:
            response = await client.get(server.models_url, headers={"Accept": "application/json"})
        except (httpx.HTTPError, OSError):
            return None
        if response.status_code != 200 or len(response.content) > MAX_ANSWER_BYTES:
            return None
        try:
            body = json.loads(response.content)
        except ValueError:
            return None
        models = models_of(body)
        if models is not None:
            log.info("%s answers on port %d with %d models", server.name, server.port, len(models))
        return models

    async def test_key(
        self, provider: TestedProvider, key: str, model: str, base_url: str | None = None
    ) -> dict[str, Any]:
        """One tiny request to `model` at `provider` with `key`.

        Args:
            provider: openrouter | openai | openai-compatible.
            key: the pasted key (used for this request only; never stored, logged or echoed).
            model: the model id to ask.
            base_url: the server of an `openai-compatible` provider (ignored for the others).

        Returns:
            `{"works": true, "detail": "Works: <model> answered."}` or `{"works": false, "detail":
            <why not, in plain words>}`.
        """
        compatible = provider == "openai-compatible"
        resolved = ResolvedModel(provider=provider, model=model, base_url=base_url if compatible else None)
        override = None if compatible else self.provider_bases.get(provider)
        problem = await self.call(resolved, key, override)
        if problem is None:
            return {"works": True, "detail": f"Works: {model} answered."}
        return {"works": False, "detail": problem}
