"""`make run` from scratch: the app first, the offline model's llama.cpp after (issues 9 and 29).

Both tests install exactly as `make run` does (the Makefile's own recipe, VENV pointed at a fresh
virtual environment: `pip install -e '.[offline-deps]'`, then `install_llama_cpp.py --cached-only`,
no `dev` extra) and run the Makefile's `run` target itself, and say how long it took from `make`
to the ready line (printed; see README's install section for the measured figures).

- Not built yet: the wheel cache is empty (`LH_WHEEL_CACHE` in tmp), so the ready line comes
  before any llama.cpp; the builder is tests/fake_llama_build.py (`LH_OFFLINE_BUILD_COMMAND`),
  which speaks the real builder's protocol, holds until released, then installs the real portable
  wheel from the user's cache into the new environment: no test compiles llama.cpp. The page's
  settings and the terminal show the build's progress meanwhile; after the release the offline
  model is picked up and a first lesson turn streams from it, with no restart.
- Built: the portable wheel is in the cache (`make test` filled it a moment earlier); it is
  installed before the ready line, no build starts, and a first turn streams from the offline model.

Slow (two pip installs, real offline turns).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests.flows.machine_room.test_offline_smoke import first_offline_turn
from tests.procs import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("make") is None, reason="needs make"),
    pytest.mark.skipif(sys.platform == "win32", reason="the Makefile is for POSIX shells"),
]
FAKE_BUILDER = ROOT / "tests" / "fake_llama_build.py"
INSTALL_TIMEOUT_S = 1800  # a pip install on a loaded machine


def cached_wheel() -> Path:
    """The portable llama.cpp wheel in the user's cache (what `make test` built), or skip."""
    env = {k: v for k, v in os.environ.items() if k != "LH_WHEEL_CACHE"}
    printed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "install_llama_cpp.py"), "--print"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    folder = Path(printed.split("wheels ", 1)[1].strip())
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    if not wheels:
        pytest.skip(f"no portable llama.cpp wheel in {folder} (`make test` builds it)")
    return wheels[0]


class MakeRun:
    """`make run` in its own process group, its stdout and stderr read as they come."""

    def __init__(self, venv: Path, env: dict[str, str]) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            ["make", "-C", str(ROOT), f"VENV={venv}", "run", "ARGS=--port 0"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self.ready_after_s: float | None = None
        self.port: int | None = None
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._pump, args=(self.process.stdout, self.out, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.process.stderr, self.err, False), daemon=True).start()

    def _pump(self, stream: IO[str], into: list[str], stdout: bool) -> None:
        for line in stream:
            into.append(line)
            if stdout and line.startswith("LH_READY ") and self.port is None:
                self.port = int(json.loads(line.split(" ", 1)[1])["port"])
                self.ready_after_s = time.monotonic() - self.started

    def wait_ready(self, timeout_s: float) -> int:
        until(lambda: self.port or self.process.poll() is not None, "the ready line", timeout_s)
        assert self.port is not None, self.tail()
        return self.port

    def tail(self) -> str:
        return "".join(self.out[-40:]) + "".join(self.err[-40:])

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def until(probe: Callable[[], Any], what: str, timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := probe():
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def run_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        LH_SKIP_FRONTEND_BUILD="1",  # the checkout's page is built by the e2e setup, not here
        PYTHON=sys.executable,
        LH_DATA_DIR=str(tmp_path / "data"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        **extra,
    )
    return env


def assert_no_dev_extra(python: Path) -> None:
    """The environment really lacks the dev extra: the test would pass vacuously otherwise."""
    probe = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'pytest'" in probe.stderr


def has_llama_cpp(python: Path) -> bool:
    return subprocess.run([str(python), "-c", "import llama_cpp.server"], capture_output=True).returncode == 0


@pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)
def test_make_run_shows_the_app_before_llama_cpp_is_built(tmp_path: Path) -> None:
    wheel = cached_wheel()
    venv, release = tmp_path / "venv", tmp_path / "release"
    builder = [
        str(venv / "bin" / "python"),
        str(FAKE_BUILDER),
        "--release",
        str(release),
        "--wheel",
        str(wheel),
    ]
    env = run_env(
        tmp_path,
        LH_WHEEL_CACHE=str(tmp_path / "empty-wheel-cache"),
        LH_OFFLINE_BUILD_COMMAND=shlex.join(builder),
    )
    run = MakeRun(venv, env)
    try:
        port = run.wait_ready(INSTALL_TIMEOUT_S)
        print(f"\nmake run, llama.cpp not built: ready line after {run.ready_after_s:.1f} s")
        python = venv / "bin" / "python"
        assert_no_dev_extra(python)
        assert not has_llama_cpp(python), "no llama.cpp before its build"
        assert "llama.cpp for the offline model is not built yet" in "".join(run.out)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            assert client.get("/api/health").json()["status"] == "ok"
            building = until(
                lambda: (
                    (b := client.get("/api/settings").json()["offline"]["build"]) and b["done"] == 20 and b
                ),
                "the build's progress in GET /api/settings",
                120,
            )
            assert building["state"] == "building" and building["line"].startswith(
                "Building the offline model: step 1 of 2, compiling llama.cpp (20 of 40 files)"
            )
            until(
                lambda: "Building the offline model: step 1 of 2, compiling llama.cpp" in "".join(run.err),
                "the build's progress in the terminal",
                60,
            )
            assert client.get("/api/settings").json()["offline"]["available"] is False
            release.touch()  # the build ends: the real wheel goes into the running app's environment
            offline = until(
                lambda: (o := client.get("/api/settings").json()["offline"])["running"] or o["error"],
                "the offline model picked up after its build",
                300,
            )
            offline = client.get("/api/settings").json()["offline"]
            assert offline["running"] is True and offline["build"]["state"] == "installed", offline
            assert "The offline model was built and installed in" in "".join(run.err)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=180) as client:
            first_offline_turn(client)  # the same server process: picked up without a restart
    finally:
        run.stop()


@pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)
def test_make_run_installs_a_cached_wheel_before_the_ready_line(tmp_path: Path) -> None:
    cached_wheel()
    venv = tmp_path / "venv"
    run = MakeRun(venv, run_env(tmp_path))
    try:
        port = run.wait_ready(INSTALL_TIMEOUT_S)
        print(f"\nmake run, llama.cpp wheel cached: ready line after {run.ready_after_s:.1f} s")
        python = venv / "bin" / "python"
        assert_no_dev_extra(python)
        assert has_llama_cpp(python)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            assert client.get("/api/health").json()["status"] == "ok"
            offline = until(
                lambda: (o := client.get("/api/settings").json()["offline"])["running"] or o["error"],
                "the offline model",
                120,
            )
            offline = client.get("/api/settings").json()["offline"]
            assert offline["available"] is True and offline["running"] is True, offline
            assert offline["build"] is None, "nothing to build"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=180) as client:
            first_offline_turn(client)  # what `make run` promises: a first turn that streams a reply
    finally:
        run.stop()
