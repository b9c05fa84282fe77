"""Settings file and key stores on real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.contracts.models import ModelSlot, ModelSlots, Settings
from server.core.ports import StoreCorrupt
from server.store.machine_room.secrets import FileSecrets
from server.store.machine_room.settings import FileSettingsStore


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


def test_settings_are_read_again_only_when_the_file_changed(tmp_path: Path, monkeypatch) -> None:
    """A load stats the file and reads it again only when it changed (issue 15), or while it is
    young enough that an in-place rewrite of the same size could keep its mtime; each load gives
    a fresh object."""
    import os

    import server.store.machine_room.settings as settings_module

    path = tmp_path / "settings.json"
    path.write_text('{"graph": {"extractionChunkTokens": 4096}}')
    store = FileSettingsStore(path)
    reads: list[Path] = []
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    first = store.load()
    second = store.load()
    assert len(reads) == 2  # young: read each time
    old = path.stat().st_mtime_ns - 10 * 10**9
    os.utime(path, ns=(old, old))
    third, fourth = store.load(), store.load()
    assert len(reads) == 3 and first == second == third == fourth
    assert third is not fourth and third.graph is not fourth.graph  # callers may change theirs
    # an in-place rewrite of the same size that kept the old mtime is the case the young-file
    # rule guards: without it (RACY_S 0) the same state is served from the bytes read before
    path.write_text('{"graph": {"extractionChunkTokens": 8192}}')
    os.utime(path, ns=(old, old))
    monkeypatch.setattr(settings_module, "RACY_S", 0.0)
    assert store.load().graph.extraction_chunk_tokens == 4096
    os.utime(path, ns=(old + 1, old + 1))  # a changed state is read again
    assert store.load().graph.extraction_chunk_tokens == 8192


def test_file_secrets_are_owner_only(tmp_path: Path) -> None:
    secrets = FileSecrets(tmp_path / "secrets.json")
    assert secrets.get("openai") is None
    secrets.set("openai", "sk-test-123456")
    assert secrets.get("openai") == "sk-test-123456"
    assert (tmp_path / "secrets.json").stat().st_mode & 0o777 == 0o600
    secrets.delete("openai")
    assert secrets.get("openai") is None
