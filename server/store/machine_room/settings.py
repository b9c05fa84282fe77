"""`data/settings.json` (implements core.ports.SettingsStore)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
from pydantic import ValidationError

from server.core.contracts.models import Settings
from server.core.ports import StoreCorrupt
from server.store.atomic import write_json_atomic

RACY_S = 2.0
"""A settings file modified less than this many seconds ago is read again at every load."""


class FileSettingsStore:
    """Settings as one JSON file; defaults when absent.

    Args:
        path: the settings file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._read: tuple[tuple[int, int, int], bytes] | None = None
        """The file's bytes as last read, with its (st_mtime_ns, st_size, st_ino) then."""

    def load(self) -> Settings:
        """A fresh Settings object per call (callers may change it). The file is read again only
        when its state changed (a turn loads settings ~8 times: a stat, not a read, each; issue
        15), or while it is younger than `RACY_S` (a rewrite in place within the clock's
        granularity keeps its state); its bytes are parsed and validated every time.

        Raises StoreCorrupt (naming the file and the problem) when the file is not valid settings."""
        try:
            stat = os.stat(self.path)
            key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            if self._read is None or self._read[0] != key or time.time_ns() - key[0] < RACY_S * 1e9:
                self._read = (key, self.path.read_bytes())
            data = orjson.loads(self._read[1])
        except FileNotFoundError:
            self._read = None
            return Settings()
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(f"{self.path} is not valid JSON ({exc}); fix or delete it") from exc
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
            )
            raise StoreCorrupt(f"{self.path} has invalid settings ({problems}); fix or delete it") from exc

    def save(self, settings: Settings) -> None:
        write_json_atomic(self.path, settings.model_dump(mode="json", by_alias=True))
