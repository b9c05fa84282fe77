"""The Library's front doors and reads (seed §6): the notes import, the lesson trigger seam, and
the read-only views the teacher's graph tools and the UI use."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.core.contracts.chat import ChatRecord
from server.core.contracts.graph import SourceLine
from server.core.coverage import batch_uncovered, message_views, uncovered
from server.core.notes import (
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
from server.core.ports import GraphStore, SettingsStore
from server.services.chats import utc_now
from server.services.extraction import ExtractionService, JobSpec

log = logging.getLogger("lh.library")
MAX_FOLDER_FILES = 500
MAX_FOLDER_DIRS = 5_000
"""Most directories one folder import walks; a bigger tree is refused (choose a smaller folder)."""

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

    def collect_folder(self, folder: str) -> tuple[list[tuple[str, bytes]], list[ImportResult]]:
        """Read the notes files of a folder the learner chose: blocking file I/O, so call it off
        the event loop. Returns (path, bytes) of each readable notes file, and a refused result
        for each one that could not be read (a link out of the folder, not a regular file,
        permission denied).

        The folder must be an absolute path inside the import roots (`import_roots`) and not a
        system folder; hidden and system directories are skipped, links are never followed out
        of the folder, a linked directory is not entered.

        Raises:
            FolderRefused: not an absolute folder (400), outside the roots or a system folder
                (403), unreadable (403), too big or holding no notes (400).
        """
        given = Path(folder).expanduser()
        if not given.is_absolute():
            raise FolderRefused(
                400, "refused", f"{folder}: not an absolute path; give an absolute folder path"
            )
        try:
            root = given.resolve(strict=True)
        except (OSError, RuntimeError, ValueError) as exc:
            raise FolderRefused(
                400, "refused", f"{folder}: not a folder on this computer ({_reason(exc)}); check the path"
            ) from exc
        reason = folder_refusal(root, import_roots(self.settings))
        if reason is not None:
            raise FolderRefused(403, "folder_not_allowed", reason)
        if not root.is_dir():
            raise FolderRefused(
                400, "refused", f"{folder}: not a folder; give the folder that holds your notes"
            )
        try:
            with os.scandir(root):
                pass
        except OSError as exc:
            raise FolderRefused(
                403, "folder_unreadable", f"{folder}: cannot be read ({_reason(exc)}); check its permissions"
            ) from exc
        files, refused = self._walk(root, folder)
        if not files and not refused:
            raise FolderRefused(400, "refused", f"{folder}: holds no .md, .markdown or .txt files")
        return files, refused

    def _walk(self, root: Path, folder: str) -> tuple[list[tuple[str, bytes]], list[ImportResult]]:
        files: list[tuple[str, bytes]] = []
        refused: list[ImportResult] = []
        dirs = 0
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirs += 1
            if dirs > MAX_FOLDER_DIRS:
                raise FolderRefused(
                    400,
                    "refused",
                    f"{folder}: more than {MAX_FOLDER_DIRS:,} folders; choose a smaller folder",
                )
            dirnames[:] = sorted(d for d in dirnames if not skipped_name(d))
            for name in sorted(filenames):
                if skipped_name(name) or not name.lower().endswith(NOTE_SUFFIXES):
                    continue
                if len(files) + len(refused) >= MAX_FOLDER_FILES:
                    raise FolderRefused(
                        400,
                        "refused",
                        f"{folder}: more than {MAX_FOLDER_FILES} notes files; import at most "
                        f"{MAX_FOLDER_FILES} at once",
                    )
                path = Path(dirpath) / name
                try:
                    files.append((str(path), _read_inside(path, root)))
                except NoteRefused as exc:
                    refused.append(ImportResult(str(path), None, "refused", str(exc)))
        return files, refused

    def import_folder(self, folder: str) -> list[ImportResult]:
        """`collect_folder` then `import_files` (blocking; the API runs the walk in a thread).

        Raises:
            FolderRefused: see `collect_folder`.
        """
        files, refused = self.collect_folder(folder)
        return refused + self.import_files(files)

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
