"""Settings file and key stores on real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.contracts.models import ModelSlot, ModelSlots, Settings
from server.core.ports import StoreCorrupt
from server.store.secrets import FileSecrets
from server.store.settings import FileSettingsStore


def test_absent_settings_are_defaults_and_round_trip(tmp_path: Path) -> None:
    store = FileSettingsStore(tmp_path / "settings.json")
    assert store.load() == Settings()
    settings = Settings(models=ModelSlots(strong=ModelSlot(provider="openai", model="gpt-5-mini")))
    store.save(settings)
    assert store.load().models.strong == settings.models.strong


def test_unknown_sections_survive_a_slot_update(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"models": {}, "graph": {"extractionChunkTokens": 4096}}')
    store = FileSettingsStore(path)
    settings = store.load()
    settings.models = ModelSlots(strong=ModelSlot(provider="local", model="SmolLM2-135M-Instruct"))
    store.save(settings)
    assert '"extractionChunkTokens": 4096' in path.read_text()


@pytest.mark.parametrize(
    "content, words",
    [
        pytest.param("{not json", "not valid JSON", id="bad-json"),
        pytest.param(
            '{"models": {"strong": {"provider": "acme", "model": "x"}}}',
            "models.strong.provider",
            id="unknown-provider",
        ),
        pytest.param(
            '{"models": {"strong": {"provider": "openai-compatible", "model": "x"}}}',
            "baseUrl",
            id="compatible-without-url",
        ),
    ],
)
def test_corrupt_settings_name_the_file_and_the_problem(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    with pytest.raises(StoreCorrupt) as info:
        FileSettingsStore(path).load()
    assert str(path) in str(info.value) and words in str(info.value)
    assert path.read_text() == content


def test_file_secrets_are_owner_only(tmp_path: Path) -> None:
    secrets = FileSecrets(tmp_path / "secrets.json")
    assert secrets.get("openai") is None
    secrets.set("openai", "sk-test-123456")
    assert secrets.get("openai") == "sk-test-123456"
    assert (tmp_path / "secrets.json").stat().st_mode & 0o777 == 0o600
    secrets.delete("openai")
    assert secrets.get("openai") is None
