"""The accepted queue's resume at start (issue 26): every entry a crash left open runs again, only
what is left of it (a notes file's unmerged parts, a retirement, a lesson's uncovered prose)."""

from __future__ import annotations

import logging
from pathlib import Path

from server.core.contracts.graph import SourceLine
from server.core.contracts.intake import IntakeEntry
from server.core.ports import IntakeStore, LibraryGraph
from server.services.library.feed import JobSpec
from server.services.library.imports import NotesImport, Plan
from server.services.library.lessons import LessonTrigger

log = logging.getLogger("lh.library")


def resume_accepted(
    intake: IntakeStore, graph: LibraryGraph, notes: NotesImport, lessons: LessonTrigger
) -> dict[str, int]:
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
    entries = intake.compact()
    newest = {e.source: e.key for e in entries}
    stale = [e.key for e in entries if newest[e.source] != e.key]
    if stale:
        intake.settle(stale)
        counts["settled"] += len(stale)
    sources = graph.sources()
    for entry in entries:
        if newest[entry.source] != entry.key:
            continue
        if entry.kind == "lesson":
            outcome = lessons.resume(entry.key, entry.source, entry.label)
            counts["lesson" if outcome.status in ("started", "running", "deferred") else "settled"] += 1
            continue
        line = sources.get(entry.source)
        if entry.kind == "retire":
            gone = SourceLine(
                id=entry.source, kind="notes", title=entry.title or entry.source, path=entry.path, at=""
            )
            counts["retire" if notes.retire(gone, entry.key) else "settled"] += 1
            continue
        if _resume_note(notes, entry, line):
            counts["notes"] += 1
        else:
            counts["settled"] += 1
    return counts


def _resume_note(notes: NotesImport, entry: IntakeEntry, line: SourceLine | None) -> bool:
    """Start an open notes entry's run again (see `resume_accepted`); False when it was
    complete already (settled now)."""
    covered = notes.graph.covered(entry.source)
    jobs = [
        JobSpec(text=job.text, coverage=list(job.coverage))
        for job in entry.jobs
        if not all(fp in covered.get(key, ()) for key, fp in job.coverage)
    ]
    import_id = entry.import_id
    if import_id is not None and not notes.extraction.import_known(import_id):
        label = entry.label or "Notes import"
        notes.extraction.begin_import(f"{label} (resumed after a restart)", import_id=import_id)
    if not jobs and line is not None and line.fingerprint == entry.fingerprint:
        notes.settle(entry.key)  # merged and stamped before the crash: nothing to do
        if import_id is not None:
            notes.extraction.count_import(import_id, "unchanged")
        return False
    title = entry.title or Path(entry.path or entry.source).name
    plan = Plan(
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
    result = notes.launch(plan, import_id, recorded=line is not None)
    log.debug(
        "resumed %s after a restart: %s (%d of %d parts)",
        title,
        result.status,
        len(jobs),
        len(entry.jobs),
    )
    return True
