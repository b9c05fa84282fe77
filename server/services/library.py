"""The Library's front doors and reads (seed §6): the notes import, the lesson trigger seam, and
the read-only views the teacher's graph tools and the UI use."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.core.contracts.chat import ChatRecord
from server.core.contracts.graph import SourceLine
from server.core.coverage import batch_uncovered, message_views, uncovered
from server.core.notes import (
    NOTE_SUFFIXES,
    NoteRefused,
    chunk_note,
    content_fingerprint,
    decode_note,
    source_id,
)
from server.core.ports import GraphStore, SettingsStore
from server.services.chats import utc_now
from server.services.extraction import ExtractionService, JobSpec

log = logging.getLogger("lh.library")
MAX_FOLDER_FILES = 500


@dataclass
class ImportResult:
    """One file's outcome: queued (its jobs started), unchanged (a true no-op), refused (why)."""

    name: str
    source: str | None
    status: str
    detail: str = ""
    chunks: int = 0

    def view(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sourceId": self.source,
            "status": self.status,
            "detail": self.detail,
            "chunks": self.chunks,
        }


class LibraryService:
    """Args:
    graph: the ledgers (read here; written only through `extraction`).
    extraction: the job runner.
    settings: for `graph.extractionChunkTokens`.
    clock: ISO timestamp source.
    """

    def __init__(
        self,
        graph: GraphStore,
        extraction: ExtractionService,
        settings: SettingsStore,
        clock: Callable[[], str] = utc_now,
    ) -> None:
        self.graph = graph
        self.extraction = extraction
        self.settings = settings
        self.clock = clock

    def budget(self) -> int:
        return self.settings.load().graph.extraction_chunk_tokens

    # -- the notes front door -------------------------------------------------------------------
    def import_files(self, files: list[tuple[str, bytes]]) -> list[ImportResult]:
        """Import notes files given as (path or name, bytes). Each file is a source with an id from
        its path; refused files write nothing; an unchanged file is a no-op (no model call)."""
        budget = self.budget()
        sources = self.graph.sources()
        results = []
        for name, data in files:
            try:
                text = decode_note(name, data)
            except NoteRefused as exc:
                results.append(ImportResult(name, None, "refused", str(exc)))
                continue
            results.append(self._import_text(name, text, budget, sources))
        return results

    def import_folder(self, folder: str) -> list[ImportResult]:
        """Import every .md/.markdown/.txt file under a folder (the desktop case).

        Raises:
            NoteRefused: the path is not a readable folder, or holds no notes files.
        """
        root = Path(folder).expanduser()
        if not root.is_absolute() or not root.is_dir():
            raise NoteRefused(f"{folder}: not a folder on this computer; give an absolute folder path")
        paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in NOTE_SUFFIXES)
        if not paths:
            raise NoteRefused(f"{folder}: holds no .md, .markdown or .txt files")
        if len(paths) > MAX_FOLDER_FILES:
            raise NoteRefused(
                f"{folder}: {len(paths)} notes files; import at most {MAX_FOLDER_FILES} at once"
            )
        return self.import_files([(str(p), p.read_bytes()) for p in paths])

    def _import_text(self, name: str, text: str, budget: int, sources: dict[str, SourceLine]) -> ImportResult:
        src = source_id(name)
        fingerprint = content_fingerprint(text)
        known = sources.get(src)
        if known is not None and known.fingerprint == fingerprint:
            return ImportResult(name, src, "unchanged", "already imported with this content")
        if self.extraction.running(src):
            return ImportResult(name, src, "running", "an import of this file is already running")
        chunks = chunk_note(text, budget)
        covered = self.graph.covered(src)
        jobs = []
        for index, chunk in enumerate(chunks, start=1):
            key = f"{fingerprint[:16]}:{index}"
            chunk_fp = content_fingerprint(chunk.text)
            if chunk_fp in covered.get(key, set()):
                continue  # merged by an earlier, partly failed import of the same content
            jobs.append(JobSpec(text=chunk.text, coverage=[(key, chunk_fp)]))
        title = Path(name).name
        self.graph.record_source(SourceLine(id=src, kind="notes", title=title, path=name, at=self.clock()))

        def complete(all_merged: bool) -> None:
            if all_merged:
                self.graph.record_source(
                    SourceLine(
                        id=src, kind="notes", title=title, path=name, fingerprint=fingerprint, at=self.clock()
                    )
                )

        if not jobs:
            complete(True)
            return ImportResult(name, src, "unchanged", "every chunk was already merged", len(chunks))
        self.extraction.start(src, "notes", title, "notes", jobs, on_complete=complete)
        return ImportResult(name, src, "queued", "", len(chunks))

    # -- the lesson trigger seam ----------------------------------------------------------------
    def lesson_settled(self, record: ChatRecord) -> bool:
        """The trigger seam: when a lesson's uncovered teacher prose reaches the chunk budget,
        start its extraction (single-flight per lesson). Returns whether a run started."""
        budget = self.budget()
        views = uncovered(message_views(record.messages), self.graph.covered(record.id))
        if sum(v.tokens for v in views) < budget or self.extraction.running(record.id):
            return False
        if record.id not in self.graph.sources():
            self.graph.record_source(
                SourceLine(id=record.id, kind="chat", title=record.title, at=self.clock())
            )
        jobs = [
            JobSpec(
                text="\n\n".join(v.text for v in batch),
                coverage=[(v.message_id, v.fingerprint) for v in batch],
                messages=[v.message_id for v in batch],
            )
            for batch in batch_uncovered(views, budget)
        ]
        return self.extraction.start(record.id, "chat", record.title, "session", jobs)

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
