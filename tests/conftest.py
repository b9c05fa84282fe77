"""Test-wide seams: every test gets its own data dir, and no test can reach a real model or keychain."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from pydantic_ai import models

from server.config import SUBSCRIPTION_BASE_ENV

# A global switch refuses real model requests in-process: scripted models only.
models.ALLOW_MODEL_REQUESTS = False

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Property tests run on a shared, sometimes busy machine: no per-example deadline, no "too slow"
# health check (both measure the machine, not the code).
settings.register_profile("lh", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("lh")


CLOSED_PORT_URL = "http://127.0.0.1:9"
"""A loopback URL nothing listens on (the discard port): a request to it is refused at once."""


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the data-dir seam at tmp_path, hide real keys, disable the OS keychain, let folder
    imports read tmp_path (instead of the real home folder), and point every subscription
    provider's base at a closed loopback port (no test reaches the internet: the API fuzzer once
    started real device-code logins; tests of the logins point them at their fakes)."""
    data = tmp_path / "data"
    monkeypatch.setenv("LH_DATA_DIR", str(data))
    monkeypatch.setenv("LH_IMPORT_ROOTS", str(tmp_path))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("LH_KEYRING", "off")
    for env_name, _default in SUBSCRIPTION_BASE_ENV.values():
        monkeypatch.setenv(env_name, CLOSED_PORT_URL)
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    return data


@pytest.fixture
def data_dir(_isolated_environment: Path) -> Path:
    return _isolated_environment


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A failing test that ran a real server (`tests.procs.ServerProcess` among its fixtures) reports
    what the server saw: its activity feed at the moment of failure and the tail of its log. A CI
    failure of a browser test is then explained by the run itself, not guessed at afterwards."""
    report = yield
    if report.failed and call.when == "call":
        from tests.procs import ServerProcess

        for name, value in getattr(item, "funcargs", {}).items():
            if isinstance(value, ServerProcess):
                report.sections.append((f"server {name}: state at failure", _server_state(value)))
    return report


def _server_state(proc: object) -> str:
    import httpx

    from tests.procs import ServerProcess

    assert isinstance(proc, ServerProcess)
    lines = [f"exit code: {proc.process.poll()}"]
    if proc.process.poll() is None:
        for path in ("/api/activity", "/api/graph/sources"):
            try:
                lines.append(f"GET {path}: {httpx.get(proc.url + path, timeout=5).text[:4000]}")
            except httpx.HTTPError as exc:
                lines.append(f"GET {path}: {type(exc).__name__}: {exc}")
    lines.append(f"last {len(proc.log)} log lines:")
    lines.extend(proc.log)
    return "\n".join(lines)
