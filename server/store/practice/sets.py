"""Problem sets in `data/practice/<id>.json` (implements core.ports.PracticeStore).

One file per set, replaced atomically; `update` is a read-modify-write under the set's own lock,
so the parallel generators and graders of one set never lose each other's writes. A file that is
not a valid set (torn, hand-edited, an older shape) is skipped by `list` and refused by `get`
with StoreCorrupt, never deleted (seed §7: `data/practice` is scratch, but nothing is lost
silently)."""

from __future__ import annotations

import re
from pathlib import Path

from server.core.contracts.practice import ProblemSet
from server.store.records import RecordFiles

SET_ID = re.compile(r"^ps_[0-9a-f]{8,32}$")


class FilePracticeStore(RecordFiles[ProblemSet]):
    """Args: root: the practice directory (created on first save)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, ProblemSet, SET_ID, "problem set")

    def list(self) -> list[ProblemSet]:
        """Every readable set (unreadable files are logged and skipped)."""
        return self._all("ps_")
