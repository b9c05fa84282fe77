"""The trash's files: `data/trash/<record id>/entry.json` and `files/<path in the data dir>`
(implements core.trash.TrashStore; decision 0043).

A record's files are moved with `os.replace` (one file system: a rename, never a copy), so a file
is always whole in one place. `entry.json` is written last by `put`; `take` first renames it to
`taking.json`. A folder without `entry.json` is therefore a move a crash cut short, either way:
`recover` (at start) moves its files back to their places and removes it, so a crash never loses
a record and never lists half an entry.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from server.core.trash import TrashEntry
from server.store.atomic import read_json, write_json_atomic

log = logging.getLogger("lh.store.trash")

ENTRY = "entry.json"
TAKING = "taking.json"
FILES = "files"
ENTRY_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""An entry id is a record id: a file name, never a path."""
PLACES = ("chats", "jobs", "practice")
"""The data dir's folders a trashed file may come from and go back to (nothing else is moved)."""


def _relative(path: str) -> PurePosixPath:
    """A moved file's path, checked: relative, inside one of `PLACES`, no `..`. Raises ValueError."""
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts or len(rel.parts) != 2 or rel.parts[0] not in PLACES:
        raise ValueError(f"not a trashable file: {path!r}")
    return rel


class FileTrash:
    """Args: data_root: the data dir (the trash is its `trash/` folder, created on first use)."""

    def __init__(self, data_root: Path) -> None:
        self.data_root = data_root
        self.root = data_root / "trash"

    def _dir(self, entry_id: str) -> Path:
        if not ENTRY_ID.match(entry_id):
            raise ValueError(f"not a trash entry id: {entry_id!r}")
        return self.root / entry_id

    def put(self, entry: TrashEntry) -> TrashEntry:
        """See `TrashStore.put`. Files absent from the data dir are left out of the entry."""
        folder = self._dir(entry.id)
        rels = [_relative(f) for f in entry.files]
        if folder.exists():
            shutil.rmtree(folder)
        moved: list[PurePosixPath] = []
        try:
            for rel in rels:
                source = self.data_root / rel
                if not source.exists():
                    continue
                target = folder / FILES / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
                moved.append(rel)
            kept = entry.model_copy(update={"files": [str(r) for r in moved]})
            write_json_atomic(folder / ENTRY, kept.model_dump(mode="json", by_alias=True))
        except OSError:
            self._move_back(folder)
            raise
        return kept

    def get(self, entry_id: str) -> TrashEntry | None:
        try:
            path = self._dir(entry_id) / ENTRY
        except ValueError:
            return None
        try:
            return TrashEntry.model_validate(read_json(path))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, ValidationError) as exc:
            log.warning("unreadable trash entry %s: %s", path, exc)
            return None

    def list(self) -> list[TrashEntry]:
        if not self.root.is_dir():
            return []
        out = [e for d in sorted(self.root.iterdir()) if d.is_dir() and (e := self.get(d.name))]
        return sorted(out, key=lambda e: e.deleted_at, reverse=True)

    def take(self, entry_id: str) -> TrashEntry | None:
        """See `TrashStore.take`."""
        entry = self.get(entry_id)
        if entry is None:
            return None
        folder = self._dir(entry_id)
        taken = [r for r in map(_relative, entry.files) if (self.data_root / r).exists()]
        if taken:
            raise FileExistsError(f"{', '.join(map(str, taken))} exists in the data dir again")
        os.replace(folder / ENTRY, folder / TAKING)
        self._move_back(folder)
        return entry

    def remove(self, entry_id: str) -> bool:
        try:
            folder = self._dir(entry_id)
        except ValueError:
            return False
        if not (folder / ENTRY).is_file():
            return False
        os.replace(folder / ENTRY, folder / TAKING)  # no longer listed, even if the rmtree fails
        shutil.rmtree(folder)
        return True

    def recover(self) -> int:
        """Every folder without `entry.json` (a cut-short `put` or `take`): its files go back to
        their places (a place already taken keeps its file; the trashed copy stays and is logged)
        and the folder is removed when empty. Returns how many folders were handled."""
        if not self.root.is_dir():
            return 0
        count = 0
        for folder in sorted(self.root.iterdir()):
            if folder.is_dir() and not (folder / ENTRY).exists():
                self._move_back(folder)
                count += 1
        return count

    def _move_back(self, folder: Path) -> None:
        """Move every file under `folder/files/` back to its place in the data dir, then remove the
        folder (kept, with what could not go back, when a place is taken)."""
        left = False
        files = folder / FILES
        for place in PLACES:
            for path in sorted((files / place).glob("*")) if (files / place).is_dir() else []:
                target = self.data_root / place / path.name
                if target.exists():
                    log.warning("trash: %s not moved back, %s exists", path, target)
                    left = True
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
        if left:
            with contextlib.suppress(FileNotFoundError):
                (folder / TAKING).unlink()
            return
        shutil.rmtree(folder, ignore_errors=True)
