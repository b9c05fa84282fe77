"""The data dir's exclusive lock: one server process per data dir (architecture §6)."""

from __future__ import annotations

from pathlib import Path

import filelock


class DataDirLocked(Exception):
    """Another process holds the data dir. The message names the dir and what to do."""


class DataDirLock:
    """An exclusive, non-blocking OS lock on `<data dir>/.server.lock`.

    Released automatically when the process exits, even on a crash (the OS drops the lock).

    Args:
        path: the lock file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = filelock.FileLock(str(path), timeout=0)

    def acquire(self) -> None:
        """Raises DataDirLocked when another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except filelock.Timeout as exc:
            raise DataDirLocked(
                f"another Learning Harness server is already using the data dir {self.path.parent}; "
                "stop it first, or start this one with a different --data-dir"
            ) from exc

    def release(self) -> None:
        self._lock.release()
