"""Who keeps the API keys (issue 19, decision 0018): in desktop mode (`LH_API_TOKEN`) Electron main
does, and `/api/keys` refuses with a reason without touching the key store; in web mode the server
does, for model, search and dictation (Deepgram) keys alike."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from server.api.app import create_app
from server.config import DataPaths
from server.core.contracts.models import SecretName
from server.services.bootstrap import Services, build_services
from server.store.machine_room.secrets import FileSecrets
from tests.livehttp import serve

TOKEN = "t0k-desktop-launch-token"
STORED = "sk-stored-before-0123456789"
NEW = "sk-new-key-0123456789"
REASON = "In the desktop app, keys are kept by the app itself: enter them in Settings."


class RecordingSecrets:
    """A key store (keyring stand-in) that records every write."""

    source = "fake"

    def __init__(self, keys: dict[str, str] | None = None) -> None:
        self.keys: dict[str, str] = dict(keys or {})
        self.writes: list[str] = []

    def get(self, provider: SecretName) -> str | None:
        return self.keys.get(provider)

    def set(self, provider: SecretName, key: str) -> None:
        self.writes.append(f"set {provider}")
        self.keys[provider] = key

    def delete(self, provider: SecretName) -> None:
        self.writes.append(f"delete {provider}")
        self.keys.pop(provider, None)


@contextmanager
def _client(services: Services, token: str | None) -> Iterator[httpx.Client]:
    headers = {"x-lh-token": token} if token else {}
    with (
        serve(create_app(services, token=token)) as url,
        httpx.Client(base_url=url, headers=headers, timeout=30) as client,
    ):
        yield client


@pytest.fixture
def file_store(data_dir: Path) -> tuple[Path, Services]:
    """Services on the default key store of this machine-less test env: the owner-only file."""
    data_dir.mkdir(parents=True, exist_ok=True)
    secrets = DataPaths(data_dir).secrets
    secrets.write_text(json.dumps({"openai": STORED}))
    os.chmod(secrets, 0o600)
    services = build_services(DataPaths(data_dir), offline=False)
    assert isinstance(services.models.secrets, FileSecrets)
    return secrets, services


@pytest.mark.parametrize("provider", ["openai", "tavily", "deepgram"])
def test_desktop_mode_refuses_key_writes_and_leaves_the_secrets_file_alone(
    file_store: tuple[Path, Services], provider: str
) -> None:
    secrets, services = file_store
    before = (secrets.read_bytes(), secrets.stat().st_mtime_ns)
    with _client(services, TOKEN) as client:
        put = client.put(f"/api/keys/{provider}", json={"key": NEW})
        assert put.status_code == 409
        assert put.json() == {"error": "keys_owned_by_app", "detail": REASON}
        delete = client.delete("/api/keys/openai")
        assert delete.status_code == 409 and delete.json()["detail"] == REASON
        settings = client.get("/api/settings").json()
        assert settings["keysOwner"] == "desktop"
    assert (secrets.read_bytes(), secrets.stat().st_mtime_ns) == before
    assert sorted(p.name for p in secrets.parent.iterdir() if "secret" in p.name) == ["secrets.json"]


def test_desktop_mode_never_calls_the_keyring(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keyring = RecordingSecrets({"openrouter": STORED})
    monkeypatch.setenv("LH_DEEPGRAM_API_KEY", "dg-from-main-0123456789")
    services = build_services(DataPaths(data_dir), offline=False, secrets=keyring)
    with _client(services, TOKEN) as client:
        assert client.put("/api/keys/openrouter", json={"key": NEW}).status_code == 409
        assert client.delete("/api/keys/openrouter").status_code == 409
        # Keys reach a desktop server through its environment, set by main at spawn.
        status = client.get("/api/settings").json()
        assert status["keys"]["deepgram"] == {"set": True, "source": "env", "env": "LH_DEEPGRAM_API_KEY"}
        assert "dg-from-main" not in json.dumps(status)
    assert keyring.writes == []
    assert keyring.keys == {"openrouter": STORED}
    assert services.models.dictation_key() == "dg-from-main-0123456789"


def test_web_mode_keeps_the_key_store_and_knows_deepgram(data_dir: Path) -> None:
    keyring = RecordingSecrets()
    services = build_services(DataPaths(data_dir), offline=False, secrets=keyring)
    with _client(services, None) as client:
        assert client.get("/api/settings").json()["keysOwner"] == "server"
        assert client.get("/api/settings").json()["keys"]["deepgram"]["set"] is False
        assert client.put("/api/keys/deepgram", json={"key": NEW}).status_code == 204
        status = client.get("/api/settings")
        assert status.json()["keys"]["deepgram"] == {
            "set": True,
            "source": "fake",
            "env": "LH_DEEPGRAM_API_KEY",
        }
        assert NEW not in status.text
        assert services.models.dictation_key() == NEW
        assert services.models.secret_key("deepgram") == NEW
        assert client.delete("/api/keys/deepgram").status_code == 204
        assert client.get("/api/settings").json()["keys"]["deepgram"]["set"] is False
    assert keyring.writes == ["set deepgram", "delete deepgram"]
