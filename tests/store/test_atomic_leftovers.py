"""Issue 10, defect 8: a temp file left by a crash (kill -9) during an atomic write is removed
when the server starts; nothing else in the data dir is touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from server.config import DataPaths
from server.services.bootstrap import build_services
from server.store.atomic import sweep_temp_files, write_json_atomic
from tests.fakes import FakeSecrets


def crashed_write(target: Path) -> list[Path]:
    """Kill -9 a process in the middle of `write_json_atomic(target)`; returns the temp files it
    left beside the target."""
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        import server.store.atomic as atomic
        real_fsync = os.fsync
        def hang(fd):
            print("writing", flush=True)
            import time; time.sleep(60)
        atomic.os.fsync = hang
        atomic.write_json_atomic(__import__("pathlib").Path({str(target)!r}), {{"half": "written"}})
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    return sorted(p for p in target.parent.iterdir() if p.name.endswith(".tmp"))


def test_a_crash_mid_write_leaves_a_temp_file_that_start_removes(tmp_path: Path) -> None:
    data = DataPaths(tmp_path / "data")
    record = data.chats / "c_1.json"
    write_json_atomic(record, {"id": "c_1"})
    leftovers = crashed_write(record)
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".c_1.json.")
    ledger_leftover = data.graph / ".chains.jsonl.ab12_x9z.tmp"
    ledger_leftover.parent.mkdir(parents=True)
    ledger_leftover.write_text("partial")
    keep = [
        data.root / "notes.tmp",  # not ours: no leading dot
        data.chats / ".c_2.json.short.tmp",  # not the temp name pattern
        data.graph / "nodes.jsonl",
        record,
    ]
    for path in keep[:3]:
        path.write_text("x")

    build_services(data, offline=False, secrets=FakeSecrets())

    assert not leftovers[0].exists() and not ledger_leftover.exists()
    assert all(p.exists() for p in keep)
    assert record.read_text().strip().startswith("{")  # the record itself is the old, whole one


def test_the_sweep_reports_what_it_removed_and_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / ".x.json.abcdefgh.tmp"
    victim.write_text("not the data dir's")
    data = tmp_path / "data"
    data.mkdir()
    os.symlink(outside, data / "linked", target_is_directory=True)
    mine = data / ".settings.json.k2j4h5g6.tmp"
    mine.write_text("{")
    assert sweep_temp_files(data) == [mine]
    assert victim.exists() and not mine.exists()
    assert sweep_temp_files(tmp_path / "missing") == []
