"""The retirement of notes gone from a folder (seed §6, notes import;
docs/decisions/0010-a-changed-source-replaces-its-contribution.md): a desktop folder import's
files found gone (`retire_missing`, at once), and in web mode the notes a folder picked again no
longer holds (`gone_from` lists them, changing nothing; `remove` takes out what they said on the
learner's one confirmation, issue 28 item 4). Each retirement is a run with no jobs (no model
call) whose accepted-queue entry is written first, so a crash resumes it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from server.core.clock import Clock, NewId
from server.core.contracts.graph import SourceKind, SourceLine
from server.core.contracts.intake import IntakeEntry
from server.core.ports import IntakeStore, LibraryGraph
from server.services.library.extraction import ExtractionService
from server.services.library.import_result import ImportResult


class Retirements:
    """Args:
    graph: the ledgers (source lines read and written here).
    extraction: the job runner (the retiring runs).
    intake: the accepted queue (a retirement's entry is written before its run starts).
    clock: ISO timestamp source (`server.core.clock`).
    new_id: mints accepted-queue keys (`ik_` + 16 hex digits).
    settle: settles an accepted entry when its run ends (`NotesImport.settle`).
    """

    def __init__(
        self,
        graph: LibraryGraph,
        extraction: ExtractionService,
        intake: IntakeStore,
        clock: Clock,
        new_id: NewId,
        settle: Callable[[str], None],
    ) -> None:
        self.graph = graph
        self.extraction = extraction
        self.intake = intake
        self.clock = clock
        self.new_id = new_id
        self.settle = settle

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
        return self._retire_all(gone, "no longer in the folder; what it said is taken out of your graph")

    def gone_from(self, folders: list[str], present: list[str]) -> list[SourceLine]:
        """The notes a folder picked in the browser held before and holds no more (web mode,
        issue 28 item 4): notes sources first imported under a relative path inside one of
        `folders` (the picked folders' names, as the upload names start: "vault/sub/a.md" is
        inside "vault") that are not in `present` (every notes file the pick found, sent or
        not) and still hold knowledge. A source whose run is going is left out (asked again at
        the next pick). Nothing is changed: `remove` takes them out once the learner confirms.

        Returns:
            Their source lines, in the order the sources first appeared."""
        prefixes = tuple(folder.strip("/") + "/" for folder in folders if folder.strip("/"))
        if not prefixes:
            return []
        seen = set(present)
        return [
            line
            for src, line in self.graph.sources().items()
            if line.kind == "notes"
            and line.path
            and line.path.startswith(prefixes)
            and line.path not in seen
            and not self.extraction.running(src)
            and self.graph.contributors(src)
        ]

    def remove(self, ids: list[str], kind: SourceKind = "notes") -> list[ImportResult]:
        """Take out what the given notes said, on the learner's confirmation (the notes
        `gone_from` listed): each one's contribution is retired (a run with no jobs, no model
        call; accepted-queue entries first, so a crash resumes it) and its fingerprint cleared,
        so the file coming back is read again.

        `kind` "chat": the ids are lessons whose chats the learner deleted and asked to take what
        they taught out too (issue 29); the same run retires a lesson's contribution.

        Returns:
            One result per distinct id, in order: `removed`; `refused` (not a source of this
            `kind` in the graph, e.g. a lesson when notes are asked for); `running` (an import or
            reading of it runs: it is left as it is); `unchanged` (nothing of it is left in the
            graph)."""
        sources = self.graph.sources()
        out: list[ImportResult | None] = []
        gone: list[SourceLine] = []
        for src in dict.fromkeys(ids):  # each once
            line = sources.get(src)
            what = "notes file" if kind == "notes" else "lesson"
            if line is None or line.kind != kind:
                out.append(
                    ImportResult(src, src, "refused", f"{src}: not a {what} in your graph; nothing removed")
                )
            elif self.extraction.running(src):
                busy = "an import of this file" if kind == "notes" else "reading this lesson into your graph"
                out.append(
                    ImportResult(line.path or src, src, "running", f"{busy} is running; nothing removed")
                )
            elif not self.graph.contributors(src):
                out.append(
                    ImportResult(line.path or src, src, "unchanged", "nothing it said is in your graph")
                )
            else:
                out.append(None)
                gone.append(line)
        removed = iter(
            self._retire_all(gone, "removed as you confirmed; what it said is taken out of your graph")
        )
        return [item if item is not None else next(removed) for item in out]

    def _retire_all(self, gone: list[SourceLine], why: str) -> list[ImportResult]:
        """Retire each gone note (`retire`), its accepted-queue entries written first (fsynced
        on the calling thread; removals are rare). Returns one `removed` result each, its
        detail "<path>: <why>"."""
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
        if entries:
            self.intake.accept(entries)
        results = []
        for line, entry in zip(gone, entries, strict=True):
            self.retire(line, entry.key)
            results.append(
                ImportResult(line.path or line.id, line.id, "removed", f"{line.path or line.title}: {why}")
            )
        return results

    def retire(self, line: SourceLine, key: str) -> bool:
        """Start the run that retires a gone file's (or a removed lesson's) contribution (no jobs,
        no model call); its accepted entry `key` settles when it ends. The source keeps the kind
        the graph knows it by (a resumed entry does not carry it). Returns whether it started."""
        src = line.id
        known = self.graph.sources().get(src)
        kind = known.kind if known is not None else line.kind
        self.graph.record_source(
            SourceLine(id=src, kind=kind, title=line.title, path=line.path, at=self.clock())
        )
        started = self.extraction.start(
            src, kind, line.title, [], version={}, on_complete=lambda _merged: self.settle(key)
        )
        if not started:
            self.settle(key)
        return started
