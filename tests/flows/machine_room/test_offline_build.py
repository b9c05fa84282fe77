"""The offline model's llama.cpp is built in the background, after the app is up (issue 29, item 1).

A server whose llama.cpp is not installed, started as `make run` starts it (the builder named by
`LH_OFFLINE_BUILD_COMMAND`: tests/fake_llama_build.py, a stand-in that speaks the real builder's
protocol and holds until released), answers at once; `GET /api/settings` offline.build shows the
step, the files compiled, the elapsed time and one plain sentence; a lesson on an OpenAI-compatible
server streams meanwhile; when the builder ends well the server looks for llama.cpp again and
starts the offline model (the strong slot resolves to it) without a restart. A failed build says
why, in plain words, and leaves the app as it was.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import models

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from server.services.machine_room.offline_build import BUILD_COMMAND_ENV
from server.services.machine_room.offline_model import OfflineModelServer
from tests.fakes import FakeSecrets
from tests.flows.conftest import sse_chunks, turn_body
from tests.livehttp import serve
from tests.stub_openai import create_stub
from tests.unit.machine_room.test_offline_model import Scripted, gguf_file

FAKE_BUILDER = Path(__file__).resolve().parents[2] / "fake_llama_build.py"


def until(probe: Callable[[], Any], what: str, timeout_s: float = 60.0) -> Any:
    """Poll `probe` until it returns something truthy (generous: the CI box is loaded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := probe():
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def not_installed_server(tmp_path: Path) -> OfflineModelServer:
    scripted = Scripted(tmp_path, "ok")
    return OfflineModelServer(
        tmp_path / "logs" / "offline-model.log",
        gguf_file(tmp_path),
        command=scripted.command,
        installed=False,
    )


def test_the_app_answers_while_llama_cpp_builds_and_picks_it_up_when_built(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # its only peers are on loopback
    from server.services.machine_room.models import default_model_factory

    release = tmp_path / "release"
    monkeypatch.setenv(
        BUILD_COMMAND_ENV, shlex.join([sys.executable, str(FAKE_BUILDER), "--release", str(release)])
    )
    offline = not_installed_server(tmp_path)
    services = build_services(
        DataPaths(data_dir),
        secrets=FakeSecrets(),
        offline_server=offline,
        model_factory=default_model_factory,
    )
    with (
        serve(create_stub(delay_s=0)) as stub_url,
        serve(create_app(services)) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        building = until(
            lambda: (b := client.get("/api/settings").json()["offline"]["build"]) and b["done"] == 20 and b,
            "the builder's first half of files",
        )
        assert building["state"] == "building" and (building["step"], building["steps"]) == (1, 2)
        assert building["stepName"] == "compiling llama.cpp" and building["total"] == 40
        assert building["elapsedS"] >= 0 and building["error"] is None
        assert building["line"].startswith(
            "Building the offline model: step 1 of 2, compiling llama.cpp (20 of 40 files)"
        )
        assert "so far" in building["line"] and building["line"].endswith("; then installing it.")
        status = client.get("/api/settings").json()
        assert status["offline"]["available"] is False and status["resolved"]["strong"] is None

        # meanwhile a model server on this machine teaches (an OpenAI-compatible one)
        strong = {"provider": "openai-compatible", "model": "scripted", "baseUrl": f"{stub_url}/v1"}
        assert client.put("/api/settings", json={"models": {"strong": strong}}).status_code == 200
        chat = client.post("/api/chats", json={})
        assert chat.status_code == 201, chat.text
        reply = client.post("/api/chat", json=turn_body(chat.json()["id"], "Teach me derivatives"))
        assert reply.status_code == 200, reply.text
        assert any(isinstance(c, dict) and c.get("type") == "text-delta" for c in sse_chunks(reply.text))
        assert client.get("/api/settings").json()["offline"]["build"]["state"] == "building"

        # back to no model of one's own: once built, the offline model is what lessons run on
        assert client.put("/api/settings", json={"models": {"strong": None}}).status_code == 200
        release.touch()
        built = until(
            lambda: (o := client.get("/api/settings").json()["offline"])["running"] and o,
            "the offline model started after the build, without a restart",
        )
        assert built["available"] is True and built["build"]["state"] == "installed"
        assert built["build"]["line"].startswith("The offline model was built and installed in ")
        assert client.get("/api/settings").json()["resolved"]["strong"]["offline"] is True
        assert client.post("/api/chats", json={"demo": True}).status_code == 201
    log = (data_dir / "logs" / "offline-build.log").read_text()
    assert "[40/40] Building CXX object" in log, "the builder's whole output is kept"


def test_a_failed_build_says_why_and_changes_nothing_else(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = tmp_path / "release"
    release.touch()
    command = [sys.executable, str(FAKE_BUILDER), "--release", str(release), "--exit", "1"]
    command += ["--last-line", "CMake Error: CMAKE_C_COMPILER not set"]
    monkeypatch.setenv(BUILD_COMMAND_ENV, shlex.join(command))
    offline = not_installed_server(tmp_path)
    services = build_services(DataPaths(data_dir), secrets=FakeSecrets(), offline_server=offline)
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        failed = until(
            lambda: (b := client.get("/api/settings").json()["offline"]["build"])["state"] == "failed" and b,
            "the failed build",
        )
        assert "the builder exited with code 1" in failed["error"]
        assert "CMAKE_C_COMPILER not set" in failed["error"]
        assert str(data_dir / "logs" / "offline-build.log") in failed["error"]
        assert failed["line"].startswith(
            "The offline model could not be built: building the offline model failed"
        )
        offline_now = client.get("/api/settings").json()["offline"]
        assert offline_now["available"] is False and offline_now["running"] is False
        assert client.get("/api/health").json()["status"] == "ok"


def test_no_build_without_make_runs_request(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain `python -m server` without llama.cpp builds nothing: the build is `make run`'s."""
    monkeypatch.delenv(BUILD_COMMAND_ENV, raising=False)
    monkeypatch.delenv("LH_OFFLINE_BUILD", raising=False)
    services = build_services(
        DataPaths(data_dir), secrets=FakeSecrets(), offline_server=not_installed_server(tmp_path)
    )
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/api/settings").json()["offline"]["build"] is None
    assert not (data_dir / "logs" / "offline-build.log").exists()
