"""Bad input gets a clear refusal, the server keeps running, and no record is lost (issue 2)."""

from __future__ import annotations

import json

import pytest

from tests.flows.conftest import Live, turn_body


@pytest.mark.parametrize(
    "body, words",
    [
        pytest.param(b"not json", "malformed chat request", id="not-json"),
        pytest.param(b'{"id": "c_x"}', "messages", id="no-messages"),
        pytest.param(b'{"id": "c_x", "messages": [{"role": "user"}]}', "messages.0", id="message-without-id"),
        pytest.param(
            json.dumps({"id": "a/../b", "messages": [{"id": "u", "role": "user", "parts": []}]}).encode(),
            "session id",
            id="path-traversal-id",
        ),
    ],
)
def test_malformed_turn_bodies_are_400_with_what_was_wrong(live: Live, body: bytes, words: str) -> None:
    response = live.client.post("/api/chat", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"] == "bad_request" and words in response.json()["detail"]
    assert live.client.get("/api/health").status_code == 200


def test_empty_learner_message_is_refused_and_nothing_written(live: Live) -> None:
    chat_id = live.new_chat()
    before = live.record(chat_id)
    response = live.client.post("/api/chat", json=turn_body(chat_id, "   "))
    assert response.status_code == 400 and "no text" in response.json()["detail"]
    assert live.record(chat_id) == before


def test_unknown_session_is_404_everywhere(live: Live) -> None:
    assert live.client.get("/api/chats/c_nope").json()["error"] == "chat_not_found"
    response = live.client.post("/api/chat", json=turn_body("c_nope"))
    assert response.status_code == 404 and "new lesson" in response.json()["detail"]
    assert not (live.data / "chats" / "c_nope.json").exists()


def test_unknown_api_route_is_json_404(live: Live) -> None:
    response = live.client.get("/api/nothing-here")
    assert response.status_code == 404 and response.json()["error"] == "not_found"


def test_corrupt_settings_answer_503_and_the_file_is_kept(live: Live) -> None:
    chat_id = live.new_chat()
    settings = live.data / "settings.json"
    settings.write_text('{"models": {"strong": ')
    for response in (
        live.client.get("/api/settings"),
        live.client.post("/api/chats", json={}),
        live.client.put("/api/settings", json={"models": {}}),
    ):
        assert response.status_code == 503
        assert response.json()["error"] == "store_corrupt"
        assert "settings.json" in response.json()["detail"] and "fix or delete" in response.json()["detail"]
    assert settings.read_text() == '{"models": {"strong": '
    # sessions still read; the server keeps running
    assert live.client.get(f"/api/chats/{chat_id}").status_code == 200
    assert live.client.get("/api/health").json()["status"] == "ok"


def test_corrupt_session_record_is_503_and_left_alone(live: Live) -> None:
    chat_id = live.new_chat()
    path = live.data / "chats" / f"{chat_id}.json"
    path.write_text("{")
    assert live.client.get(f"/api/chats/{chat_id}").status_code == 503
    assert live.client.post("/api/chat", json=turn_body(chat_id)).status_code == 503
    assert path.read_text() == "{"
    assert live.client.get("/api/chats").status_code == 200  # the list skips it


def test_failed_write_ahead_refuses_loudly_and_starts_no_model(live: Live, monkeypatch) -> None:
    chat_id = live.new_chat()

    def full_disk(record) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(live.services.turns.chats, "save", full_disk)
    response = live.client.post("/api/chat", json=turn_body(chat_id))
    assert response.status_code == 500 and response.json()["error"] == "write_failed"
    assert live.script.seen == []
    assert not live.services.registry.running(chat_id)
