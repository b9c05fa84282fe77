"""A lesson starts on the offline demo model only after the learner chose it (issue 29, item 3).

With no model set up, the strong slot falls back to the offline model; `POST /api/chats` then
refuses (409 demo_not_chosen, in plain words, nothing written) until the body says `demo: true`,
which the demo screen sends. A keyed lesson needs no such choice. A reply the offline model
writes carries `metadata.demo` (live, as a `message-metadata` chunk, and in the saved record):
the page's demo mark. A turn it finishes well measures its speed (`offline.tokensPerSecond`,
`offline.expectedWaitS` in `GET /api/settings`).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pydantic_ai import models

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets
from tests.flows.conftest import sse_chunks, turn_body
from tests.livehttp import serve
from tests.unit.machine_room.test_offline_model import Scripted


def test_the_offline_model_needs_the_learners_choice(tmp_path: Path, data_dir: Path) -> None:
    scripted = Scripted(tmp_path, "ok")
    services = build_services(DataPaths(data_dir), secrets=FakeSecrets(), offline_server=scripted.server())
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        for body in ({}, {"title": "Fractions"}, {"demo": False}):
            refused = client.post("/api/chats", json=body)
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"] == "demo_not_chosen"
            assert "gets facts wrong" in refused.json()["detail"]
        assert client.get("/api/chats").json()["chats"] == [], "a refusal writes nothing"
        chosen = client.post("/api/chats", json={"demo": True, "title": "Fractions"})
        assert chosen.status_code == 201, chosen.text
        assert chosen.json()["model"]["provider"] == "local"
        assert chosen.json()["title"] == "Fractions"
        assert [c["id"] for c in client.get("/api/chats").json()["chats"]] == [chosen.json()["id"]]


def test_a_keyed_lesson_needs_no_demo_choice(tmp_path: Path, data_dir: Path) -> None:
    scripted = Scripted(tmp_path, "ok")
    secrets = FakeSecrets()
    services = build_services(DataPaths(data_dir), secrets=secrets, offline_server=scripted.server())
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.put("/api/keys/openai", json={"key": "sk-" + "a" * 48}).status_code in (200, 204)
        assert (
            client.put(
                "/api/settings", json={"models": {"strong": {"provider": "openai", "model": "gpt-4o-mini"}}}
            ).status_code
            == 200
        )
        created = client.post("/api/chats", json={})
        assert created.status_code == 201, created.text
        assert created.json()["model"]["provider"] == "openai"


def test_a_reply_of_the_demo_model_carries_the_demo_mark(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # its only peer: the child on loopback
    from server.services.machine_room.models import default_model_factory

    scripted = Scripted(tmp_path, "ok")
    services = build_services(
        DataPaths(data_dir),
        secrets=FakeSecrets(),
        offline_server=scripted.server(),
        model_factory=default_model_factory,
    )
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=120) as client:
        chat = client.post("/api/chats", json={"demo": True}).json()
        before = client.get("/api/settings").json()["offline"]
        assert before["tokensPerSecond"] is None and before["expectedWaitS"] is None, "nothing measured yet"
        response = client.post("/api/chat", json=turn_body(chat["id"], "Teach me fractions."))
        assert response.status_code == 200, response.text
        chunks = [c for c in sse_chunks(response.text) if isinstance(c, dict)]
        marks = [
            c for c in chunks if c.get("type") == "message-metadata" and c["messageMetadata"].get("demo")
        ]
        assert marks, chunks
        first = chunks.index(marks[0])
        assert chunks[0]["type"] == "start" and first >= 1, "the mark follows the reply's start"
        saved = client.get(f"/api/chats/{chat['id']}").json()["messages"]
        replies = [m for m in saved if m["role"] == "assistant"]
        assert replies and all(m["metadata"]["demo"] is True for m in replies), replies
        # the turn measured the model's speed on this machine: the page's expected wait
        offline = client.get("/api/settings").json()["offline"]
        assert offline["tokensPerSecond"] > 0 and offline["expectedWaitS"] > 0, offline
