"""One server per data dir: a second process cannot take the lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server.store.lock import DataDirLock, DataDirLocked

HOLD = """
import sys, time
from pathlib import Path
from server.store.lock import DataDirLock
lock = DataDirLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_second_process_is_refused_then_admitted_after_exit(tmp_path: Path) -> None:
    lock_path = tmp_path / "data" / ".server.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(DataDirLocked, match=str(tmp_path / "data")):
            DataDirLock(lock_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    lock = DataDirLock(lock_path)
    lock.acquire()  # the OS dropped the dead holder's lock
    lock.release()
