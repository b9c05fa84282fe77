"""What an import answers for one file (`ImportResult`): shared by the notes import
(`imports.py`), a folder's walk (`folders.py`) and the retirements (`retirements.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ImportResult:
    """One file's outcome: queued (its jobs started), unchanged (a true no-op), refused (why),
    removed (its knowledge is retired: a folder re-import found it gone, or the learner confirmed
    the removal of a note gone from a picked folder), running (an import of it runs already),
    ask (a single file whose name matches a note in the graph with other content: nothing was
    done; the learner says whether it replaces that note or is a new one, `NameChoice`).

    `replaces`: the sentence saying this import replaces what a note said before ("replaces
    what the earlier notes.md said" for a single file the learner chose to replace a note with,
    "replaces what the earlier version of heap.md said" for a changed file of a folder). Empty
    for a first import or a new note.
    `same_name`: for `ask`, the notes of that name it could replace (`same_name_view`)."""

    name: str
    source: str | None
    status: str
    detail: str = ""
    chunks: int = 0
    replaces: str = ""
    same_name: list[dict[str, str]] = field(default_factory=list)

    def view(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sourceId": self.source,
            "status": self.status,
            "detail": self.detail,
            "chunks": self.chunks,
            "replaces": self.replaces,
            "sameName": self.same_name,
        }
