"""The data-dir seam: --data-dir, else LH_DATA_DIR, else ./data."""

from __future__ import annotations

from pathlib import Path

from server.config import resolve_data_dir


def test_cli_wins_then_env_then_default(tmp_path: Path, monkeypatch) -> None:
    assert resolve_data_dir(str(tmp_path / "cli"), {"LH_DATA_DIR": "/elsewhere"}) == tmp_path / "cli"
    assert resolve_data_dir(None, {"LH_DATA_DIR": str(tmp_path / "env")}) == tmp_path / "env"
    monkeypatch.chdir(tmp_path)
    assert resolve_data_dir(None, {}) == tmp_path / "data"
