"""The lesson trigger seam (seed §6: "session end, idle, explicit flush"): when a lesson's teacher
prose is read into the graph. Four triggers, one seam: a settled turn whose uncovered teacher prose
reaches the budget; the lesson going idle (no turn for `graph.lessonIdleSeconds`); the learner
leaving it; the learner's "Add to my graph now". The last three extract whatever is uncovered, even
below the budget. Single-flight per lesson: a flush asked for while a turn or a run is going
happens when it ends. A trigger that fires is written to the accepted queue (issue 26).

One responsibility past 400 lines: the triggers share the per-lesson timers, queued flushes and
view memos, and each reads and writes them."""

from __future__ import annotations

import asyncio
import itertools
import logging
import operator
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from server.core.clock import Clock, NewId
from server.core.contracts.chat import ChatRecord
from server.core.contracts.graph import SourceLine
from server.core.contracts.intake import IntakeEntry
from server.core.events import EventBus
from server.core.library.coverage import (
    MessageView,
    ViewMemo,
    batch_uncovered,
    message_views,
    summarize,
    uncovered,
)
from server.core.library.graph import covered_by, version_jobs
from server.core.ports import ChatStore, IntakeStore, LibraryGraph
from server.services.library.extraction import ExtractionService
from server.services.library.feed import JobSpec

log = logging.getLogger("lh.library")

FlushTrigger = Literal["explicit", "leave", "idle", "queued"]


@dataclass
class FlushOutcome:
    """What a flush did: started (a run began), running (one is going; the rest follows it),
    deferred (a turn is running; it happens when the turn settles), covered (nothing uncovered),
    empty (no teacher prose yet), missing (no such lesson)."""

    status: Literal["started", "running", "deferred", "covered", "empty", "missing"]
    detail: str


class LessonTrigger:
    """When each lesson's uncovered teacher prose is extracted (built by `LibraryService`).

    Args:
        graph: the ledgers (coverage read; a lesson's source line recorded).
        extraction: the job runner.
        chats: the lesson records (an idle or explicit flush re-reads the lesson).
        turn_running: whether a lesson has a turn running (a flush then waits for it to settle).
        intake: the accepted queue (a trigger that fires is written to it).
        events: the browser's bus (`activity-changed` when a lesson's pending flush comes or goes).
        clock: ISO timestamp source (`server.core.clock`).
        new_id: mints accepted-queue keys (`ik_` + 16 hex digits).
        budget: the chunk budget now (estimated tokens; `LibraryService.budget`).
        idle_delay: seconds a lesson waits idle before its flush (`LibraryService.idle_delay`).
        wall_clock: epoch seconds, for the `flushAt` times shown to the learner.
        settle: settles an accepted-queue entry whose run ended (`NotesImport.settle`).
    """

    def __init__(
        self,
        graph: LibraryGraph,
        extraction: ExtractionService,
        *,
        chats: ChatStore,
        turn_running: Callable[[str], bool],
        intake: IntakeStore,
        events: EventBus,
        clock: Clock,
        new_id: NewId,
        budget: Callable[[], int],
        idle_delay: Callable[[], float],
        wall_clock: Callable[[], float],
        settle: Callable[[str], None],
    ) -> None:
        self.graph = graph
        self.extraction = extraction
        self.chats = chats
        self.turn_running = turn_running
        self.intake = intake
        self.events = events
        self.clock = clock
        self.new_id = new_id
        self.budget = budget
        self.idle_delay = idle_delay
        self.wall_clock = wall_clock
        self.settle = settle
        self._lesson_keys: dict[str, str] = {}
        """Per lesson whose extraction trigger fired, its open accepted-queue entry."""
        self._idle: dict[str, asyncio.TimerHandle] = {}
        self._idle_due: dict[str, tuple[float, str]] = {}
        self._flush_after: set[str] = set()
        self._titles: dict[str, str] = {}
        self._view_memos: dict[str, ViewMemo] = {}
        """Per lesson, the teacher-prose views already made (a turn costs what is new, issue 15)."""
        self._open_memos: dict[str, _OpenMemo] = {}
        """Per lesson, its uncovered views as last found (a turn diffs only its new views)."""

    def resume(self, key: str, chat_id: str, title: str) -> FlushOutcome:
        """At start, a lesson's trigger a crash left open (accepted entry `key`, its lesson's
        `title` when known) is flushed at once (`resume.resume_accepted`)."""
        self._lesson_keys[chat_id] = key
        if title:
            self._titles.setdefault(chat_id, title)
        return self.flush(chat_id, "queued")

    def lesson_settled(self, record: ChatRecord) -> bool:
        """After each settled turn: extract at once when the uncovered teacher prose reaches the
        budget (or a flush was asked for during the turn), else wait for the lesson to go idle.
        Returns whether a run started."""
        self._cancel_idle(record.id)
        views, tokens = self._open(record)
        if not views:
            self._flush_after.discard(record.id)
            self._lesson_done(record.id)  # a trigger that fired has nothing left to read
            return self._retire_stale(record)
        if record.id in self._flush_after or tokens >= self.budget():
            return self._extract(record, views) == "started"
        self._arm_idle(record)
        return False

    def flush(self, chat_id: str, trigger: FlushTrigger = "explicit") -> FlushOutcome:
        """Extract a lesson's uncovered teacher prose now, whatever its size (the learner left
        the lesson, asked for it, or the lesson went idle). While a turn runs, the flush happens
        when it settles; while the lesson's extraction runs, when that run has merged."""
        record = self.chats.get(chat_id)
        if record is None:
            self._lesson_done(chat_id)
            return FlushOutcome("missing", "no such lesson")
        self._titles[chat_id] = record.title
        if self.turn_running(chat_id):
            self._cancel_idle(chat_id)
            self._queue_flush(chat_id)
            return FlushOutcome("deferred", "it is added to your graph when the reply being written ends")
        self._cancel_idle(chat_id)
        views = self._uncovered(record)
        if not views:
            self._flush_after.discard(chat_id)
            self._retire_stale(record)
            self._lesson_done(chat_id)
            if message_views(record.messages, self._view_memo(record.id)):
                return FlushOutcome("covered", "everything this lesson taught is already in your graph")
            return FlushOutcome(
                "empty", "nothing to add yet: the teacher has not taught anything in this lesson"
            )
        status = self._extract(record, views)
        log.info("lesson %s flushed (%s): %s", chat_id, trigger, status)
        if status == "running":
            return FlushOutcome(
                "running", "this lesson is being read into your graph; the rest follows when it ends"
            )
        return FlushOutcome("started", "this lesson is being read into your graph")

    def coverage(self, chat_id: str) -> dict[str, Any]:
        """The session header's coverage: covered / uncovered teacher prose, the lesson's running
        jobs, and when (or after what) its uncovered prose is extracted."""
        record = self.chats.get(chat_id)
        views = message_views(record.messages, self._view_memo(record.id)) if record is not None else []
        summary = summarize(views, self._covered(chat_id, views))
        jobs = [
            {"id": r["id"], "label": r["label"], "phase": r["phase"]}
            for r in self.extraction.activity()
            if r["source"] == chat_id and r["phase"] not in ("done", "error", "aborted")
        ]
        return {
            **summary.view(),
            "budgetTokens": self.budget(),
            "running": self.extraction.running(chat_id),
            "jobs": jobs,
            "pending": self._pending_view(chat_id),
        }

    def pending(self) -> list[dict[str, Any]]:
        """Lessons whose uncovered prose waits for a trigger (the activity feed's `pending`)."""
        ids = [*self._idle_due, *sorted(self._flush_after - set(self._idle_due))]
        return [view for cid in ids if (view := self._pending_view(cid)) is not None]

    def lesson_deleted(self, chat_id: str) -> None:
        """The lesson is gone: its idle timer and queued flush go with it. A run already going
        finishes (what the lesson taught stays in the graph, like every source's knowledge)."""
        self._cancel_idle(chat_id)
        if chat_id in self._flush_after:
            self._flush_after.discard(chat_id)
            self.events.emit("activity-changed")
        self._titles.pop(chat_id, None)
        self._view_memos.pop(chat_id, None)
        self._open_memos.pop(chat_id, None)
        self._lesson_done(chat_id)

    def resume_pending(self) -> int:
        """At startup: idle timers live in memory, so re-arm one for every lesson with uncovered
        teacher prose, due `graph.lessonIdleSeconds` after the lesson's last update (at once when
        that has passed). Returns how many were armed."""
        armed = 0
        for record in self.chats.list():
            if (
                self.turn_running(record.id)
                or record.id in self._idle
                or self.extraction.running(record.id)  # flushed by `resume_accepted`
                or not self._uncovered(record)
            ):
                continue
            try:
                updated = datetime.fromisoformat(record.updated_at.replace("Z", "+00:00")).timestamp()
            except ValueError:
                updated = self.wall_clock()
            self._arm_idle(record, at=updated)
            armed += 1
        return armed

    def shutdown(self) -> None:
        for handle in self._idle.values():
            handle.cancel()
        self._idle.clear()
        self._idle_due.clear()

    def _pending_view(self, chat_id: str) -> dict[str, Any] | None:
        if chat_id in self._idle_due:
            due, title = self._idle_due[chat_id]
            when = datetime.fromtimestamp(due, UTC).isoformat().replace("+00:00", "Z")
            return {"source": chat_id, "label": title, "waitingFor": "idle", "flushAt": when}
        if chat_id in self._flush_after:
            waiting = "turn" if self.turn_running(chat_id) else "run"
            label = self._titles.get(chat_id, chat_id)
            return {"source": chat_id, "label": label, "waitingFor": waiting, "flushAt": None}
        return None

    def _covered(self, chat_id: str, views: list[MessageView]) -> dict[str, set[str]]:
        """What the lesson's current jobs cover: a job that read a message since edited or
        regenerated no longer covers the other messages it read either (they run again, and the
        job is retired when they merged: docs/decisions/0010-...)."""
        coverage = self.graph.coverage(chat_id)
        return covered_by(coverage, version_jobs(coverage, _version(views)))

    def _view_memo(self, chat_id: str) -> ViewMemo:
        return self._view_memos.setdefault(chat_id, ViewMemo())

    def _uncovered(self, record: ChatRecord) -> list[MessageView]:
        return self._open(record)[0]

    def _open(self, record: ChatRecord) -> tuple[list[MessageView], int]:
        """The lesson's uncovered views and their estimated tokens. After a turn that added
        messages or replaced its last ones (a reply, an answered question), while the lesson's
        coverage lines are the very same and name none of the views that changed, only the new
        views are diffed (issue 15); anything else (an edit further back, a merge, a retirement)
        diffs them all."""
        views = message_views(record.messages, self._view_memo(record.id))
        coverage = self.graph.coverage(record.id)
        last = self._open_memos.get(record.id)
        kept = _kept_views(views, last.views) if last is not None else None
        if (
            last is not None
            and kept is not None
            and len(coverage) == len(last.coverage)
            and all(map(operator.is_, coverage, last.coverage))
            and not any(v.message_id in last.named for v in views[kept:])
            and not any(v.message_id in last.named for v in last.views[kept:])
        ):
            # the views after `kept` were replaced or added (a reply, an answered question): the
            # open ones among those gone are at the end of the open list, in order
            gone = {id(v) for v in last.views[kept:]}
            still = list(last.open)
            tokens = last.tokens
            while still and id(still[-1]) in gone:
                tokens -= still.pop().tokens
            added = uncovered(views[kept:], last.covered)
            tokens += sum(v.tokens for v in added)
            memo = _OpenMemo(views, coverage, last.named, last.covered, [*still, *added], tokens)
        else:
            covered = covered_by(coverage, version_jobs(coverage, _version(views)))
            found = uncovered(views, covered)
            named = {line.message for line in coverage}
            memo = _OpenMemo(views, coverage, named, covered, found, sum(v.tokens for v in found))
        self._open_memos[record.id] = memo
        return list(memo.open), memo.tokens

    def _retire_stale(self, record: ChatRecord) -> bool:
        """Nothing to read, but jobs that read edited, regenerated or removed teacher prose still
        count, or a failed re-read left merged jobs of the current prose pending: complete the
        version (a run with no jobs; no model call). Returns whether one started."""
        if self.extraction.running(record.id):
            return False
        version = _version(message_views(record.messages, self._view_memo(record.id)))
        keep = version_jobs(self.graph.coverage(record.id), version)
        stale = self.graph.contributors(record.id) - keep
        if not stale and not keep & self.graph.pending():
            return False
        return self.extraction.start(record.id, "chat", record.title, [], version=version)

    def _arm_idle(self, record: ChatRecord, at: float | None = None) -> None:
        """Flush the lesson `graph.lessonIdleSeconds` after `at` (epoch seconds; default now)."""
        try:
            delay = self.idle_delay()
        except Exception:  # unreadable settings: the settings page says so; no timer
            log.warning("settings unreadable; lesson %s waits for its next trigger", record.id)
            return
        now = self.wall_clock()
        due = (now if at is None else at) + delay
        loop = asyncio.get_running_loop()
        self._idle[record.id] = loop.call_later(max(0.0, due - now), self._idle_fired, record.id)
        self._idle_due[record.id] = (due, record.title)
        self.events.emit("activity-changed")  # the feed's `pending` changed

    def _queue_flush(self, chat_id: str) -> None:
        """Flush again when the running turn or run ends (shown under the feed's `pending`)."""
        self._lesson_accepted(chat_id)
        if chat_id not in self._flush_after:
            self._flush_after.add(chat_id)
            self.events.emit("activity-changed")

    def _lesson_accepted(self, chat_id: str) -> None:
        """The lesson's extraction trigger fired: unless it has one open already, its accepted
        entry is written (at once; fsynced in the background: a turn's settlement is on the event
        loop), so a restart extracts it (`resume_accepted`)."""
        if chat_id in self._lesson_keys:
            return
        entry = IntakeEntry(
            key=self.new_id("ik_"),
            kind="lesson",
            source=chat_id,
            label=self._titles.get(chat_id, ""),
            at=self.clock(),
        )
        try:
            self.intake.accept([entry], durable=False)
        except OSError:  # the trigger still runs; only a crash before it ends would forget it
            log.exception("recording lesson %s's extraction trigger failed", chat_id)
            return
        self._lesson_keys[chat_id] = entry.key

    def _lesson_done(self, chat_id: str) -> None:
        """Nothing of the lesson's trigger is left to run (its run ended, it is covered, gone)."""
        key = self._lesson_keys.get(chat_id)
        if key is None or self.extraction.stopping:
            return
        del self._lesson_keys[chat_id]
        self.settle(key)

    def _cancel_idle(self, chat_id: str) -> None:
        handle = self._idle.pop(chat_id, None)
        if handle is not None:
            handle.cancel()
        if self._idle_due.pop(chat_id, None) is not None:
            self.events.emit("activity-changed")

    def _idle_fired(self, chat_id: str) -> None:
        self._idle.pop(chat_id, None)
        self._idle_due.pop(chat_id, None)
        if self.turn_running(chat_id):
            return  # the turn's settlement re-arms the timer
        try:
            self.flush(chat_id, "idle")
        except Exception:  # a side channel: contained
            log.exception("the idle flush of lesson %s failed", chat_id)

    def _extract(self, record: ChatRecord, views: list[MessageView]) -> Literal["started", "running"]:
        """Start the lesson's run over `views` in greedy budgeted batches; when one is already
        running, flush again after it."""
        self._titles[record.id] = record.title
        if self.extraction.running(record.id):
            self._queue_flush(record.id)
            return "running"
        self._lesson_accepted(record.id)
        self._flush_after.discard(record.id)
        budget = self.budget()
        if record.id not in self.graph.sources():
            source = SourceLine(id=record.id, kind="chat", title=record.title, at=self.clock())
            self.graph.record_source(source)
        jobs = [
            JobSpec(
                text="\n\n".join(v.text for v in batch),
                coverage=[(v.message_id, v.fingerprint) for v in batch],
                messages=[v.message_id for v in batch],
            )
            for batch in batch_uncovered(views, budget)
        ]
        chat_id = record.id

        def ended(all_merged: bool) -> None:
            if chat_id in self._flush_after and all_merged:
                # after this task is done, so the single-flight check lets the next run start
                asyncio.get_running_loop().call_soon(self._flush_queued, chat_id)
                return
            if not all_merged:
                self._flush_after.discard(chat_id)
            self._lesson_done(chat_id)  # a failed run's prose waits for the next trigger

        version = _version(
            message_views(record.messages, self._view_memo(record.id))
        )  # what replaces the lesson's old jobs
        started = self.extraction.start(
            record.id, "chat", record.title, jobs, on_complete=ended, version=version
        )
        return "started" if started else "running"

    def _flush_queued(self, chat_id: str) -> None:
        if chat_id not in self._flush_after:
            return
        try:
            self.flush(chat_id, "queued")
        except Exception:
            log.exception("the queued flush of lesson %s failed", chat_id)


@dataclass(frozen=True)
class _OpenMemo:
    """A lesson's uncovered views (`open`, `tokens` of them) as found over `views` against its
    `coverage` lines (`named`: the message ids they name; `covered`: what they cover)."""

    views: list[MessageView]
    coverage: list[Any]
    named: set[str]
    covered: dict[str, set[str]]
    open: list[MessageView]
    tokens: int


def _kept_views(views: list[MessageView], before: list[MessageView]) -> int | None:
    """How many leading views are the very objects of `before`, when that is all of `before` or
    all but its last one or two (a turn changes the tail); None otherwise."""
    m = min(len(views), len(before))
    for kept in (m, m - 1, m - 2):
        if kept < len(before) - 2 or kept < 0:
            break
        if all(map(operator.is_, itertools.islice(views, kept), itertools.islice(before, kept))):
            return kept
    return None


def _version(views: list[MessageView]) -> dict[str, str]:
    """A lesson's current version: message id -> teacher-prose fingerprint."""
    return {v.message_id: v.fingerprint for v in views}
