"""Flow fixtures: the whole FastAPI app over real HTTP, with a scripted model (FunctionModel)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import Services, build_services
from server.store.classroom.chats import read_record_data
from tests.fakes import FakeSecrets
from tests.livehttp import serve

COMPATIBLE_SLOT = {"provider": "openai-compatible", "model": "scripted", "baseUrl": "http://127.0.0.1:9/v1"}


@dataclass
class Script:
    """The scripted model: `reply(messages)` returns the text deltas to stream.

    `seen` records every message history the model received; `gate`, when set, is awaited before
    the first delta (lets a test hold a turn open).
    """

    reply: Callable[[list[ModelMessage]], list[str]] = lambda _: ["Hello ", "learner."]
    seen: list[list[ModelMessage]] = field(default_factory=list)
    gate: threading.Event | None = None
    delay_s: float = 0.0
    before: Callable[[], None] | None = None
    delegate: Callable[[list[ModelMessage], AgentInfo], AsyncIterator[Any]] | None = None

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        self.seen.append(messages)
        if self.before:
            self.before()
        while self.gate is not None and not self.gate.is_set():
            await asyncio.sleep(0.01)
        if self.delegate is not None:
            async for item in self.delegate(messages, info):
                yield item
            return
        for delta in self.reply(messages):
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            yield delta


@dataclass
class Live:
    url: str
    services: Services
    script: Script
    data: Path
    client: httpx.Client

    def new_chat(self) -> str:
        response = self.client.post("/api/chats", json={})
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def record(self, chat_id: str) -> dict:
        """The record as its files hold it (snapshot + append-only log, decision 0015)."""
        data = read_record_data(self.data / "chats", chat_id)
        assert data is not None, f"no record {chat_id}"
        return data


def turn_body(chat_id: str, text: str = "What is a derivative?", mid: str = "u1") -> dict:
    return {
        "id": chat_id,
        "trigger": "submit-message",
        "messages": [{"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}],
    }


def sse_chunks(text: str) -> list[dict | str]:
    """Parse an SSE body into chunk dicts (and the literal "[DONE]")."""
    out: list[dict | str] = []
    for block in text.split("\n\n"):
        if block.startswith("data: "):
            payload = block[len("data: ") :]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


@pytest.fixture
def live(data_dir: Path) -> Iterator[Live]:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    script = Script()
    services = build_services(
        DataPaths(data_dir),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda resolved, key, url: FunctionModel(stream_function=script.stream),
    )
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield Live(url, services, script, data_dir, client)
