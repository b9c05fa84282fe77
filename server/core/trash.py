"""The trash (issue 31 item 6, decision 0043): a deleted lesson or problem set is moved, not
removed, and kept `TRASH_DAYS` days; Settings restores it whole or empties the trash.

Pure: the entry's shape, when an entry is due to be purged, and the store's port. The files live
in `data/trash/<record id>/` (`server.store.trash`); the service is `server.services.trash`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal, Protocol

from pydantic import Field

from server.core.contracts.models import Camel

TRASH_DAYS = 30
"""How long a trashed lesson or problem set is kept, in days, before it is removed for good."""

TrashKind = Literal["lesson", "practiceSet"]


class TrashEntry(Camel):
    """`data/trash/<id>/entry.json`: what was deleted, when, and which files went with it.

    Attributes:
        id: the record's own id (a session `c_…` or a problem set `ps_…`); one entry per record.
        kind: "lesson" or "practiceSet".
        title: the record's title when it was deleted (shown in Settings).
        deleted_at: ISO-8601 UTC (`server.core.clock`).
        purge_at: ISO-8601 UTC: `deleted_at` + `TRASH_DAYS` days; removed for good after it.
        files: the moved files, as paths relative to the data dir (`chats/c_….json`, its `.log`,
            `jobs/job_….json` of the lesson's Workbench jobs, `practice/ps_….json`).
    """

    id: str
    kind: TrashKind
    title: str
    deleted_at: str
    purge_at: str
    files: list[str] = Field(default_factory=list)


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def purge_time(deleted_at: str, days: int = TRASH_DAYS) -> str:
    """`deleted_at` (ISO-8601 UTC, `…Z`) plus `days` days, in the same form. Raises ValueError on
    a timestamp that is not ISO-8601."""
    when = _parse(deleted_at) + timedelta(days=days)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def due(entries: Iterable[TrashEntry], now: str) -> list[str]:
    """The ids of the entries whose `purge_at` is at or before `now` (ISO-8601 UTC). An entry with
    an unreadable `purge_at` is kept (never removed on a guess)."""
    at = _parse(now)
    out = []
    for entry in entries:
        try:
            if _parse(entry.purge_at) <= at:
                out.append(entry.id)
        except ValueError:
            continue
    return out


class TrashStore(Protocol):
    """`data/trash/`: entries moved out of the live stores (implemented by `server.store.trash`).

    Paths are relative to the data dir and name files of the live stores; the caller holds the
    owning store's lock around `put` and `take` (no half-moved record is ever read)."""

    def put(self, entry: TrashEntry) -> TrashEntry:
        """Move `entry.files` that exist into the trash and record the entry (an older entry of the
        same id is replaced). Returns the entry with the files really moved. Raises OSError (what
        was moved is moved back)."""
        ...

    def take(self, entry_id: str) -> TrashEntry | None:
        """Move the entry's files back to their places and drop the entry; None when there is no
        such entry. Raises FileExistsError when a file of it exists in the data dir again (nothing
        is moved then), OSError otherwise."""
        ...

    def get(self, entry_id: str) -> TrashEntry | None:
        """The entry, or None."""
        ...

    def list(self) -> list[TrashEntry]:
        """Every readable entry, newest deletion first (unreadable ones are logged and skipped)."""
        ...

    def remove(self, entry_id: str) -> bool:
        """Delete the entry and its files for good; False when absent."""
        ...

    def recover(self) -> int:
        """At start: finish or undo what a crash left half done (see the adapter). How many."""
        ...


class RestoreBody(Camel):
    """POST /api/trash/restore: `{"id": "<record id>"}`, an entry of GET /api/trash."""

    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="the trashed lesson's or problem set's id")
