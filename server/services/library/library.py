"""The Library's front doors and reads (seed §6): the notes import, the lesson trigger seam, and
the read-only views the teacher's graph tools and the UI use."""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import operator
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from server.agent.library.extraction import extractor_overhead_tokens
from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.chat import ChatRecord
from server.core.contracts.graph import SourceLine
from server.core.contracts.intake import IntakeEntry, IntakeJob
from server.core.events import EventBus
from server.core.library.coverage import (
    MessageView,
    ViewMemo,
    batch_uncovered,
    fitting_chunk_tokens,
    message_views,
    summarize,
    uncovered,
)
from server.core.library.graph import covered_by, version_jobs
from server.core.library.note_text import prepare_note
from server.core.library.notes import (
    MAX_NOTE_BYTES,
    NOTE_SUFFIXES,
    FolderRefused,
    NoteRefused,
    chunk_note,
    content_fingerprint,
    decode_note,
    folder_refusal,
    skipped_name,
    source_id,
)
from server.core.ports import ChatStore, IntakeStore, LibraryGraph, SettingsStore
from server.services.library.extraction import OFFLINE_MAX_TOKENS, ExtractionService
from server.services.library.feed import JobSpec

log = logging.getLogger("lh.library")
MAX_FOLDER_FILES = 100_000
"""Most notes files one folder import takes (a sanity ceiling far above a real vault; each file is
read, prepared and queued in pages of `PREPARE_PAGE`, so memory does not grow with it)."""
MAX_FOLDER_DIRS = 20_000
"""Most directories one folder import walks; a bigger tree is refused (choose a smaller folder)."""
PREPARE_PAGE = 100
"""Files read and prepared per thread hop of a large import; the event loop starts their runs
between pages (so it answers other requests throughout)."""

IMPORT_ROOTS_ENV = "LH_IMPORT_ROOTS"
"""Folders notes may be imported from (os.pathsep-separated absolute paths); replaces the default,
the learner's home folder. `library.importRoots` in settings.json adds more."""


def import_roots(settings: SettingsStore, env: dict[str, str] | None = None) -> list[Path]:
    """The folders a folder import may read: `$LH_IMPORT_ROOTS`, else the home folder; plus the
    absolute paths listed under `library.importRoots` in settings.json. Each is resolved."""
    environ = os.environ if env is None else env
    raw = [p for p in environ.get(IMPORT_ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    roots = [Path(p).expanduser() for p in raw] if raw else [Path.home()]
    library = (settings.load().model_extra or {}).get("library")
    extra = library.get("importRoots") if isinstance(library, dict) else None
    if isinstance(extra, list):
        roots += [Path(p).expanduser() for p in extra if isinstance(p, str) and p.strip()]
    return [r.resolve() for r in roots if r.is_absolute()]


FlushTrigger = Literal["explicit", "leave", "idle", "queued"]


@dataclass
class FlushOutcome:
    """What a flush did: started (a run began), running (one is going; the rest follows it),
    deferred (a turn is running; it happens when the turn settles), covered (nothing uncovered),
    empty (no teacher prose yet), missing (no such lesson)."""

    status: Literal["started", "running", "deferred", "covered", "empty", "missing"]
    detail: str


@dataclass
class ImportResult:
    """One file's outcome: queued (its jobs started), unchanged (a true no-op), refused (why),
    removed (a folder re-import found it gone: its knowledge is retired).

    `replaces`: for a file given by its bare name (a single file picked in the browser) whose
    source already holds other content, the sentence saying this import replaces it ("replaces
    what the earlier notes.md said"): two unrelated files of one name are one source. Empty
    otherwise."""

    name: str
    source: str | None
    status: str
    detail: str = ""
    chunks: int = 0
    replaces: str = ""

    def view(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sourceId": self.source,
            "status": self.status,
            "detail": self.detail,
            "chunks": self.chunks,
            "replaces": self.replaces,
        }


@dataclass
class ImportOutcome:
    """What one import request did (`POST /api/graph/import`'s 202, or its 400 when nothing was
    imported): the import it belongs to (its summary row in the feed) and each file's result,
    in order (a folder's refused entries first, its removed files last)."""

    import_id: str
    results: list[ImportResult]

    def refusal(self) -> str | None:
        """The 400's detail when every file was refused (the first five reasons), else None."""
        if self.results and all(r.status == "refused" for r in self.results):
            return "nothing was imported: " + "; ".join(r.detail for r in self.results[:5])
        return None


@dataclass
class FolderWalk:
    """What a folder walk found: the notes files to read (in walk order) and the entries refused
    without reading (a linked folder, an unreadable folder)."""

    root: Path
    paths: list[Path]
    refused: list[ImportResult]


@dataclass
class _Plan:
    """A prepared file whose run is to start (made off the event loop, started on it)."""

    name: str
    src: str
    title: str
    fingerprint: str
    jobs: list[JobSpec]
    version: dict[str, str]
    chunks: int
    detail: str
    replaces: str
    key: str = ""
    """Its accepted-queue entry (`IntakeEntry.key`), settled when its run ends; "" when none."""


Loader = Callable[[], bytes]
"""Reads one file's bytes when its page is prepared (raises NoteRefused)."""


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
        None: nothing survives a crash (unit tests).
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
        chats: ChatStore | None = None,
        turn_running: Callable[[str], bool] = lambda _chat_id: False,
        idle_delay_s: float | None = None,
        wall_clock: Callable[[], float] = time.time,
        context_window: Callable[[], tuple[int, float] | None] = lambda: None,
        intake: IntakeStore | None = None,
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

    # -- the notes front door -------------------------------------------------------------------
    def import_files(
        self, files: list[tuple[str, bytes]], import_id: str | None = None
    ) -> list[ImportResult]:
        """Import notes files given as (path or name, bytes), all at once on the calling thread
        (small imports and tests; `import_many` is the paged, off-loop form). Each file is a
        source with an id from its path; refused files write nothing; an unchanged file is a
        no-op (no model call)."""
        budget = self.budget()
        sources = self.graph.sources()
        prepared = self._admit([self._prepare(name, _given(data), budget, sources) for name, data in files])
        self._accept(prepared, import_id)
        return [self._launch(item, import_id) for item in prepared]

    async def import_many(
        self, items: list[tuple[str, Loader]], import_id: str | None = None
    ) -> list[ImportResult]:
        """Import any number of notes files: pages of `PREPARE_PAGE` files are read, prepared,
        chunked and recorded in a worker thread (a page's bytes are dropped once prepared: its
        chunks' text is kept), the event loop answering other requests between pages; then every
        run to start is written to the accepted queue with one fsynced write (in a worker thread),
        and only then queued, so the answer that follows is durable (issue 26). Returns one result
        per item, in order. `import_id`: the import whose summary row counts them (`begin_import`).

        Raises:
            OSError: the accepted queue could not be written: no run was started.
        """
        budget = self.budget()
        sources = await asyncio.to_thread(self.graph.sources)
        prepared: list[ImportResult | _Plan] = []
        for start in range(0, len(items), PREPARE_PAGE):
            page = items[start : start + PREPARE_PAGE]
            prepared += await asyncio.to_thread(self._prepare_page, page, budget, sources)
            await asyncio.sleep(0)
        prepared = self._admit(prepared)
        if self.intake is not None:  # the entries are made in the thread too (~20 ms per 1,200)
            label = self.extraction.import_label(import_id) if import_id is not None else None
            await asyncio.to_thread(self._accept, prepared, import_id, label)
        # no run of these sources started meanwhile: only this request's own awaits were between
        return [self._launch(item, import_id, recorded=True) for item in prepared]

    def _admit(self, prepared: list[ImportResult | _Plan]) -> list[ImportResult | _Plan]:
        """The plans whose runs start: a source already running, or named again later in the
        same batch (two files of one name), gets its `running` result instead."""
        seen: set[str] = set()
        out: list[ImportResult | _Plan] = []
        for item in prepared:
            if isinstance(item, _Plan) and (item.src in seen or self.extraction.running(item.src)):
                item = ImportResult(
                    item.name, item.src, "running", "an import of this file is already running"
                )
            elif isinstance(item, _Plan):
                seen.add(item.src)
            out.append(item)
        return out

    def _entries(
        self, prepared: list[ImportResult | _Plan], import_id: str | None, label: str | None
    ) -> list[IntakeEntry]:
        """The accepted-queue entries of the plans in `prepared` (each plan gets its key)."""
        at = self.clock()
        entries = []
        for item in prepared:
            if not isinstance(item, _Plan):
                continue
            item.key = self.new_id("ik_")
            entries.append(
                IntakeEntry(
                    key=item.key,
                    kind="notes",
                    source=item.src,
                    label=label or "",
                    import_id=import_id,
                    title=item.title,
                    path=item.name,
                    fingerprint=item.fingerprint,
                    version=item.version,
                    jobs=[IntakeJob(text=j.text, coverage=j.coverage) for j in item.jobs],
                    at=at,
                )
            )
        return entries

    def _accept(
        self, prepared: list[ImportResult | _Plan], import_id: str | None, label: str | None = None
    ) -> None:
        """Write the plans' entries to the accepted queue (fsynced, on the calling thread: a
        worker thread for `import_many`). `label`: the import's, when not read here. Raises
        OSError: nothing was accepted."""
        if self.intake is None:
            return
        if label is None and import_id is not None:
            label = self.extraction.import_label(import_id)
        entries = self._entries(prepared, import_id, label)
        if entries:
            self.intake.accept(entries)

    def _settle(self, key: str) -> None:
        """An accepted entry's run ended: settle it, unless the server is stopping (a run a
        shutdown cancelled resumes at the next start)."""
        if self.intake is None or not key or self.extraction.stopping:
            return
        self.intake.settle([key])

    def _prepare_page(
        self, page: list[tuple[str, Loader]], budget: int, sources: dict[str, SourceLine]
    ) -> list[ImportResult | _Plan]:
        return [self._prepare(name, load, budget, sources, record=True) for name, load in page]

    def begin_import(self, label: str, import_id: str | None = None) -> str:
        """The import a request's files belong to: `import_id` when it is still known (the later
        pages of one pick in the browser), else a new one labelled `label`."""
        if import_id and self.extraction.import_known(import_id):
            return import_id
        return self.extraction.begin_import(label)

    def count(self, import_id: str | None, results: list[ImportResult]) -> None:
        """Count refused and removed files into the import's summary (queued and unchanged ones
        are counted as they start)."""
        if import_id is None:
            return
        for status in ("refused", "removed"):
            self.extraction.count_import(import_id, status, sum(r.status == status for r in results))
        self.extraction.note_refusals(import_id, {r.name: r.detail for r in results if r.status == "refused"})

    def _prepare(
        self,
        name: str,
        load: Loader,
        budget: int,
        sources: dict[str, SourceLine],
        *,
        record: bool = False,
    ) -> ImportResult | _Plan:
        """Read, decode, prepare and chunk one file (blocking). Returns its result when nothing is
        to run (refused, unchanged), else the plan of its run. `record`: write its source line
        here (off the loop) rather than when the run starts."""
        try:
            raw = decode_note(name, load())
            note = prepare_note(name, raw)
        except NoteRefused as exc:
            return ImportResult(name, None, "refused", str(exc))
        raw_fingerprint = content_fingerprint(raw)
        del raw
        text = note.prose  # what the model reads: the fingerprint ignores a drawing's or blob's edits
        fingerprint = content_fingerprint(text)
        src = source_id(name)
        known = sources.get(src)
        if known is not None and known.fingerprint in (fingerprint, raw_fingerprint):
            return ImportResult(name, src, "unchanged", "already imported with this content")
        if self.extraction.running(src):
            return ImportResult(name, src, "running", "an import of this file is already running")
        chunks = chunk_note(text, budget)
        covered = self.graph.covered(src) if known is not None else {}
        jobs = []
        version: dict[str, str] = {}  # the whole new content: it replaces the file's contribution
        for index, chunk in enumerate(chunks, start=1):
            key = f"{fingerprint[:16]}:{index}"
            chunk_fp = content_fingerprint(chunk.text)
            version[key] = chunk_fp
            if chunk_fp in covered.get(key, set()):
                continue  # merged by an earlier, partly failed import of the same content
            jobs.append(JobSpec(text=chunk.text, coverage=[(key, chunk_fp)]))
        title = Path(name).name
        replaces = ""
        if known is not None and _bare(name) and (known.fingerprint or self.graph.contributors(src)):
            replaces = f"replaces what the earlier {title} said"
        if record:
            self.graph.record_source(
                SourceLine(id=src, kind="notes", title=title, path=name, at=self.clock())
            )
        skipped = f"{name}: skipped {', '.join(note.dropped)}; its prose is imported" if note.dropped else ""
        return _Plan(name, src, title, fingerprint, jobs, version, len(chunks), skipped, replaces)

    def _launch(
        self, item: ImportResult | _Plan, import_id: str | None, *, recorded: bool = False
    ) -> ImportResult:
        """Queue a prepared file's run (on the event loop); a result passes through (counted)."""
        if isinstance(item, ImportResult):
            if import_id is not None and item.status in ("unchanged", "running"):
                self.extraction.count_import(import_id, item.status)
            return item
        src, title, name, fingerprint = item.src, item.title, item.name, item.fingerprint
        if self.extraction.running(src):  # started by another request while this one was written
            self._settle(item.key)  # not answered as queued: nothing of it is owed
            return ImportResult(name, src, "running", "an import of this file is already running")
        if not recorded:
            self.graph.record_source(
                SourceLine(id=src, kind="notes", title=title, path=name, at=self.clock())
            )

        key = item.key

        def complete(all_merged: bool) -> None:
            if all_merged:
                self.graph.record_source(
                    SourceLine(
                        id=src, kind="notes", title=title, path=name, fingerprint=fingerprint, at=self.clock()
                    )
                )
            self._settle(key)

        self.extraction.start(
            src,
            "notes",
            title,
            item.jobs,
            on_complete=complete,
            version=item.version,
            import_id=import_id,
        )
        if not item.jobs:  # merged by earlier runs: only the replacement and the stamp are left
            if import_id is not None:
                self.extraction.count_import(import_id, "unchanged")
            return ImportResult(
                name, src, "unchanged", "every chunk was already merged", item.chunks, item.replaces
            )
        return ImportResult(name, src, "queued", item.detail, item.chunks, item.replaces)

    def collect_folder(self, folder: str) -> FolderWalk:
        """Walk the folder the learner chose (blocking: call it off the event loop). Returns the
        notes files to read, and a refused result for each entry refused unread (a linked
        folder, a folder that cannot be listed). Reading happens later, page by page
        (`folder_items`), so a vault's bytes are never all in memory.

        The folder must be an absolute path inside the import roots (`import_roots`) and not a
        system folder; hidden and system directories are skipped, links are never followed out
        of the folder, a linked directory is not entered (and is listed as refused).

        Raises:
            FolderRefused: not an absolute folder (invalid), outside the roots or a system folder
                (forbidden), unreadable (forbidden), too big (over `MAX_FOLDER_FILES` notes files
                or `MAX_FOLDER_DIRS` folders) or holding no notes (invalid).
        """
        given = Path(folder).expanduser()
        if not given.is_absolute():
            raise FolderRefused(
                "invalid", "refused", f"{folder}: not an absolute path; give an absolute folder path"
            )
        try:
            root = given.resolve(strict=True)
        except (OSError, RuntimeError, ValueError) as exc:
            raise FolderRefused(
                "invalid",
                "refused",
                f"{folder}: not a folder on this computer ({_reason(exc)}); check the path",
            ) from exc
        reason = folder_refusal(root, import_roots(self.settings))
        if reason is not None:
            raise FolderRefused("forbidden", "folder_not_allowed", reason)
        if not root.is_dir():
            raise FolderRefused(
                "invalid", "refused", f"{folder}: not a folder; give the folder that holds your notes"
            )
        try:
            with os.scandir(root):
                pass
        except OSError as exc:
            raise FolderRefused(
                "forbidden",
                "folder_unreadable",
                f"{folder}: cannot be read ({_reason(exc)}); check its permissions",
            ) from exc
        walk = self._walk(root, folder)
        if not walk.paths and not walk.refused:
            raise FolderRefused("invalid", "refused", f"{folder}: holds no .md, .markdown or .txt files")
        return walk

    @staticmethod
    def folder_items(walk: FolderWalk) -> list[tuple[str, Loader]]:
        """The walk's files as (absolute path, loader) for `import_many`: each is read (links out
        of the folder, non-regular and unreadable files refused) when its page is prepared."""
        root = walk.root
        return [(str(path), functools.partial(_read_inside, path, root)) for path in walk.paths]

    def retire_missing(self, folder: str, present: list[str]) -> list[ImportResult]:
        """After a folder import: every notes source imported from inside `folder` (by its
        absolute path) whose file the walk found no more (deleted, renamed or moved away) has its
        contribution retired (a run with no jobs: no model call; docs/decisions/0010-...), and
        its fingerprint is cleared, so the file coming back is read again. A file the walk found
        but refused (unreadable now) is in `present` and keeps its knowledge.

        Args:
            folder: the folder as the learner gave it (resolved here like `collect_folder`).
            present: the paths the walk found, read or refused.

        Returns:
            One `removed` result per retired source (its path as first imported)."""
        root = Path(folder).expanduser().resolve()
        seen = set(present)
        gone: list[SourceLine] = []
        for src, line in self.graph.sources().items():
            if line.kind != "notes" or not line.path or line.path in seen:
                continue
            path = Path(line.path)
            if not path.is_absolute() or not path.is_relative_to(root) or not self.graph.contributors(src):
                continue
            if self.extraction.running(src):
                continue  # its run ends first; the next folder import retires it
            gone.append(line)
        entries = [
            IntakeEntry(
                key=self.new_id("ik_"),
                kind="retire",
                source=line.id,
                title=line.title,
                path=line.path,
                version={},
                at=self.clock(),
            )
            for line in gone
        ]
        if entries and self.intake is not None:
            self.intake.accept(entries)  # rare (files went away): fsynced on the calling thread
        results = []
        for line, entry in zip(gone, entries, strict=True):
            self._retire(line, entry.key)
            detail = f"{line.path}: no longer in the folder; what it said is taken out of your graph"
            results.append(ImportResult(line.path or line.id, line.id, "removed", detail))
        return results

    def _retire(self, line: SourceLine, key: str) -> bool:
        """Start the run that retires a gone file's contribution (no jobs, no model call); its
        accepted entry `key` settles when it ends. Returns whether it started."""
        src = line.id
        self.graph.record_source(
            SourceLine(id=src, kind="notes", title=line.title, path=line.path, at=self.clock())
        )
        started = self.extraction.start(
            src, "notes", line.title, [], version={}, on_complete=lambda _merged: self._settle(key)
        )
        if not started:
            self._settle(key)
        return started

    def _walk(self, root: Path, folder: str) -> FolderWalk:
        paths: list[Path] = []
        refused: list[ImportResult] = []
        dirs = 0

        def unlisted(exc: OSError) -> None:
            where = exc.filename or folder
            refused.append(
                ImportResult(
                    str(where),
                    None,
                    "refused",
                    f"{where}: a folder that cannot be read ({_reason(exc)}); its notes are not imported",
                )
            )

        for dirpath, dirnames, filenames in os.walk(root, onerror=unlisted, followlinks=False):
            dirs += 1
            if dirs > MAX_FOLDER_DIRS:
                raise FolderRefused(
                    "invalid",
                    "refused",
                    f"{folder}: more than {MAX_FOLDER_DIRS:,} folders; choose a smaller folder",
                )
            kept = []
            for d in sorted(dirnames):
                if skipped_name(d):
                    continue
                if os.path.islink(os.path.join(dirpath, d)):
                    link = os.path.join(dirpath, d)
                    refused.append(
                        ImportResult(
                            link,
                            None,
                            "refused",
                            f"{link}: a link to a folder; links to folders are not followed",
                        )
                    )
                    continue
                kept.append(d)
            dirnames[:] = kept
            for name in sorted(filenames):
                if skipped_name(name) or not name.lower().endswith(NOTE_SUFFIXES):
                    continue
                if len(paths) >= MAX_FOLDER_FILES:
                    raise FolderRefused(
                        "invalid",
                        "refused",
                        f"{folder}: more than {MAX_FOLDER_FILES:,} notes files; choose a smaller folder",
                    )
                paths.append(Path(dirpath) / name)
        return FolderWalk(root, paths, refused)

    async def import_picked(
        self, files: list[tuple[str, bytes]], import_id: str | None = None
    ) -> ImportOutcome:
        """The learner's picked files (name or relative path, bytes as uploaded) imported as one
        import: the one named `import_id` when it is still known (a later page of one pick), else
        a new one labelled "Notes you picked" (`import_many`; refused files counted in its
        summary).

        Raises:
            OSError: the accepted queue could not be written: no run was started.
        """
        import_id = self.begin_import("Notes you picked", import_id)
        results = await self.import_many([(name, _given(data)) for name, data in files], import_id)
        self.count(import_id, results)
        return ImportOutcome(import_id, results)

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
        budget = self.budget()
        sources = self.graph.sources()
        prepared = self._admit(
            [self._prepare(name, load, budget, sources) for name, load in self.folder_items(walk)]
        )
        self._accept(prepared, None)
        results = walk.refused + [self._launch(item, None) for item in prepared]
        return results + self.retire_missing(folder, [r.name for r in results])

    # -- the lesson trigger seam ----------------------------------------------------------------
    # Four triggers, one seam (seed §6: "session end, idle, explicit flush"): a settled turn whose
    # uncovered teacher prose reaches the budget; the lesson going idle (no turn for
    # `graph.lessonIdleSeconds`); the learner leaving it; the learner's "Add to my graph now".
    # The last three extract whatever is uncovered, even below the budget. Single-flight per
    # lesson: a flush asked for while a turn or a run is going happens when it ends.

    def idle_delay(self) -> float:
        """Seconds without a settled turn before a lesson's uncovered prose is extracted."""
        if self.idle_delay_s is not None:
            return self.idle_delay_s
        return self.settings.load().graph.lesson_idle_seconds

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
        record = self.chats.get(chat_id) if self.chats is not None else None
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
        record = self.chats.get(chat_id) if self.chats is not None else None
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
        if self.chats is None:
            return 0
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
        if self.intake is None or chat_id in self._lesson_keys:
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
        self._settle(key)

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

    def resume_accepted(self) -> dict[str, int]:
        """At start, before any request: every accepted-queue entry a crash left open starts
        again. A notes file's run re-runs only its jobs whose (key, fingerprint) coverage pairs
        are not in the graph (those merged before the crash, and a file whose fingerprint is
        stamped settles at once), in an import summary row labelled "(resumed after a restart)"
        under the import's own id; a retirement runs again (it retires what is left); a lesson is
        flushed at once (its coverage says what is left). Of several entries of one source only
        the newest runs. Returns the counts started by kind ({"notes", "retire", "lesson",
        "settled"}: the last found nothing left to do).

        Raises:
            OSError: the accepted queue could not be read or rewritten (nothing started)."""
        counts = dict.fromkeys(("notes", "retire", "lesson", "settled"), 0)
        if self.intake is None:
            return counts
        entries = self.intake.compact()
        newest = {e.source: e.key for e in entries}
        stale = [e.key for e in entries if newest[e.source] != e.key]
        if stale:
            self.intake.settle(stale)
            counts["settled"] += len(stale)
        sources = self.graph.sources()
        for entry in entries:
            if newest[entry.source] != entry.key:
                continue
            if entry.kind == "lesson":
                self._lesson_keys[entry.source] = entry.key
                if entry.label:
                    self._titles.setdefault(entry.source, entry.label)
                outcome = self.flush(entry.source, "queued")
                counts["lesson" if outcome.status in ("started", "running", "deferred") else "settled"] += 1
                continue
            line = sources.get(entry.source)
            if entry.kind == "retire":
                gone = SourceLine(
                    id=entry.source, kind="notes", title=entry.title or entry.source, path=entry.path, at=""
                )
                counts["retire" if self._retire(gone, entry.key) else "settled"] += 1
                continue
            if self._resume_note(entry, line):
                counts["notes"] += 1
            else:
                counts["settled"] += 1
        return counts

    def _resume_note(self, entry: IntakeEntry, line: SourceLine | None) -> bool:
        """Start an open notes entry's run again (see `resume_accepted`); False when it was
        complete already (settled now)."""
        covered = self.graph.covered(entry.source)
        jobs = [
            JobSpec(text=job.text, coverage=list(job.coverage))
            for job in entry.jobs
            if not all(fp in covered.get(key, ()) for key, fp in job.coverage)
        ]
        import_id = entry.import_id
        if import_id is not None and not self.extraction.import_known(import_id):
            label = entry.label or "Notes import"
            self.extraction.begin_import(f"{label} (resumed after a restart)", import_id=import_id)
        if not jobs and line is not None and line.fingerprint == entry.fingerprint:
            self._settle(entry.key)  # merged and stamped before the crash: nothing to do
            if import_id is not None:
                self.extraction.count_import(import_id, "unchanged")
            return False
        title = entry.title or Path(entry.path or entry.source).name
        plan = _Plan(
            entry.path or title,
            entry.source,
            title,
            entry.fingerprint or "",
            jobs,
            dict(entry.version or {}),
            len(entry.jobs),
            "",
            "",
            key=entry.key,
        )
        result = self._launch(plan, import_id, recorded=line is not None)
        log.debug(
            "resumed %s after a restart: %s (%d of %d parts)",
            title,
            result.status,
            len(jobs),
            len(entry.jobs),
        )
        return True

    def _flush_queued(self, chat_id: str) -> None:
        if chat_id not in self._flush_after:
            return
        try:
            self.flush(chat_id, "queued")
        except Exception:
            log.exception("the queued flush of lesson %s failed", chat_id)

    # -- the Library's settings -------------------------------------------------------------------
    def settings_view(self) -> dict[str, Any]:
        """`{"extractionChunkTokens", "lessonIdleSeconds", "graphTools"}` as they apply now
        (`GET /api/library/settings`)."""
        settings = self.settings.load()
        return {
            "extractionChunkTokens": settings.graph.extraction_chunk_tokens,
            "lessonIdleSeconds": settings.graph.lesson_idle_seconds,
            "graphTools": settings.agent.graph_tools,
        }

    def update_settings(
        self,
        *,
        extraction_chunk_tokens: int | None = None,
        lesson_idle_seconds: float | None = None,
        graph_tools: bool | None = None,
    ) -> dict[str, Any]:
        """Change the given Library settings (`graph.extractionChunkTokens`,
        `graph.lessonIdleSeconds`, `agent.graphTools`; None keeps one), keep every other setting,
        and answer them as they now apply (`settings_view`)."""
        settings = self.settings.load()
        if extraction_chunk_tokens is not None:
            settings.graph.extraction_chunk_tokens = extraction_chunk_tokens
        if lesson_idle_seconds is not None:
            settings.graph.lesson_idle_seconds = lesson_idle_seconds
        if graph_tools is not None:
            settings.agent.graph_tools = graph_tools
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


def _bare(name: str) -> bool:
    """A file named without any folder (a single file picked in the browser)."""
    return "/" not in name and "\\" not in name


def _given(data: bytes) -> Loader:
    return lambda: data


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__


def _read_inside(path: Path, root: Path) -> bytes:
    """A notes file's bytes (at most 2 MB + 1, so an oversized file is refused unread).

    Raises:
        NoteRefused: a link leading out of `root`, not a regular file, or unreadable.
    """
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as exc:
        raise NoteRefused(f"{path}: a broken link or unreadable ({_reason(exc)}); not imported") from exc
    if not target.is_relative_to(root):
        raise NoteRefused(
            f"{path}: a link to {target}, outside the chosen folder; links out are not followed"
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise NoteRefused(f"{path}: cannot be read ({_reason(exc)}); check its permissions") from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise NoteRefused(f"{path}: not a regular file; only notes files are imported")
        try:
            return handle.read(MAX_NOTE_BYTES + 1)
        except OSError as exc:
            raise NoteRefused(f"{path}: cannot be read ({_reason(exc)}); check its permissions") from exc
