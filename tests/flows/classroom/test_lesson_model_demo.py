"""A lesson is switched to the offline demo model only with the learner's say-so (issue 29, item 4).

`PUT /api/chats/{id}/settings` refuses a switch of a lesson that is not on the offline model to it
(`provider: "local"`) with 409 demo_not_chosen, in plain words, nothing written, until the body
says `demo: true` (the lesson model editor's confirmation, as the demo screen's choice is for
`POST /api/chats`). A lesson already on the demo model may be saved again without it; any other
provider needs no such choice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets
from tests.livehttp import serve
from tests.unit.machine_room.test_offline_model import Scripted

LOCAL = {"provider": "local", "model": "SmolLM2-135M-Instruct"}
OPENAI = {"provider": "openai", "model": "gpt-4o-mini"}


def _put(client: httpx.Client, chat_id: str, body: dict[str, Any]) -> httpx.Response:
    return client.put(f"/api/chats/{chat_id}/settings", json=body)


def test_switching_a_lesson_to_the_demo_model_needs_the_learners_confirmation(
    tmp_path: Path, data_dir: Path
) -> None:
    scripted = Scripted(tmp_path, "ok")
    services = build_services(DataPaths(data_dir), secrets=FakeSecrets(), offline_server=scripted.server())
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.put("/api/keys/openai", json={"key": "sk-" + "a" * 48}).status_code in (200, 204)
        assert client.put("/api/settings", json={"models": {"strong": OPENAI}}).status_code == 200
        chat = client.post("/api/chats", json={}).json()
        chat_id = chat["id"]
        before = client.get(f"/api/chats/{chat_id}").json()

        for body in ({"model": LOCAL}, {"model": LOCAL, "demo": False}):
            refused = _put(client, chat_id, body)
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"] == "demo_not_chosen"
            assert "gets facts wrong" in refused.json()["detail"]
            after = client.get(f"/api/chats/{chat_id}").json()
            assert after["model"] == before["model"] and after["updatedAt"] == before["updatedAt"]

        not_a_choice = _put(client, chat_id, {"model": LOCAL, "demo": "maybe"})
        assert not_a_choice.status_code == 400, not_a_choice.text
        assert client.get(f"/api/chats/{chat_id}").json()["model"]["provider"] == "openai"

        chosen = _put(client, chat_id, {"model": LOCAL, "demo": True})
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["model"]["provider"] == "local"
        assert client.get(f"/api/chats/{chat_id}").json()["model"]["provider"] == "local"

        # already on the demo model: saving it again is no new switch
        again = _put(client, chat_id, {"model": LOCAL})
        assert again.status_code == 200, again.text

        # away and back: back is a new switch, asked again
        assert _put(client, chat_id, {"model": OPENAI}).status_code == 200
        assert _put(client, chat_id, {"model": LOCAL}).status_code == 409
        assert client.get(f"/api/chats/{chat_id}").json()["model"]["provider"] == "openai"


def test_an_unknown_lesson_is_404_before_any_demo_question(tmp_path: Path, data_dir: Path) -> None:
    scripted = Scripted(tmp_path, "ok")
    services = build_services(DataPaths(data_dir), secrets=FakeSecrets(), offline_server=scripted.server())
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        missing = _put(client, "c_0000000000000000", {"model": LOCAL})
        assert missing.status_code == 404 and missing.json()["error"] == "chat_not_found"
