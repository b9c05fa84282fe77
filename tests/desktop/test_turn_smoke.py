"""scripts/smoke_frozen_turn.py: the release workflow's frozen-server turn smoke test (issue 19).

Against `python -m server` always (so the script itself is tested before any freeze) and against
the frozen bundle when dist/learning-harness-server/ exists; plus the failure report.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.procs import ROOT

SCRIPT = ROOT / "scripts" / "smoke_frozen_turn.py"
NAME = "learning-harness-server"
FROZEN = ROOT / "dist" / NAME / (NAME + (".exe" if sys.platform == "win32" else ""))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True, timeout=240
    )


def assert_passed(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    for check in (
        "ok health",
        "ok one lesson turn streamed and saved",
        "ok the model got the teacher's system prompt and the learner's text",
        "ok graceful shutdown, exit 0",
        "smoke: passed",
    ):
        assert check in done.stdout, done.stdout


def test_a_scripted_turn_through_python_m_server() -> None:
    assert_passed(run("--python"))


@pytest.mark.skipif(not FROZEN.is_file(), reason="no frozen server: run `.venv/bin/python build/freeze.py`")
def test_a_scripted_turn_through_the_frozen_server() -> None:
    assert_passed(run())


def test_a_server_that_dies_is_reported_with_its_stderr(tmp_path: Path) -> None:
    fake = tmp_path / "dies.py"
    fake.write_text("import sys\nprint('cannot open the data dir', file=sys.stderr)\nsys.exit(3)\n")
    if sys.platform == "win32":
        pytest.skip("a .py file is not an executable on Windows")
    fake.chmod(0o755)
    fake.write_text(f"#!{sys.executable}\n" + fake.read_text())
    done = run("--exe", str(fake), "--timeout", "20")
    assert done.returncode == 1
    assert "smoke: FAILED: the server exited before its ready line" in done.stderr
    assert "cannot open the data dir" in done.stderr


def test_a_missing_bundle_says_what_to_run(tmp_path: Path) -> None:
    done = run("--exe", str(tmp_path / "nothing"))
    assert done.returncode == 1 and "run build/freeze.py first" in done.stderr


def test_the_version_the_build_reports_is_checked() -> None:
    from server import __version__

    assert_passed(run("--python", "--expect-version", __version__))
    wrong = run("--python", "--expect-version", "99.0.0")
    assert wrong.returncode == 1
    assert f"health reports version {__version__!r}, not '99.0.0'" in wrong.stderr
