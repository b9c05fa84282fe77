"""The activity feed's rows of the extraction pipeline (`GET /api/activity`): one per job, and one
summary per notes import (its files counted by outcome, its folded rows' usage summed)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from server.core.contracts.graph import SourceKind
from server.core.machine_room.model_failures import failure_in_text, learner_words

KEEP_ENDED_ROWS = 50
"""Ended rows an import keeps in the feed (the newest); older ones fold into its summary row."""


Phase = Literal["queued", "extracting", "waiting", "auditing", "merging", "done", "error", "aborted"]


@dataclass
class JobSpec:
    """One job's input.

    Attributes:
        text: what the extractor reads (teacher prose of a batch, or a notes chunk).
        coverage: (message key, fingerprint) pairs the job checkpoints when it merges.
        messages: chat message ids (provenance); empty for notes.
    """

    text: str
    coverage: list[tuple[str, str]]
    messages: list[str] = field(default_factory=list)


@dataclass
class JobRow:
    """An activity-feed row (`GET /api/activity`)."""

    id: str
    source: str
    kind: SourceKind
    label: str
    index: int
    total: int
    job: str = ""
    """The run's own job id (provenance, coverage, run and usage lines): `id` plus the run's
    nonce. `id` (source, chunk text, index) names the feed row, so a rerun replaces its row."""
    phase: Phase = "queued"
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    requests: int = 0
    cost_usd: float | None = None
    model: str | None = None
    """The model id the job's extraction role ran (set when it ends; None: it never got one)."""
    queued_at: str = ""
    started_at: str | None = None
    """When the job got a model-call permit and began extracting (None while queued)."""
    ended_at: str | None = None
    stats: dict[str, int] = field(default_factory=dict)
    pack_notes: int = 0
    """Notes that shared this job's extractor call (decision 0023); 0 when it ran alone. Its usage
    is then its share of the pack's (by its tokens, `packs._charge`), not calls of its own."""
    pack_requests: int = 0
    """The pack's model calls (all of them, shared by `pack_notes` notes); 0 when it ran alone."""

    def view(self) -> dict[str, Any]:
        """The row as `GET /api/activity` lists it. `pack`: `{"notes", "requests"}` of the pack
        whose call read it (its usage is its share of that call's), or None when it ran alone."""
        pack = {"notes": self.pack_notes, "requests": self.pack_requests} if self.pack_notes else None
        return {
            "id": self.id,
            "source": self.source,
            "kind": self.kind,
            "label": f"{self.label} · {self.index}/{self.total}" if self.total > 1 else self.label,
            "phase": self.phase,
            "error": self.error,
            "usage": {
                "inputTokens": self.input_tokens,
                "outputTokens": self.output_tokens,
                "requests": self.requests,
                "costUsd": self.cost_usd,
                "model": self.model,
            },
            "queuedAt": self.queued_at,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
            "stats": self.stats,
            "pack": pack,
        }


OUTCOMES = ("done", "failed", "aborted", "unchanged", "refused", "removed")
MAX_REFUSALS = 50
"""Refused files whose reasons an import's summary keeps (the rest are counted only)."""


@dataclass
class ImportTally:
    """One import's summary row (`GET /api/activity`): its files counted by outcome, the usage
    and stats of all its ended rows summed (folded ones and those still shown, which carry their
    own too: the import's row never says "no model calls" beside its files' calls), and each ended
    file's outcome (`done`, `failed`, `aborted`) by source id with the first error of each
    failed one, so the Library can show a file whose rows were folded. `waiting`: files whose
    run is queued; `running`: files whose run executes (launched: it may still wait for a
    model-call permit or for its turn to merge, `live` says which)."""

    id: str
    label: str
    queued_at: str
    waiting: int = 0
    running: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    outcomes: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    refusals: dict[str, str] = field(default_factory=dict)
    """Why files were refused unread, by file name (the first `MAX_REFUSALS`; trial finding 4:
    the reason outlives the upload's answer)."""
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cost_usd: float | None = None
    stats: dict[str, int] = field(default_factory=dict)
    ended_at: str | None = None
    shown: deque[JobRow] = field(default_factory=deque)
    """Its newest ended rows, still in the feed (at most `KEEP_ENDED_ROWS`)."""
    live: dict[str, list[JobRow]] = field(default_factory=dict)
    """The rows of its launched runs, by source (from launch until the run folds): what each
    running file is doing now (`busy_counts`)."""

    def busy_counts(self) -> dict[str, int]:
        """Its unfinished files by what they are doing now (issue 28 item 7: a file is "reading"
        only while a model call reads it): `reading` (a row's extractor call runs), `merging`
        (checked against the graph or merged), `waiting` (queued, or launched and waiting for a
        model-call permit or its turn to merge), and `running` (reading + merging). The four
        sum with the outcomes to the import's files."""
        reading = merging = 0
        for rows in self.live.values():
            phases = {row.phase for row in rows}
            if "extracting" in phases:
                reading += 1
            elif phases & {"auditing", "merging"}:
                merging += 1
        waiting = self.waiting + max(0, self.running - reading - merging)
        return {"waiting": waiting, "running": reading + merging, "reading": reading, "merging": merging}

    def ended_phase(self) -> str:
        """An ended import's phase, honestly (trial finding 4): `error` when files failed and none
        was read (done or unchanged), `aborted` when all were stopped, else `done` (`failures`
        then says how many failed)."""
        read = self.counts["done"] + self.counts["unchanged"]
        if self.counts["failed"] and not read:
            return "error"
        if self.counts["aborted"] and not read and not self.counts["failed"]:
            return "aborted"
        return "done"

    def failures(self, files: int) -> str | None:
        """ "2 of 5 files failed" (with "N refused" when some were), or None when none failed."""
        failed, refused = self.counts["failed"], self.counts["refused"]
        if not failed and not refused:
            return None
        words = []
        if failed:
            words.append(f"{failed:,} of {files:,} file{'' if files == 1 else 's'} failed")
        if refused:
            words.append(f"{refused:,} {'was' if refused == 1 else 'were'} refused")
        return "; ".join(words)

    def absorb(self, row: JobRow) -> None:
        """Add an ended row's usage and stats."""
        self.input_tokens += row.input_tokens or 0
        self.output_tokens += row.output_tokens or 0
        self.requests += row.requests
        if row.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + row.cost_usd
        for key, value in row.stats.items():
            self.stats[key] = self.stats.get(key, 0) + value

    def totals(self) -> ImportTally:
        """A copy holding the usage and stats of its folded rows and of those still shown."""
        total = ImportTally(self.id, self.label, self.queued_at)
        total.absorb_totals(self)
        for row in self.shown:
            total.absorb(row)
        return total

    def absorb_totals(self, other: ImportTally) -> None:
        """Add another tally's summed usage and stats."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.requests += other.requests
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd
        for key, value in other.stats.items():
            self.stats[key] = self.stats.get(key, 0) + value

    def view(self) -> dict[str, Any]:
        files = self.waiting + self.running + sum(self.counts.values())
        busy = self.waiting or self.running
        total = self.totals()
        return {
            "id": self.id,
            "source": self.id,
            "kind": "import",
            "label": f"{self.label} · {files:,} file{'' if files == 1 else 's'}",
            "phase": "running" if busy else self.ended_phase(),
            "error": None if busy else self.failures(files),
            "usage": {
                "inputTokens": total.input_tokens if total.requests else None,
                "outputTokens": total.output_tokens if total.requests else None,
                "requests": total.requests,
                "costUsd": total.cost_usd,
            },
            "queuedAt": self.queued_at,
            "startedAt": self.queued_at,
            "endedAt": None if busy else self.ended_at or self.queued_at,
            "stats": total.stats,
            "importId": self.id,
            "counts": {**self.busy_counts(), **self.counts},
            "outcomes": self.outcomes,
            "errors": self.errors,
            "refusals": self.refusals,
        }


def honest(exc: Exception) -> str:
    """A short, true sentence about a failed job for the activity feed."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    gave_up = failure_in_text(text, kept=False)  # not the SDK's "Exceeded maximum output retries (3)"
    return learner_words(gave_up) if gave_up is not None else text[:300]
