"""Test-wide seams: every test gets its own data dir, and no test can reach a real model or keychain."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from pydantic_ai import models

# A global switch refuses real model requests in-process: scripted models only.
models.ALLOW_MODEL_REQUESTS = False

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Property tests run on a shared, sometimes busy machine: no per-example deadline, no "too slow"
# health check (both measure the machine, not the code).
settings.register_profile("lh", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("lh")


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the data-dir seam at tmp_path, hide real keys, disable the OS keychain, and let
    folder imports read tmp_path (instead of the real home folder)."""
    data = tmp_path / "data"
    monkeypatch.setenv("LH_DATA_DIR", str(data))
    monkeypatch.setenv("LH_IMPORT_ROOTS", str(tmp_path))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("LH_KEYRING", "off")
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    return data


@pytest.fixture
def data_dir(_isolated_environment: Path) -> Path:
    return _isolated_environment
