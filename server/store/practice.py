"""Problem sets in `data/practice/<id>.json` (implements core.ports.PracticeStore).

One file per set, replaced atomically; `update` is a read-modify-write under the set's own lock,
so the parallel generators and graders of one set never lose each other's writes. A file that is
not a valid set (torn, hand-edited, an older shape) is skipped by `list` and refused by `get`
with StoreCorrupt, never deleted (seed §7: `data/practice` is scratch, but nothing is lost
silently)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from server.core.contracts.practice import ProblemSet
from server.core.ports import StoreCorrupt
from server.store.atomic import read_json, write_json_atomic

log = logging.getLogger("lh.store.practice")
SET_ID = re.compile(r"^ps_[0-9a-f]{8,32}$")


class FilePracticeStore:
    """Args: root: the practice directory (created on first save)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _path(self, set_id: str) -> Path:
        if not SET_ID.match(set_id):
            raise ValueError(f"not a problem set id: {set_id!r}")
        return self.root / f"{set_id}.json"

    def _lock(self, set_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(set_id, threading.Lock())

    def get(self, set_id: str) -> ProblemSet | None:
        """The set, or None. Raises StoreCorrupt when its file is unreadable (left untouched)."""
        try:
            path = self._path(set_id)
        except ValueError:
            return None
        try:
            data = read_json(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(f"{path}: {exc}") from exc
        try:
            return ProblemSet.model_validate(data)
        except ValidationError as exc:
            raise StoreCorrupt(f"{path}: not a problem set ({exc.error_count()} problems)") from exc

    def save(self, problem_set: ProblemSet) -> None:
        """Replace the set atomically. OSError propagates (a canonical write fails loudly)."""
        with self._lock(problem_set.id):
            write_json_atomic(self._path(problem_set.id), problem_set.model_dump(mode="json", by_alias=True))

    def update(self, set_id: str, change: Callable[[ProblemSet], ProblemSet | None]) -> ProblemSet | None:
        """Read, change, write under the set's lock. `change` returns the new set (None: no
        write). Returns what was written, or None when the set is gone (deleted meanwhile)."""
        with self._lock(set_id):
            current = self.get(set_id)
            if current is None:
                return None
            changed = change(current)
            if changed is None:
                return None
            write_json_atomic(self._path(set_id), changed.model_dump(mode="json", by_alias=True))
            return changed

    def list(self) -> list[ProblemSet]:
        """Every readable set (unreadable files are logged and skipped)."""
        if not self.root.is_dir():
            return []
        out = []
        for path in sorted(self.root.glob("ps_*.json")):
            try:
                found = self.get(path.stem)
            except StoreCorrupt as exc:
                log.warning("skipping a problem set: %s", exc)
                continue
            if found is not None:
                out.append(found)
        return out

    def delete(self, set_id: str) -> bool:
        """Remove the set; False when it did not exist."""
        try:
            path = self._path(set_id)
        except ValueError:
            return False
        with self._lock(set_id):
            try:
                path.unlink()
            except FileNotFoundError:
                return False
        return True
