"""Issue 16: a model client is built in a worker thread, not on the event loop (its TLS context
loads the CA bundle: 20-50 ms, seconds under load), and it is still built once and reused, even
when two first uses race."""

from __future__ import annotations

import asyncio
import threading

from pydantic_ai.models.test import TestModel

from server.core.contracts.models import ModelSlot, ModelSlots, ResolvedModel, Settings
from server.services.machine_room.models import ModelService
from tests.fakes import FakeSecrets, FakeSettingsStore


def test_a_client_is_built_off_the_loop_once_and_reused() -> None:
    built_on: list[int] = []

    def factory(resolved: ResolvedModel, key: str | None, url: str | None) -> TestModel:
        built_on.append(threading.get_ident())
        return TestModel(model_name=resolved.model)

    slot = ModelSlot(provider="openai-compatible", model="scripted", base_url="http://127.0.0.1:9/v1")
    settings = Settings(models=ModelSlots(strong=slot))
    models = ModelService(FakeSettingsStore(settings), FakeSecrets({}), None, factory, environ={})  # type: ignore[arg-type]

    async def scenario() -> tuple[int, list[object]]:
        first = await asyncio.gather(models.model_for_slot("strong"), models.model_for_slot("strong"))
        again = await models.model_for_slot("strong")
        return threading.get_ident(), [m for _, m in [*first, again]]

    loop_thread, clients = asyncio.run(scenario())
    assert built_on and loop_thread not in built_on
    assert all(c is clients[0] for c in clients)  # one client kept, whichever race built it
