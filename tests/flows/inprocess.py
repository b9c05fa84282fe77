"""The whole app in-process (ASGI, no socket) with a scripted model, for hostile-input tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT

LOOPBACK = "http://127.0.0.1:8765"
"""Base URL whose Host header the loopback guard accepts."""


async def _say_hello(_: list[ModelMessage], __: AgentInfo) -> AsyncIterator[Any]:
    yield "Hello learner."


def scripted_app(data: Path) -> FastAPI:
    """The app over `data` with the strong slot on a scripted streaming model."""
    data.mkdir(parents=True, exist_ok=True)
    (data / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    services = build_services(
        DataPaths(data),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda resolved, key, url: FunctionModel(stream_function=_say_hello),
    )
    return create_app(services)
