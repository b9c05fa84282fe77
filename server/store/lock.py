"""The data dir's exclusive lock: one server process per data dir (architecture §6)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import filelock


class DataDirLocked(Exception):
    """Another process holds the data dir. The message names the dir, the holder, and what to do."""


class DataDirLock:
    """An exclusive, non-blocking OS lock on `<data dir>/.server.lock`.

    Released automatically when the process exits, even on a crash (the OS drops the lock).
    The holder describes itself in `<data dir>/.server.json` (`{"pid", "port"?}`) so that a
    refused second server can say who holds the dir.

    Args:
        path: the lock file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.info_path = path.with_suffix(".json")
        self._lock = filelock.FileLock(str(path), timeout=0)

    def acquire(self) -> None:
        """Raises DataDirLocked when another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except filelock.Timeout as exc:
            raise DataDirLocked(
                f"another Learning Harness server{self._holder()} is already using the data dir "
                f"{self.path.parent}; stop it first, or start this one with a different --data-dir"
            ) from exc
        self.describe({"pid": os.getpid()})

    def describe(self, info: dict[str, Any]) -> None:
        """Record who holds the lock (best effort: a failure here never stops the server)."""
        with contextlib.suppress(OSError):
            self.info_path.write_text(json.dumps(info))

    def _holder(self) -> str:
        try:
            info = json.loads(self.info_path.read_text())
        except (OSError, ValueError):
            return ""
        port = f", port {info['port']}" if info.get("port") else ""
        return f" (pid {info.get('pid')}{port})"

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self.info_path.unlink()
        self._lock.release()
