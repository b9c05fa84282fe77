"""One JSON file per record under a directory, replaced atomically, with read-modify-write under
the record's own lock: the shape shared by problem sets (`data/practice`) and Workbench jobs
(`data/jobs`). A file that is not a valid record is skipped by `list` and refused by `get` with
StoreCorrupt, never deleted (nothing is lost silently)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from server.core.ports import StoreCorrupt
from server.store.atomic import read_json, write_json_atomic

log = logging.getLogger("lh.store")
R = TypeVar("R", bound=BaseModel)


class RecordFiles(Generic[R]):
    """Args:
    root: the directory (created on first save).
    model: the record's pydantic model (it has an `id`).
    id_pattern: what a valid id looks like (an id is a file name; anything else is refused).
    what: the record's name in errors, e.g. "problem set".
    """

    def __init__(self, root: Path, model: type[R], id_pattern: re.Pattern[str], what: str) -> None:
        self.root = root
        self.model = model
        self.id_pattern = id_pattern
        self.what = what
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _path(self, record_id: str) -> Path:
        if not self.id_pattern.match(record_id):
            raise ValueError(f"not a {self.what} id: {record_id!r}")
        return self.root / f"{record_id}.json"

    def _lock(self, record_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(record_id, threading.Lock())

    @staticmethod
    def _id(record: R) -> str:
        return str(record.id)  # type: ignore[attr-defined]  # every record model has an `id`

    def _write(self, record: R) -> None:
        write_json_atomic(self._path(self._id(record)), record.model_dump(mode="json", by_alias=True))

    def get(self, record_id: str) -> R | None:
        """The record, or None. Raises StoreCorrupt when its file is unreadable (left untouched)."""
        try:
            path = self._path(record_id)
        except ValueError:
            return None
        try:
            data = read_json(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(f"{path}: {exc}") from exc
        try:
            return self.model.model_validate(data)
        except ValidationError as exc:
            raise StoreCorrupt(f"{path}: not a {self.what} ({exc.error_count()} problems)") from exc

    def save(self, record: R) -> None:
        """Replace the record atomically. OSError propagates (a canonical write fails loudly)."""
        with self._lock(self._id(record)):
            self._write(record)

    def update(self, record_id: str, change: Callable[[R], R | None]) -> R | None:
        """Read, change, write under the record's lock. `change` returns the new record (None: no
        write). Returns what was written, or None when nothing was (gone, or no change)."""
        with self._lock(record_id):
            current = self.get(record_id)
            if current is None:
                return None
            changed = change(current)
            if changed is None:
                return None
            self._write(changed)
            return changed

    def _all(self, prefix: str) -> list[R]:
        """Every readable record whose file name starts with `prefix` (unreadable ones are logged
        and skipped)."""
        if not self.root.is_dir():
            return []
        out = []
        for path in sorted(self.root.glob(f"{prefix}*.json")):
            try:
                found = self.get(path.stem)
            except StoreCorrupt as exc:
                log.warning("skipping a %s: %s", self.what, exc)
                continue
            if found is not None:
                out.append(found)
        return out

    def delete(self, record_id: str) -> bool:
        """Remove the record's file; False when it did not exist."""
        try:
            path = self._path(record_id)
        except ValueError:
            return False
        with self._lock(record_id):
            try:
                path.unlink()
            except FileNotFoundError:
                return False
        return True
