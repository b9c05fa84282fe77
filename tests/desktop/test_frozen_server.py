"""The frozen server (`build/freeze.py` -> dist/learning-harness-server/) behaves like `python -m server`.

Skipped, with the reason, when no frozen bundle exists (run `.venv/bin/python build/freeze.py`).
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.flows.machine_room.test_offline_smoke import first_offline_turn
from tests.procs import ROOT, server_env, start_server, wait_ready, write_settings

BUNDLE = ROOT / "dist" / "learning-harness-server"
FROZEN = BUNDLE / ("learning-harness-server.exe" if sys.platform == "win32" else "learning-harness-server")

pytestmark = pytest.mark.skipif(
    not FROZEN.is_file(),
    reason=f"no frozen server at {FROZEN.relative_to(ROOT)}: run `.venv/bin/python build/freeze.py` first",
)

# On Windows, SIGTERM is TerminateProcess (exit 1, not a graceful stop); there the graceful stop
# is desktop mode's POST /api/shutdown, which scripts/smoke_frozen_turn.py checks on every OS.
GRACEFUL_SIGTERM = pytest.mark.skipif(
    sys.platform == "win32", reason="SIGTERM is not a graceful stop on Windows (see smoke_frozen_turn.py)"
)

UNREACHABLE_SLOT = {"provider": "openai-compatible", "model": "x", "baseUrl": "http://127.0.0.1:9/v1"}


@dataclass
class Frozen:
    process: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, timeout: float = 20) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        return self.process.returncode


def start_frozen(
    data_dir: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> Frozen:
    """Spawn the frozen server with `--port 0` and wait for its `LH_READY {...}` line."""
    process = subprocess.Popen(
        [str(FROZEN), "--port", "0", "--data-dir", str(data_dir), *args],
        env=server_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return Frozen(process, wait_ready(process, timeout, what="frozen server"))


@pytest.fixture
def frozen(data_dir: Path) -> Iterator[Frozen]:
    server = start_frozen(data_dir)
    yield server
    server.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen[str], timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}")
        try:
            response = httpx.get(f"{url}/api/health", timeout=2)
            if response.status_code == 200:
                return response.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("no health answer in time")


def test_health_and_the_bundled_frontend(frozen: Frozen, data_dir: Path) -> None:
    health = httpx.get(f"{frozen.url}/api/health")
    assert health.status_code == 200
    assert health.json()["status"] == "ok" and health.json()["dataDir"] == str(data_dir.resolve())
    index = httpx.get(f"{frozen.url}/")
    assert index.status_code == 200 and "text/html" in index.headers["content-type"]
    assert "<script" in index.text
    assets = re.findall(r'(?:src|href)="(/assets/[^"]+)"', index.text)
    assert assets, "index.html references its bundles"
    for asset in assets:
        assert httpx.get(f"{frozen.url}{asset}").status_code == 200, asset
    # A client route falls back to index.html (the SPA), an unknown API route does not.
    assert httpx.get(f"{frozen.url}/some/client/route").text == index.text
    assert httpx.get(f"{frozen.url}/api/nope").status_code == 404


def children_of(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of each live child process of `pid` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append((int(stat.parent.name), cmdline))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_ships_the_offline_model(frozen: Frozen) -> None:
    settings = httpx.get(f"{frozen.url}/api/settings").json()
    assert settings["offline"]["available"] is True, settings["offline"]
    assert settings["resolved"]["strong"]["offline"] is True
    assert list(BUNDLE.rglob("offline-model/SmolLM2-135M-Instruct.Q4_1.gguf"))
    assert list(BUNDLE.rglob("llama_cpp/lib/*llama*")), "llama.cpp's libraries are in the bundle"
    # Prompts are package data in the bundle (the teacher cannot run without them).
    assert list(BUNDLE.rglob("server/agent/prompts/teacher.md"))


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_frozen_build_answers_an_offline_turn(data_dir: Path) -> None:
    """No key: the frozen executable serves the offline model itself (re-invoked with
    --serve-offline-model) and a lesson's first turn streams its reply; stopping the server stops it."""
    server = start_frozen(data_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            first_offline_turn(client)
            offline = client.get("/api/settings").json()["offline"]
            assert offline["running"] is True and offline["error"] is None
        children = [c for c in children_of(server.process.pid) if "--serve-offline-model" in c[1]]
        assert len(children) == 1 and children[0][1].startswith(str(FROZEN)), children
    finally:
        assert server.stop() == 0
    deadline = time.monotonic() + 10
    while Path(f"/proc/{children[0][0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{children[0][0]}").exists(), "the offline model stops with the server"


@GRACEFUL_SIGTERM
def test_token_mode(data_dir: Path) -> None:
    server = start_frozen(data_dir, env={"LH_API_TOKEN": "t" * 64})
    try:
        assert httpx.get(f"{server.url}/api/health").status_code == 403
        assert httpx.get(f"{server.url}/api/health", headers={"x-lh-token": "wrong"}).status_code == 403
        ok = httpx.get(f"{server.url}/api/health", headers={"x-lh-token": "t" * 64})
        assert ok.status_code == 200
        foreign = httpx.get(
            f"{server.url}/api/health", headers={"x-lh-token": "t" * 64, "origin": "https://evil.example"}
        )
        assert foreign.status_code == 403 and foreign.json()["error"] == "forbidden"
    finally:
        assert server.stop() == 0


@GRACEFUL_SIGTERM
def test_data_dir_written_frozen_opens_unchanged_with_python(data_dir: Path) -> None:
    write_settings(data_dir, UNREACHABLE_SLOT)
    frozen = start_frozen(data_dir)
    try:
        created = httpx.post(f"{frozen.url}/api/chats", json={"title": "Derivatives"})
        assert created.status_code == 201, created.text
        chat_id = created.json()["id"]
        from_frozen = httpx.get(f"{frozen.url}/api/chats/{chat_id}").json()
    finally:
        assert frozen.stop() == 0
    files_before = {
        p.relative_to(data_dir): p.read_bytes() for p in (data_dir / "chats").rglob("*") if p.is_file()
    }

    python = start_server(data_dir)
    try:
        from_python = httpx.get(f"{python.url}/api/chats/{chat_id}")
        assert from_python.status_code == 200, from_python.text
        assert from_python.json() == from_frozen
        listed = httpx.get(f"{python.url}/api/chats").json()["chats"]
        assert [row["id"] for row in listed] == [chat_id]
    finally:
        assert python.stop() == 0
    files_after = {
        p.relative_to(data_dir): p.read_bytes() for p in (data_dir / "chats").rglob("*") if p.is_file()
    }
    assert files_after == files_before, "reading with python -m server changed nothing"


def test_second_frozen_server_on_the_same_data_dir_refuses(frozen: Frozen, data_dir: Path) -> None:
    second = subprocess.run(
        [str(FROZEN), "--port", "0", "--data-dir", str(data_dir)],
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 3
    assert "already using the data dir" in second.stderr
    assert f"pid {frozen.process.pid}, port {frozen.port}" in second.stderr


@GRACEFUL_SIGTERM
def test_starts_with_stdout_to_devnull(data_dir: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [str(FROZEN), "--port", str(port), "--data-dir", str(data_dir)],
        env=server_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_healthy(f"http://127.0.0.1:{port}", process)["pid"] == process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="closing fd 1 through a POSIX shell")
def test_starts_with_stdout_and_stderr_closed(data_dir: Path) -> None:
    """fds 1 and 2 closed: Python sets sys.stdout/sys.stderr to None, as in a console-less build."""
    port = free_port()
    process = subprocess.Popen(
        [
            "/bin/sh",
            "-c",
            'exec "$0" "$@" >&- 2>&-',
            str(FROZEN),
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
        ],
        env=server_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_healthy(f"http://127.0.0.1:{port}", process)["pid"] == process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0


def test_the_bundle_holds_every_prompt_and_nothing_of_the_repository_data_dir() -> None:
    """The real bundle passes the freeze's content guards (`build/freeze.py: verify_contents`, whose
    failures tests/unit/machine_room/test_freeze_guards.py shows): every prompt the server loads is
    in it byte-equal, and no file of the repository's data/ is."""
    from tests.unit.machine_room.test_freeze_guards import freeze

    assert freeze.missing_prompts(BUNDLE, freeze.prompt_names()) == []
    assert freeze.leaked_data(BUNDLE) == []
