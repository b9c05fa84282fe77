"""The trash (issue 31 item 6, decision 0043): a deleted lesson or problem set is moved into
`data/trash/` and kept `TRASH_DAYS` days; it can be restored whole or removed for good.

A lesson goes with its record (snapshot and log) and its Workbench job records; a problem set
with its record. The moves run under the owning store's lock (a lesson's under the chat store's,
so no save interleaves). What other services kept in memory for a trashed lesson is dropped by
the `LessonDeleted` fan-out as before; a restore gives the lesson back to them through
`restored` listeners (its idle flush re-armed, its jobs' pending deliveries owed again).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from server.core.clock import Clock, utc_now
from server.core.contracts.chat import ChatRecord
from server.core.contracts.jobs import JobRecord
from server.core.contracts.practice import ProblemSet
from server.core.events import EventBus
from server.core.ports import ChatStore, JobStore
from server.core.refusals import Refused
from server.core.trash import TRASH_DAYS, TrashEntry, TrashStore, due, purge_time

log = logging.getLogger("lh.trash")

RestoredLesson = Callable[[ChatRecord, list[JobRecord]], object]
"""Called after a lesson came back from the trash with its record and its job records."""


class TrashService:
    """Args:
    store: the trash's files (`server.store.trash.FileTrash`).
    chats: the session store (a restored lesson is read back from it).
    chats_held: the session store's lock as a context (`FileChatStore.held`): a lesson is moved
        in and out under it.
    jobs: the Workbench job records (a lesson's go to the trash with it).
    events: the browser's notification bus ("chats-changed", "jobs-changed", "activity-changed").
    clock: ISO-8601 UTC now (`server.core.clock`; tests inject one to test the 30 days).
    days: how long an entry is kept (`TRASH_DAYS`).
    """

    def __init__(
        self,
        store: TrashStore,
        chats: ChatStore,
        chats_held: Callable[[], AbstractContextManager[Any]],
        jobs: JobStore,
        events: EventBus,
        *,
        clock: Clock = utc_now,
        days: int = TRASH_DAYS,
    ) -> None:
        self.store = store
        self.chats = chats
        self.chats_held = chats_held
        self.jobs = jobs
        self.events = events
        self.clock = clock
        self.days = days
        self.restored: list[RestoredLesson] = []
        """Listeners told of a restored lesson (bootstrap: the Library's idle flush, the wake)."""
        self.restored_sets: list[Callable[[], object]] = []
        """Listeners told a problem set came back (bootstrap: resume what its stopped runs left)."""

    def _entry(self, record_id: str, kind: Any, title: str, files: list[str]) -> TrashEntry:
        now = self.clock()
        return TrashEntry(
            id=record_id,
            kind=kind,
            title=title,
            deleted_at=now,
            purge_at=purge_time(now, self.days),
            files=files,
        )

    def lesson(self, record: ChatRecord) -> bool:
        """Move a lesson (its snapshot, log and job records) into the trash; the caller checked that
        no turn runs and no worker of it computes. Returns whether its record was there to move.
        Raises OSError (nothing moved then)."""
        files = [f"jobs/{job.id}.json" for job in self.jobs.list(record.id)]
        files += [f"chats/{record.id}.log", f"chats/{record.id}.json"]  # the snapshot last
        with self.chats_held():
            entry = self.store.put(self._entry(record.id, "lesson", record.title, files))
        if any(f.startswith("jobs/") for f in entry.files):  # its job records went with it
            self.events.emit("jobs-changed", {"chatId": record.id})
        self.purge()
        return f"chats/{record.id}.json" in entry.files

    def practice_set(self, record: ProblemSet) -> bool:
        """Move a problem set's record into the trash (its runs were stopped). Returns whether it
        was there to move. Raises OSError."""
        entry = self.store.put(
            self._entry(record.id, "practiceSet", record.title, [f"practice/{record.id}.json"])
        )
        self.purge()
        return bool(entry.files)

    def list(self) -> list[dict[str, Any]]:
        """The trash, newest deletion first: `[{id, kind, title, deletedAt, purgeAt, files}]`
        (entries past their time are purged first)."""
        self.purge()
        return [e.model_dump(mode="json", by_alias=True) for e in self.store.list()]

    def restore(self, entry_id: str) -> dict[str, Any]:
        """Move an entry back into the live stores. Returns the entry (as `list` shows it).
        Raises Refused(not_found) for an unknown id; Refused(conflict) when a record of the same
        id exists again (a restored backup brought it back); OSError."""
        entry = self.store.get(entry_id)
        if entry is None:
            raise Refused(
                "not_found",
                "trash_entry_not_found",
                f"nothing called {entry_id!r} is in the trash; reload the list",
            )
        try:
            if entry.kind == "lesson":
                with self.chats_held():
                    self.store.take(entry_id)
            else:
                self.store.take(entry_id)
        except FileExistsError as exc:
            raise Refused(
                "conflict",
                "trash_entry_exists",
                f"“{entry.title}” exists again outside the trash, so restoring it would overwrite it ({exc})",
            ) from exc
        if entry.kind == "lesson":
            self.events.emit("chats-changed")
            record = self.chats.get(entry.id)
            if record is not None:
                jobs = self.jobs.list(entry.id)
                if jobs:
                    self.events.emit("jobs-changed", {"chatId": entry.id})
                for listener in self.restored:
                    try:
                        listener(record, jobs)
                    except Exception:  # a side channel: the lesson itself is back
                        log.exception("a listener of a restored lesson failed")
        else:
            for resume in self.restored_sets:
                try:
                    resume()
                except Exception:  # the set itself is back; the next start resumes it
                    log.exception("a listener of a restored problem set failed")
        self.events.emit("activity-changed")
        return entry.model_dump(mode="json", by_alias=True)

    def empty(self) -> int:
        """Remove every entry for good. Returns how many."""
        return sum(self.store.remove(e.id) for e in self.store.list())

    def purge(self) -> int:
        """Remove the entries kept past their time (`purge_at` <= now). Returns how many; an
        entry that cannot be removed is logged and tried again next time."""
        removed = 0
        for entry_id in due(self.store.list(), self.clock()):
            try:
                removed += self.store.remove(entry_id)
            except OSError:
                log.exception("purging trash entry %s failed", entry_id)
        return removed

    def startup(self) -> None:
        """At start: finish what a crash cut short, then purge what is past its time."""
        recovered = self.store.recover()
        if recovered:
            log.info("trash: %d half-done moves put back", recovered)
        purged = self.purge()
        if purged:
            log.info("trash: %d entries past %d days removed", purged, self.days)
