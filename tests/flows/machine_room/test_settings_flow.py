"""Model slots and keys over HTTP: keys are stored but never written to settings, records or responses."""

from __future__ import annotations

import json

import pytest

from tests.flows.conftest import Live, turn_body

SECRET = "sk-or-v1-THIS-IS-A-TEST-KEY-0123456789"


def test_slots_round_trip_and_other_sections_survive(live: Live) -> None:
    settings_path = live.data / "settings.json"
    raw = json.loads(settings_path.read_text())
    raw["graph"] = {"extractionChunkTokens": 8192}
    settings_path.write_text(json.dumps(raw))
    body = {
        "models": {
            "strong": {"provider": "openrouter", "model": "anthropic/claude-sonnet-4"},
            "cheap": None,
            "vision": None,
        }
    }
    status = live.client.put("/api/settings", json=body).json()
    assert status["models"]["strong"]["model"] == "anthropic/claude-sonnet-4"
    assert status["resolved"]["strong"] is None
    assert any("LH_OPENROUTER_API_KEY" in p for p in status["problems"])
    graph = json.loads(settings_path.read_text())["graph"]
    assert graph["extractionChunkTokens"] == 8192  # kept (defaults of newer keys are written beside it)


def test_new_session_without_a_resolvable_model_is_503_saying_what_to_set(live: Live) -> None:
    live.client.put(
        "/api/settings", json={"models": {"strong": {"provider": "openai", "model": "gpt-5-mini"}}}
    )
    response = live.client.post("/api/chats", json={})
    assert response.status_code == 503
    assert response.json()["error"] == "models_not_configured"
    assert "LH_OPENAI_API_KEY" in response.json()["detail"]


def test_stored_key_resolves_the_slot_and_is_never_written_or_echoed(live: Live) -> None:
    live.client.put("/api/settings", json={"models": {"strong": {"provider": "openrouter", "model": "m/x"}}})
    assert live.client.put("/api/keys/openrouter", json={"key": SECRET}).status_code == 204
    status = live.client.get("/api/settings")
    assert status.json()["keys"]["openrouter"] == {
        "set": True,
        "source": "fake",
        "env": "LH_OPENROUTER_API_KEY",
    }
    assert status.json()["resolved"]["strong"]["model"] == "m/x"
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id))
    assert SECRET not in status.text
    for path in live.data.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="ignore"), path
    assert live.client.delete("/api/keys/openrouter").status_code == 204
    assert live.client.get("/api/settings").json()["keys"]["openrouter"]["set"] is False


def test_env_key_wins_and_is_reported_as_env(live: Live, monkeypatch) -> None:
    monkeypatch.setenv("LH_OPENAI_API_KEY", "sk-env-0123456789")
    assert live.client.get("/api/settings").json()["keys"]["openai"]["source"] == "env"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"models": {"strong": {"provider": "acme", "model": "x"}}}, id="unknown-provider"),
        pytest.param(
            {"models": {"strong": {"provider": "openai-compatible", "model": "x"}}}, id="no-base-url"
        ),
        pytest.param({"models": {"strong": {"provider": "openai", "model": " "}}}, id="blank-model"),
        pytest.param({"modelz": {}}, id="wrong-section"),
    ],
)
def test_bad_slots_are_400_and_settings_unchanged(live: Live, body: dict) -> None:
    before = (live.data / "settings.json").read_text()
    response = live.client.put("/api/settings", json=body)
    assert response.status_code == 400 and response.json()["detail"]
    assert (live.data / "settings.json").read_text() == before


@pytest.mark.parametrize(
    "provider, body, status",
    [
        pytest.param("acme", {"key": "sk-0123456789"}, 400, id="unknown-provider"),
        pytest.param("openai", {"key": "short"}, 400, id="too-short"),
        pytest.param("openai", {"key": "has space inside"}, 400, id="whitespace"),
    ],
)
def test_bad_keys_are_refused(live: Live, provider: str, body: dict, status: int) -> None:
    assert live.client.put(f"/api/keys/{provider}", json=body).status_code == status


def test_session_keeps_its_stamped_model_after_the_slot_changes(live: Live) -> None:
    chat_id = live.new_chat()
    live.client.put("/api/settings", json={"models": {"strong": {"provider": "openai", "model": "gpt-x"}}})
    record = live.client.get(f"/api/chats/{chat_id}").json()
    assert record["model"]["provider"] == "openai-compatible"
    assert live.client.post("/api/chat", json=turn_body(chat_id)).status_code == 200
