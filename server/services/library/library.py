"""The Library's front doors and reads (seed §6): the notes import (its per-file work in
`imports.py`, a folder's walk in `folders.py`), the lesson trigger seam (`lessons.py`), the accepted
queue's resume (`resume.py`), and the read-only views the teacher's graph tools and the UI use."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from server.agent.library.extraction import extractor_overhead_tokens
from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.chat import ChatRecord
from server.core.events import EventBus
from server.core.library.coverage import fitting_chunk_tokens
from server.core.ports import ChatStore, IntakeStore, LibraryGraph, SettingsStore
from server.core.refusals import Refused
from server.services.library import folders
from server.services.library.extraction import ExtractionService
from server.services.library.folders import FolderWalk, import_roots
from server.services.library.imports import (
    ImportOutcome,
    ImportResult,
    Loader,
    NameChoice,
    NotesImport,
    given,
)
from server.services.library.jobs import OFFLINE_MAX_TOKENS
from server.services.library.lessons import FlushOutcome, FlushTrigger, LessonTrigger
from server.services.library.resume import resume_accepted


class LibraryService:
    """Args:
    graph: the ledgers (read here; written only through `extraction`).
    extraction: the job runner.
    settings: for `graph.extractionChunkTokens` and `graph.lessonIdleSeconds`.
    clock: ISO timestamp source (`server.core.clock`).
    chats: the lesson records (an idle or explicit flush re-reads the lesson).
    turn_running: whether a lesson has a turn running (a flush then waits for it to settle).
    idle_delay_s: overrides `graph.lessonIdleSeconds` (tests use a fraction of a second).
    wall_clock: epoch seconds, for the `flushAt` times shown to the learner.
    context_window: the context window of the model extraction runs now when it is known to be
        small (the offline model): (its tokens, its tokens per estimated token); else None. The
        chunk budget then fits it (`budget`).
    intake: the accepted queue (issue 26): an import's runs are written to it before they start
        (and before the request is answered), a lesson's extraction trigger when it fires; each
        entry settles when its run ends, and `resume_accepted` starts the open ones at start.
    events: the browser's bus (`activity-changed` when a lesson's pending flush comes or goes; a
        private one when omitted).
    new_id: mints accepted-queue keys (`ik_` + 16 hex digits).
    """

    def __init__(
        self,
        graph: LibraryGraph,
        extraction: ExtractionService,
        settings: SettingsStore,
        clock: Clock = utc_now,
        *,
        chats: ChatStore,
        turn_running: Callable[[str], bool] = lambda _chat_id: False,
        idle_delay_s: float | None = None,
        wall_clock: Callable[[], float] = time.time,
        context_window: Callable[[], tuple[int, float] | None] = lambda: None,
        intake: IntakeStore,
        events: EventBus | None = None,
        new_id: NewId = new_id,
    ) -> None:
        self.graph = graph
        self.events = events if events is not None else EventBus()
        self.new_id = new_id
        self.extraction = extraction
        self.settings = settings
        self.clock = clock
        self.chats = chats
        self.turn_running = turn_running
        self.idle_delay_s = idle_delay_s
        self.wall_clock = wall_clock
        self.context_window = context_window
        self.intake = intake
        self.notes = NotesImport(graph, extraction, intake, clock, new_id, self.budget)
        """The notes files' imports (`imports.py`)."""
        self.lessons = LessonTrigger(
            graph,
            extraction,
            chats=chats,
            turn_running=turn_running,
            intake=intake,
            events=self.events,
            clock=clock,
            new_id=new_id,
            budget=self.budget,
            idle_delay=self.idle_delay,
            wall_clock=lambda: self.wall_clock(),
            settle=self.notes.settle,
        )
        """The lesson trigger seam (`lessons.py`)."""

    def budget(self) -> int:
        """The chunk budget (estimated tokens): `graph.extractionChunkTokens`, lowered to what the
        extraction's model reads at once after the extractor's instructions, tool schema and
        answer room (`fitting_chunk_tokens`; the offline model's 4,096-token window)."""
        configured = self.settings.load().graph.extraction_chunk_tokens
        window = self.context_window()
        if window is None:
            return configured
        tokens, per_estimate = window
        return fitting_chunk_tokens(
            configured, tokens, extractor_overhead_tokens(), OFFLINE_MAX_TOKENS, per_estimate
        )

    def idle_delay(self) -> float:
        """Seconds without a settled turn before a lesson's uncovered prose is extracted."""
        if self.idle_delay_s is not None:
            return self.idle_delay_s
        return self.settings.load().graph.lesson_idle_seconds

    # -- the notes front door -------------------------------------------------------------------
    def import_files(
        self,
        files: list[tuple[str, bytes]],
        import_id: str | None = None,
        choices: dict[str, NameChoice] | None = None,
    ) -> list[ImportResult]:
        """`NotesImport.import_files`: all at once on the calling thread."""
        return self.notes.import_files(files, import_id, choices)

    async def import_many(
        self,
        items: list[tuple[str, Loader]],
        import_id: str | None = None,
        choices: dict[str, NameChoice] | None = None,
    ) -> list[ImportResult]:
        """`NotesImport.import_many`: paged, off the event loop, durable before it answers."""
        return await self.notes.import_many(items, import_id, choices)

    def begin_import(self, label: str, import_id: str | None = None) -> str:
        """`NotesImport.begin_import`: the import a request's files belong to."""
        return self.notes.begin_import(label, import_id)

    def count(self, import_id: str | None, results: list[ImportResult]) -> None:
        """`NotesImport.count`: refused and removed files counted into the import's summary."""
        self.notes.count(import_id, results)

    def retire_missing(self, folder: str, present: list[str]) -> list[ImportResult]:
        """`Retirements.retire_missing`: files a folder import found gone are retired."""
        return self.notes.retirements.retire_missing(folder, present)

    def collect_folder(self, folder: str) -> FolderWalk:
        """`folders.collect_folder` inside the import roots (`import_roots`; blocking).

        Raises:
            FolderRefused: see `folders.collect_folder`.
        """
        return folders.collect_folder(folder, import_roots(self.settings))

    @staticmethod
    def folder_items(walk: FolderWalk) -> list[tuple[str, Loader]]:
        """`folders.folder_items`: the walk's files as (absolute path, loader)."""
        return folders.folder_items(walk)

    async def import_picked(
        self,
        files: list[tuple[str, bytes]],
        import_id: str | None = None,
        choices: dict[str, NameChoice] | None = None,
    ) -> ImportOutcome:
        """The learner's picked files (name or relative path, bytes as uploaded) imported as one
        import: the one named `import_id` when it is still known (a later page of one pick), else
        a new one labelled "Notes you picked" (`import_many`; refused files counted in its
        summary). A single file whose name matches a note with other content is answered `ask`
        (nothing done) unless `choices` (by file name) says whether it replaces one of them or
        is a new note.

        Raises:
            OSError: the accepted queue could not be written: no run was started.
        """
        import_id = self.begin_import("Notes you picked", import_id)
        results = await self.import_many([(name, given(data)) for name, data in files], import_id, choices)
        self.count(import_id, results)
        return ImportOutcome(import_id, results)

    def gone_notes(self, folders: list[str], present: list[str]) -> list[dict[str, Any]]:
        """The notes gone from folders picked again in the browser (`Retirements.gone_from`),
        each as `{"sourceId", "path", "title", "propositions"}` (`propositions`: the graph's
        propositions it is a source of, the ones its removal may take out). Changes nothing."""
        gone = self.notes.retirements.gone_from(folders, present)
        if not gone:
            return []
        counts = dict.fromkeys((line.id for line in gone), 0)
        for node in self.graph.nodes().values():
            for src in node.sources:
                if src in counts:
                    counts[src] += 1
        return [
            {"sourceId": line.id, "path": line.path, "title": line.title, "propositions": counts[line.id]}
            for line in gone
        ]

    def remove_notes(self, ids: list[str], import_id: str | None = None) -> ImportOutcome:
        """Take out what the given notes said, as the learner confirmed (`Retirements.remove`),
        counted as `removed` in the import `import_id` when it is still known (the pick that
        found them gone), else in a new one labelled "Notes removed".

        Raises:
            OSError: the accepted queue could not be written: nothing was removed."""
        import_id = self.begin_import("Notes removed", import_id)
        results = self.notes.retirements.remove(ids)
        self.count(import_id, results)
        return ImportOutcome(import_id, results)

    def lesson_knowledge(self, chat_id: str) -> dict[str, Any]:
        """What a lesson taught that is in the graph (issue 29: the lesson's delete dialog says it
        stays and offers to remove it): `{"sourceId", "propositions", "reading"}`;
        `propositions`: the graph's propositions the lesson is a source of (0 when it never was
        read into the graph); `reading`: whether its reading runs now (a removal waits for it).

        Raises:
            Refused: not_found, when `chat_id` is neither a lesson nor a source of the graph."""
        self._known_lesson(chat_id)
        count = sum(1 for node in self.graph.nodes().values() if chat_id in node.sources)
        return {"sourceId": chat_id, "propositions": count, "reading": self.extraction.running(chat_id)}

    def remove_lesson(self, chat_id: str) -> ImportResult:
        """Take what a lesson taught out of the graph, as the learner chose when deleting it
        (`Retirements.remove` with kind "chat": a run with no jobs, no model call): `removed`,
        `refused` (not a lesson in the graph), `running` (its reading runs: nothing removed) or
        `unchanged` (nothing of it is left).

        Raises:
            Refused: not_found, when `chat_id` is neither a lesson nor a source of the graph.
            OSError: the accepted queue could not be written: nothing was removed."""
        self._known_lesson(chat_id)
        return self.notes.retirements.remove([chat_id], kind="chat")[0]

    def _known_lesson(self, chat_id: str) -> None:
        """Raises Refused (not_found) unless `chat_id` is a lesson or a source of the graph (a
        deleted lesson's knowledge stays a source until removed)."""
        if chat_id not in self.graph.sources() and self.chats.get(chat_id) is None:
            detail = f"no lesson {chat_id!r} and nothing it taught in the graph"
            raise Refused("not_found", "lesson_not_found", detail)

    async def import_chosen_folder(self, folder: str) -> ImportOutcome:
        """A folder the learner chose imported as one import labelled "Import of <folder name>":
        the walk in a worker thread (`collect_folder`), its files read page by page
        (`import_many`), then every file imported from it before that is gone now retired
        (`retire_missing`); refused and removed files counted in its summary.

        Raises:
            FolderRefused: see `collect_folder` (nothing was imported).
            OSError: the accepted queue could not be written: no run was started.
        """
        walk = await asyncio.to_thread(self.collect_folder, folder)
        import_id = self.begin_import(f"Import of {walk.root.name or walk.root}")
        results = walk.refused + await self.import_many(self.folder_items(walk), import_id)
        results += self.retire_missing(folder, [r.name for r in results])
        self.count(import_id, results)
        return ImportOutcome(import_id, results)

    def import_folder(self, folder: str) -> list[ImportResult]:
        """`collect_folder`, then read and import every file on the calling thread (blocking;
        the API uses `collect_folder` in a thread and `import_many`).

        Raises:
            FolderRefused: see `collect_folder`.
        """
        walk = self.collect_folder(folder)
        results = walk.refused + self.notes.import_loaded(self.folder_items(walk), None)
        return results + self.retire_missing(folder, [r.name for r in results])

    # -- the lesson trigger seam (`lessons.py`) --------------------------------------------------
    def lesson_settled(self, record: ChatRecord) -> bool:
        """`LessonTrigger.lesson_settled`: after each settled turn; whether a run started."""
        return self.lessons.lesson_settled(record)

    def flush(self, chat_id: str, trigger: FlushTrigger = "explicit") -> FlushOutcome:
        """`LessonTrigger.flush`: extract a lesson's uncovered teacher prose now."""
        return self.lessons.flush(chat_id, trigger)

    def coverage(self, chat_id: str) -> dict[str, Any]:
        """`LessonTrigger.coverage`: the session header's coverage."""
        return self.lessons.coverage(chat_id)

    def pending(self) -> list[dict[str, Any]]:
        """`LessonTrigger.pending`: lessons whose uncovered prose waits for a trigger."""
        return self.lessons.pending()

    def lesson_deleted(self, chat_id: str) -> None:
        """`LessonTrigger.lesson_deleted`: its idle timer and queued flush go with it."""
        self.lessons.lesson_deleted(chat_id)

    def resume_pending(self) -> int:
        """`LessonTrigger.resume_pending`: idle timers re-armed at startup; how many."""
        return self.lessons.resume_pending()

    def shutdown(self) -> None:
        self.lessons.shutdown()

    def resume_accepted(self) -> dict[str, int]:
        """At start, before any request: `resume.resume_accepted` (counts by kind).

        Raises:
            OSError: the accepted queue could not be read or rewritten (nothing started)."""
        return resume_accepted(self.intake, self.graph, self.notes, self.lessons)

    # -- the Library's settings -------------------------------------------------------------------
    def settings_view(self) -> dict[str, Any]:
        """`{"extractionChunkTokens", "lessonIdleSeconds", "graphTools", "graphEnabled"}` as they
        apply now (`GET /api/library/settings`)."""
        settings = self.settings.load()
        return {
            "extractionChunkTokens": settings.graph.extraction_chunk_tokens,
            "lessonIdleSeconds": settings.graph.lesson_idle_seconds,
            "graphTools": settings.agent.graph_tools,
            "graphEnabled": settings.graph.enabled,
        }

    def update_settings(
        self,
        *,
        extraction_chunk_tokens: int | None = None,
        lesson_idle_seconds: float | None = None,
        graph_tools: bool | None = None,
        graph_enabled: bool | None = None,
    ) -> dict[str, Any]:
        """Change the given Library settings (`graph.extractionChunkTokens`,
        `graph.lessonIdleSeconds`, `agent.graphTools`, `graph.enabled`; None keeps one), keep
        every other setting, and answer them as they now apply (`settings_view`)."""
        settings = self.settings.load()
        if extraction_chunk_tokens is not None:
            settings.graph.extraction_chunk_tokens = extraction_chunk_tokens
        if lesson_idle_seconds is not None:
            settings.graph.lesson_idle_seconds = lesson_idle_seconds
        if graph_tools is not None:
            settings.agent.graph_tools = graph_tools
        if graph_enabled is not None:
            settings.graph.enabled = graph_enabled
        self.settings.save(settings)
        return self.settings_view()

    # -- reads for the teacher's graph tools ------------------------------------------------------
    def sessions(self) -> list[dict[str, Any]]:
        """Birth sessions (lessons and notes files) with their proposition counts."""
        counts: dict[str, int] = {}
        for node in self.graph.nodes().values():
            if node.sources:
                counts[node.sources[0]] = counts.get(node.sources[0], 0) + 1
        titles = {s.id: s for s in self.graph.sources().values()}
        return [
            {
                "id": sid,
                "title": titles[sid].title if sid in titles else None,
                "kind": titles[sid].kind if sid in titles else None,
                "propositions": n,
            }
            for sid, n in sorted(counts.items(), key=lambda kv: -kv[1])
        ]

    def propositions(self, session: str) -> list[dict[str, str]]:
        """Names and statements of the propositions a session gave the graph."""
        return [
            {"id": n.id, "name": n.name, "statement": n.statement}
            for n in self.graph.nodes().values()
            if session in n.sources
        ]
