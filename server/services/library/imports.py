"""The notes front door's per-file work (seed §6, notes import): each file read, decoded,
prepared and chunked into the plan of its run (`Plan`; off the event loop, in pages), the plans
written to the accepted queue before any run starts (issue 26), then launched; a single file whose
name matches a note with other content asked about (`NameChoice`, issue 28 item 5); and the
retirement of notes gone from a folder is `retirements.py`'s. `ImportResult` and `ImportOutcome`
are what an import answers. Slightly past 400 lines: one use case, a file's way from bytes to an
accepted run, whose steps share the import's tally, the source lines read and the queue's write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from server.core.clock import Clock, NewId
from server.core.contracts.graph import SourceLine
from server.core.contracts.intake import IntakeEntry, IntakeJob
from server.core.library.note_text import prepare_note
from server.core.library.notes import NoteRefused, chunk_note, content_fingerprint, decode_note, source_id
from server.core.ports import IntakeStore, LibraryGraph
from server.services.library.extraction import ExtractionService
from server.services.library.feed import JobSpec
from server.services.library.import_result import ImportResult
from server.services.library.retirements import Retirements

__all__ = ["ImportOutcome", "ImportResult", "Loader", "NameChoice", "NotesImport", "Plan", "given"]

PREPARE_PAGE = 100
"""Files read and prepared per thread hop of a large import; the event loop starts their runs
between pages (so it answers other requests throughout)."""

Loader = Callable[[], bytes]
"""Reads one file's bytes when its page is prepared (raises NoteRefused)."""


@dataclass(frozen=True)
class NameChoice:
    """The learner's answer for a single picked file whose name matches a note in the graph
    with other content: `replace` that note (`source`, one of the result's `same_name`), or
    import it as a `new` note (its own source, titled "notes.md (2)" and so on)."""

    choice: Literal["replace", "new"]
    source: str | None = None


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
class Plan:
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


class NotesImport:
    """The notes files' imports: prepare, accept, launch, count, retire.

    Args:
        graph: the ledgers (source lines are recorded here; merges go through `extraction`).
        extraction: the job runner (runs, and the imports' summary rows).
        intake: the accepted queue.
        clock: ISO timestamp source (`server.core.clock`).
        new_id: mints accepted-queue keys (`ik_` + 16 hex digits).
        budget: the chunk budget now (estimated tokens; `LibraryService.budget`).
    """

    def __init__(
        self,
        graph: LibraryGraph,
        extraction: ExtractionService,
        intake: IntakeStore,
        clock: Clock,
        new_id: NewId,
        budget: Callable[[], int],
    ) -> None:
        self.graph = graph
        self.extraction = extraction
        self.intake = intake
        self.clock = clock
        self.new_id = new_id
        self.budget = budget
        self.retirements = Retirements(graph, extraction, intake, clock, new_id, self.settle)
        """Notes gone from a folder, retired (`retirements.py`)."""

    def import_files(
        self,
        files: list[tuple[str, bytes]],
        import_id: str | None = None,
        choices: Mapping[str, NameChoice] | None = None,
    ) -> list[ImportResult]:
        """Import notes files given as (path or name, bytes), all at once on the calling thread
        (small imports and tests; `import_many` is the paged, off-loop form). Each file is a
        source with an id from its path; refused files write nothing; an unchanged file is a
        no-op (no model call); a single file whose name matches a note with other content is
        answered `ask` unless `choices` answers it (`NameChoice`)."""
        return self.import_loaded([(name, given(data)) for name, data in files], import_id, choices)

    def import_loaded(
        self,
        items: list[tuple[str, Loader]],
        import_id: str | None = None,
        choices: Mapping[str, NameChoice] | None = None,
    ) -> list[ImportResult]:
        """`import_files` for files read by their loaders (a folder's, `folders.folder_items`),
        all at once on the calling thread. Raises OSError: the accepted queue could not be
        written (no run was started)."""
        budget = self.budget()
        sources = self.graph.sources()
        prepared = self._admit(
            [self._prepare(name, load, budget, sources, choices=choices) for name, load in items]
        )
        self._accept(prepared, import_id)
        return [self.launch(item, import_id) for item in prepared]

    async def import_many(
        self,
        items: list[tuple[str, Loader]],
        import_id: str | None = None,
        choices: Mapping[str, NameChoice] | None = None,
    ) -> list[ImportResult]:
        """Import any number of notes files: pages of `PREPARE_PAGE` files are read, prepared,
        chunked and recorded in a worker thread (a page's bytes are dropped once prepared: its
        chunks' text is kept), the event loop answering other requests between pages; then every
        run to start is written to the accepted queue with one fsynced write (in a worker thread),
        and only then queued, so the answer that follows is durable (issue 26). Returns one result
        per item, in order. `import_id`: the import whose summary row counts them (`begin_import`).
        `choices`: the learner's answers for single files of a known name (`NameChoice`).

        Raises:
            OSError: the accepted queue could not be written: no run was started.
        """
        budget = self.budget()
        sources = await asyncio.to_thread(self.graph.sources)
        prepared: list[ImportResult | Plan] = []
        for start in range(0, len(items), PREPARE_PAGE):
            page = items[start : start + PREPARE_PAGE]
            prepared += await asyncio.to_thread(self._prepare_page, page, budget, sources, choices)
            await asyncio.sleep(0)
        prepared = self._admit(prepared)
        # the entries are made in the thread too (~20 ms per 1,200)
        label = self.extraction.import_label(import_id) if import_id is not None else None
        await asyncio.to_thread(self._accept, prepared, import_id, label)
        # no run of these sources started meanwhile: only this request's own awaits were between
        return [self.launch(item, import_id, recorded=True) for item in prepared]

    def _admit(self, prepared: list[ImportResult | Plan]) -> list[ImportResult | Plan]:
        """The plans whose runs start: a source already running, or named again later in the
        same batch (two files of one name), gets its `running` result instead."""
        seen: set[str] = set()
        out: list[ImportResult | Plan] = []
        for item in prepared:
            if isinstance(item, Plan) and (item.src in seen or self.extraction.running(item.src)):
                item = ImportResult(
                    item.name, item.src, "running", "an import of this file is already running"
                )
            elif isinstance(item, Plan):
                seen.add(item.src)
            out.append(item)
        return out

    def _entries(
        self, prepared: list[ImportResult | Plan], import_id: str | None, label: str | None
    ) -> list[IntakeEntry]:
        """The accepted-queue entries of the plans in `prepared` (each plan gets its key)."""
        at = self.clock()
        entries = []
        for item in prepared:
            if not isinstance(item, Plan):
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
        self, prepared: list[ImportResult | Plan], import_id: str | None, label: str | None = None
    ) -> None:
        """Write the plans' entries to the accepted queue (fsynced, on the calling thread: a
        worker thread for `import_many`). `label`: the import's, when not read here. Raises
        OSError: nothing was accepted."""
        if label is None and import_id is not None:
            label = self.extraction.import_label(import_id)
        entries = self._entries(prepared, import_id, label)
        if entries:
            self.intake.accept(entries)

    def settle(self, key: str) -> None:
        """An accepted entry's run ended: settle it, unless the server is stopping (a run a
        shutdown cancelled resumes at the next start)."""
        if not key or self.extraction.stopping:
            return
        self.intake.settle([key])

    def _prepare_page(
        self,
        page: list[tuple[str, Loader]],
        budget: int,
        sources: dict[str, SourceLine],
        choices: Mapping[str, NameChoice] | None,
    ) -> list[ImportResult | Plan]:
        return [
            self._prepare(name, load, budget, sources, record=True, choices=choices) for name, load in page
        ]

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
        choices: Mapping[str, NameChoice] | None = None,
    ) -> ImportResult | Plan:
        """Read, decode, prepare and chunk one file (blocking). Returns its result when nothing is
        to run (refused, unchanged, ask), else the plan of its run. `record`: write its source
        line here (off the loop) rather than when the run starts. `choices`: the learner's
        answers for single files of a known name (`NameChoice`, by file name); a single file
        whose name matches a note with other content and has no valid answer is answered `ask`."""
        try:
            raw = decode_note(name, load())
            note = prepare_note(name, raw)
        except NoteRefused as exc:
            return ImportResult(name, None, "refused", str(exc))
        raw_fingerprint = content_fingerprint(raw)
        del raw
        text = note.prose  # what the model reads: the fingerprint ignores a drawing's or blob's edits
        fingerprint = content_fingerprint(text)
        title = Path(name).name
        replaces = ""
        if _bare(name):
            target = self._same_name(name, (fingerprint, raw_fingerprint), sources, choices or {})
            if isinstance(target, ImportResult):
                return target
            src, title, replaces = target
        else:
            src = source_id(name)
        known = sources.get(src)
        if known is not None and known.fingerprint in (fingerprint, raw_fingerprint):
            return ImportResult(name, src, "unchanged", "already imported with this content")
        if self.extraction.running(src):
            return ImportResult(name, src, "running", "an import of this file is already running")
        chunks = chunk_note(text, budget)
        covered = self.graph.covered(src) if known is not None else {}
        if not _bare(name) and known is not None and (known.fingerprint or self.graph.contributors(src)):
            replaces = f"replaces what the earlier version of {title} said"
        jobs = []
        version: dict[str, str] = {}  # the whole new content: it replaces the file's contribution
        for index, chunk in enumerate(chunks, start=1):
            key = f"{fingerprint[:16]}:{index}"
            chunk_fp = content_fingerprint(chunk.text)
            version[key] = chunk_fp
            if chunk_fp in covered.get(key, set()):
                continue  # merged by an earlier, partly failed import of the same content
            jobs.append(JobSpec(text=chunk.text, coverage=[(key, chunk_fp)]))
        if record:
            self.graph.record_source(
                SourceLine(id=src, kind="notes", title=title, path=name, at=self.clock())
            )
        skipped = f"{name}: skipped {', '.join(note.dropped)}; its prose is imported" if note.dropped else ""
        return Plan(name, src, title, fingerprint, jobs, version, len(chunks), skipped, replaces)

    def _same_name(
        self,
        name: str,
        fingerprints: tuple[str, str],
        sources: dict[str, SourceLine],
        choices: Mapping[str, NameChoice],
    ) -> ImportResult | tuple[str, str, str]:
        """Where a single file (a bare `name`) goes: (source id, title, replaces sentence), or
        its result when nothing is to run (`unchanged`: a note of that name holds this content;
        `ask`: notes of that name hold other content and `choices` has no valid answer).

        The notes of that name are the notes sources first imported under it (`path == name`),
        holding knowledge (a stamped fingerprint or a merged job). None: the file's own source
        (`source_id(name)`). A note partly merged from this very content is that note (a retry)."""
        same = [
            line
            for line in sources.values()
            if line.kind == "notes"
            and line.path == name
            and (line.fingerprint or self.graph.contributors(line.id))
        ]
        title = Path(name).name
        if not same:
            return source_id(name), title, ""
        for line in same:
            if line.fingerprint in fingerprints:
                return ImportResult(name, line.id, "unchanged", "already imported with this content")
        prefix = fingerprints[0][:16] + ":"
        for line in same:
            if any(key.startswith(prefix) for key in self.graph.covered(line.id)):
                return line.id, line.title, ""  # an earlier, partly failed import of this content
        choice = choices.get(name)
        if choice is not None and choice.choice == "new":
            n = 2
            while source_id(f"{name}#{n}") in sources:
                n += 1
            return source_id(f"{name}#{n}"), f"{title} ({n})", ""
        target = next((line for line in same if choice is not None and line.id == choice.source), None)
        if target is not None:
            return target.id, target.title, f"replaces what the earlier {target.title} said"
        which = "a note" if len(same) == 1 else f"{len(same)} notes"
        return ImportResult(
            name,
            None,
            "ask",
            f"{name}: {which} of this name {'is' if len(same) == 1 else 'are'} already in your graph "
            "with other content; nothing was imported: say whether this file replaces "
            f"{'it' if len(same) == 1 else 'one of them'} or is a new note",
            same_name=[same_name_view(line) for line in same],
        )

    def launch(
        self, item: ImportResult | Plan, import_id: str | None, *, recorded: bool = False
    ) -> ImportResult:
        """Queue a prepared file's run (on the event loop); a result passes through (counted)."""
        if isinstance(item, ImportResult):
            if import_id is not None and item.status in ("unchanged", "running"):
                self.extraction.count_import(import_id, item.status)
            return item
        src, title, name, fingerprint = item.src, item.title, item.name, item.fingerprint
        if self.extraction.running(src):  # started by another request while this one was written
            self.settle(item.key)  # not answered as queued: nothing of it is owed
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
            self.settle(key)

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

    def retire(self, line: SourceLine, key: str) -> bool:
        """`Retirements.retire`: start the run that retires a gone file's contribution (the
        accepted queue's resume calls it). Returns whether it started."""
        return self.retirements.retire(line, key)


def same_name_view(line: SourceLine) -> dict[str, str]:
    """A note an `ask` result could replace: `{"sourceId", "title", "at"}` (`at`: when its
    line was last written, ISO 8601)."""
    return {"sourceId": line.id, "title": line.title, "at": line.at}


def _bare(name: str) -> bool:
    """A file named without any folder (a single file picked in the browser)."""
    return "/" not in name and "\\" not in name


def given(data: bytes) -> Loader:
    """A loader of bytes already in memory (a picked file's upload)."""
    return lambda: data
