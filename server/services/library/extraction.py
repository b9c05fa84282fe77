"""The extraction pipeline's orchestration: jobs, ordering, concurrency, abort (seed §6).

- Every chat batch and every notes chunk is its own job with its own activity row and usage
  record. A source's jobs run strictly in order (each extractor reads the source's merged graph
  so far); different sources run in parallel.
- One process-wide semaphore (3 permits) bounds all background model calls; permits are held
  only around model calls, never while waiting, so the merge section cannot deadlock on them.
- Audit -> merge is one FIFO critical section: an auditor explores the graph as it stands, and the
  merge lands before the next job's audit starts.
- Abort is source-wide. One job's failure does not stop its siblings; a failed job checkpoints
  nothing (its content stays uncovered and re-runnable).
- Single-flight per source: a source already running is not started twice.
- A changed source replaces its contribution: a run that replaces one writes its jobs pending
  (they count for no reader but the run itself); when every chunk of a notes file's new version (or
  every current message of a lesson) merged, one version line accepts them and retires the
  source's other jobs, inside the merge section, and chains simplification had dropped in their
  favour come back (docs/decisions/0010-...). A re-run that fails leaves the old version alone.
- Deletion takes the same section (`GraphService.delete`), and a merge plans against the graph
  read inside it, so it never links to, or re-creates, a node deleted before it committed.

Here: the run table (queue, launch, end, abort, shutdown) and the feed's rows and import summaries
it keeps, past 400 lines because each of those reads and writes the same run tables; a run's jobs
are in `jobs.py`, a pack's in `packs.py`, the merge section in `merge.py`; `Run` and `RunHost`, the
seam those tasks see of this service, in `runs.py`.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic_ai.models import Model

from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.graph import (
    SourceKind,
)
from server.core.contracts.models import ResolvedModel
from server.core.events import EventBus
from server.core.fanout import FanOut
from server.core.library.graph import version_jobs
from server.core.library.packing import (
    PACK_BUDGET,
    packable,
    take_pack,
)
from server.core.ports import Embedder, ExtractionGraph
from server.core.tokens import estimate_tokens
from server.services.library.embeddings import CandidateVectors
from server.services.library.feed import (
    KEEP_ENDED_ROWS,
    MAX_REFUSALS,
    ImportTally,
    JobRow,
    JobSpec,
    Phase,
)
from server.services.library.jobs import run_source
from server.services.library.memory import release_memory
from server.services.library.merge import MergeSection
from server.services.library.packs import Pack, run_pack
from server.services.library.runs import Run
from server.services.machine_room import heap

log = logging.getLogger("lh.extraction")

BACKGROUND_PERMITS = 3
MAX_ACTIVE_RUNS = BACKGROUND_PERMITS + 1
"""Source runs executing at once (each holds its model client, prompt and graph view); the rest
wait in the queue as plain job specs."""
MAX_IMPORT_SUMMARIES = 50
"""Finished imports whose summary rows the feed keeps (the oldest go first)."""
TRIM_EVERY_RUNS = 64
"""Freed heap is handed back to the OS after this many ended runs, and when the queue drains."""


ModelProvider = Callable[[], "asyncio.Future[tuple[ResolvedModel, Model]] | Any"]


class ExtractionService:
    """Runs extraction jobs against the graph store.

    Args:
        graph: the graph ledgers port (this service is its only writer).
        model_for: async callable returning (resolved, model) for background work (the cheap slot).
        clock: ISO timestamp source (`server.core.clock`).
        events: the browser's bus (a private one when omitted).
        embedder: sentence embeddings for the auditor's candidates (fused with the lexical
            ranks); None: lexical candidates only.
        fanout: `MergeLanded` is published (and awaited) after each committed merge or
            retirement, before `graph-changed` (the layout settle); its handlers never fail a job.
        new_id: mints import ids (`imp_` + 12 hex digits) and each run's nonce (12 hex digits).
    """

    def __init__(
        self,
        graph: ExtractionGraph,
        model_for: Callable[[], Any],
        clock: Clock = utc_now,
        events: EventBus | None = None,
        embedder: Embedder | None = None,
        *,
        fanout: FanOut,
        new_id: NewId = new_id,
    ) -> None:
        self.graph = graph
        self.fanout = fanout
        self.new_id = new_id
        self.events = events if events is not None else EventBus()
        """`activity-changed` on every row change, `graph-changed` after every committed write."""
        self.model_for = model_for
        self.clock = clock
        self.permits = asyncio.Semaphore(BACKGROUND_PERMITS)
        self.offline_lane = asyncio.Semaphore(1)
        """Held, inside a permit, by every call to the offline model: its llama.cpp child answers
        one request at a time, so parallel jobs queued inside it and a waiting request's 2-minute
        first-token deadline ran out before its turn came (a new-user trial: 2 notes, 4 parts, all
        failed). One at a time, each request has the model to itself."""
        self.merge = MergeSection(
            graph,
            permits=self.permits,
            offline_lane=self.offline_lane,
            vectors=CandidateVectors(embedder) if embedder is not None else None,
            fanout=fanout,
            events=self.events,
            clock=clock,
            phase=self.set_phase,
        )
        """The audit -> merge section and what runs in it (`merge.py`)."""
        self.merge_section = self.merge.lock
        """The section's lock, shared with deletions (`MergeGate`)."""
        self.rows: dict[str, JobRow] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        """The runs executing now (at most `MAX_ACTIVE_RUNS`), by source."""
        self._active: dict[str, Run] = {}
        self._queue: deque[Run] = deque()
        """Runs waiting to launch, FIFO (a lesson's at the front)."""
        self._queued: dict[str, Run] = {}
        self._finished = 0
        self._packs: dict[str, Pack] = {}
        self._pump_soon = False
        """The pack each source of an executing pack belongs to."""
        self.pack_budget = PACK_BUDGET
        """Note tokens one pack holds at most; 0: every note has its own call."""
        self.imports: dict[str, ImportTally] = {}
        """Open and recent imports by id: their summary rows (`begin_import`)."""
        self.listeners: list[Callable[[], None]] = []
        self.stopping = False
        """Set by `shutdown`: the runs it cancels or drops end `aborted`, but what they were
        accepted for stays open in the accepted queue (they resume at the next start)."""

    # -- the activity feed ----------------------------------------------------------------------
    def activity(self) -> list[dict[str, Any]]:
        """Every job row and every import's summary row, newest first. An import's rows are
        shown while its run executes; waiting and ended ones are counted in its summary."""
        views = [row.view() for row in self.rows.values()]
        views += [tally.view() for tally in self.imports.values()]
        return sorted(views, key=lambda r: r["queuedAt"], reverse=True)

    def running(self, source: str) -> bool:
        """Whether the source has a run queued or executing."""
        if source in self._queued:
            return True
        task = self.tasks.get(source)
        return task is not None and not task.done()

    def abort(self, source: str) -> bool:
        """Abort a source's run (source-wide): the current job stops, later ones never start; a
        queued run never launches. An import id aborts every queued and running run of it."""
        tally = self.imports.get(source)
        if tally is not None:
            mine = [r.source for r in [*self._queue, *self._active.values()] if r.tally is tally]
            return any([self.abort(s) for s in mine])
        run = self._queued.get(source)
        if run is not None:
            self._queue.remove(run)
            self._drop(run)
            self.feed_changed()
            return True
        task = self.tasks.get(source)
        if task is None or task.done():
            return False
        pack = self._packs.get(source)
        if pack is not None:  # one note of a pack: the others go on
            alone = pack.alone.get(source)
            if alone is not None:  # re-running alone after the pack failed
                if alone.done():
                    return False
                alone.cancel()
                return True
            pack.aborted.add(source)
            if all(run.source in pack.aborted for run in pack.runs):
                task.cancel()
            else:
                row = next(run.rows[0] for run in pack.runs if run.source == source)
                row.phase, row.ended_at = "aborted", self.clock()
                self.feed_changed()
            return True
        task.cancel()
        return True

    def feed_changed(self) -> None:
        """Rows changed: `activity-changed` on the bus, then each listener (a failing one is
        logged and skipped)."""
        self.events.emit("activity-changed")
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:  # a side channel never breaks the pipeline
                log.debug("activity listener failed", exc_info=True)

    # -- starting runs --------------------------------------------------------------------------
    def start(
        self,
        source: str,
        kind: SourceKind,
        label: str,
        jobs: list[JobSpec],
        on_complete: Callable[[bool], None] | None = None,
        version: dict[str, str] | None = None,
        import_id: str | None = None,
    ) -> bool:
        """Queue a source's run unless one is queued or running (single-flight). Returns whether
        it was queued. O(jobs): no ledger read, no task, no model client until the run launches
        (at most `MAX_ACTIVE_RUNS` runs execute at once; the rest wait in a FIFO queue; a
        lesson's run goes to the queue's front).

        `on_complete(all_merged)` runs after the last job (e.g. to stamp a notes file's fingerprint).
        `version` (notes): every (coverage key -> fingerprint) of the source's new content. The
        extractor's THE GRAPH SO FAR is then what this version merged so far, and once every job
        merged, the source's jobs that merged no part of it are retired (so `jobs` may be empty:
        the version merged in earlier runs and only its completion is left). When the source has
        such jobs (the run replaces something), its jobs merge pending: they count only from the
        version line that completes the version, never beside the old one.

        `import_id` (from `begin_import`): the run belongs to that import. Its activity rows are
        made when it launches (a waiting file is counted in the import's summary row, not shown
        as rows) and fold into the summary row when it ends."""
        if self.running(source) or (not jobs and version is None):
            return False
        tally = self.imports.get(import_id) if import_id is not None else None
        run = Run(source, kind, label, jobs, on_complete, version, tally, asyncio.Event())
        if tally is None:
            run.rows = self._make_rows(run)  # a lesson's or a lone file's rows show at once
        elif jobs:
            tally.waiting += 1
        self._queued[source] = run
        if kind == "chat":
            self._queue.appendleft(run)
        else:
            self._queue.append(run)
        if not self._pump_soon:  # the files one request queues launch together (and may pack)
            self._pump_soon = True
            asyncio.get_running_loop().call_soon(self._pump)
        self.feed_changed()
        return True

    def _make_rows(self, run: Run) -> list[JobRow]:
        rows = []
        nonce = self.new_id("", 12)  # a run's own nonce: ids minted by two runs never collide
        for index, spec in enumerate(run.specs, start=1):
            fingerprint = hashlib.sha256(spec.text.encode("utf-8")).hexdigest()[:12]
            row = JobRow(
                id=f"job_{run.source}_{fingerprint}_{index}",
                job=f"job_{run.source}_{fingerprint}_{index}_{nonce}",
                source=run.source,
                kind=run.kind,
                label=run.label,
                index=index,
                total=len(run.specs),
                queued_at=self.clock(),
            )
            self.rows[row.id] = row
            rows.append(row)
        return rows

    def _pump(self) -> None:
        """Launch queued runs while fewer than `MAX_ACTIVE_RUNS` execute. Small one-chunk notes at
        the queue's front launch together as one pack (one extractor call; decision 0023)."""
        self._pump_soon = False
        while self._queue and self._executing() < MAX_ACTIVE_RUNS:
            group = [self._queue.popleft()]
            if self.pack_budget:
                sizes = (self._pack_size(r) for r in itertools.chain(group, self._queue))
                for _ in range(take_pack(sizes, self.pack_budget) - 1):
                    group.append(self._queue.popleft())
            pendings = [self._prepare_launch(run) for run in group]
            if len(group) == 1:
                run = group[0]
                coro: Coroutine[Any, Any, None] = run_source(
                    self,
                    run.source,
                    run.kind,
                    list(zip(run.rows, run.specs, strict=True)),
                    run.on_complete,
                    run.version,
                    pendings[0],
                )
            else:
                pack = Pack(group, pendings)
                for run in group:
                    self._packs[run.source] = pack
                coro = run_pack(self, pack)
            task = asyncio.get_running_loop().create_task(coro, name=f"extraction {group[0].source}")
            for run in group:
                self.tasks[run.source] = task
                self._active[run.source] = run
                task.add_done_callback(functools.partial(self._ended, run))

    def _executing(self) -> int:
        """Tasks executing now (a pack's task serves several sources)."""
        return len({id(task) for task in self.tasks.values()})

    def _pack_size(self, run: Run) -> int | None:
        """A queued run's note tokens when it may share a pack: a notes file of one chunk far below
        the budget (`PACK_NOTE_TOKENS`), with a version; else None."""
        if run.kind != "notes" or run.version is None or len(run.specs) != 1:
            return None
        tokens = estimate_tokens(run.specs[0].text)
        return tokens if packable(tokens) else None

    def _prepare_launch(self, run: Run) -> bool:
        """A run leaves the queue: an import's rows are made; returns whether it merges pending
        (it replaces jobs its version does not keep)."""
        self._queued.pop(run.source, None)
        if run.tally is not None and run.specs:
            run.tally.waiting -= 1
            run.tally.running += 1
            run.rows = self._make_rows(run)
            run.tally.live[run.source] = run.rows  # what its running files do (feed counts)
        # a new source (no contributors) reads no coverage: a launch costs one ledger read
        contributors = self.graph.contributors(run.source) if run.version is not None else set()
        return run.version is not None and bool(
            contributors and contributors - version_jobs(self.graph.coverage(run.source), run.version)
        )

    def _ended(self, run: Run, task: asyncio.Task[None]) -> None:
        """A run's task ended: fold an import's rows into its summary, launch the next runs."""
        if self.tasks.get(run.source) is task:
            del self.tasks[run.source]
            self._active.pop(run.source, None)
            self._packs.pop(run.source, None)
        if run.tally is not None:
            self._fold(run)
        run.ended.set()
        self._finished += 1
        self._pump()
        if not self.tasks:
            heap.compact()  # cycles that died while frozen, once the library is idle
        if not self.tasks or self._finished % TRIM_EVERY_RUNS == 0:
            release_memory()
        self.feed_changed()

    def _fold(self, run: Run) -> None:
        """Fold an ended import run's rows into its import's summary (counts, usage, stats; a
        failed or aborted file keeps its outcome and first error there)."""
        tally = run.tally
        assert tally is not None
        if not run.specs:
            return
        tally.running = max(0, tally.running - 1) if run.rows else tally.running
        tally.live.pop(run.source, None)
        phases = {row.phase for row in run.rows}
        if "error" in phases:
            outcome = "failed"
            error = next((row.error for row in run.rows if row.error), None) or "a part failed"
            tally.errors[run.source] = f"{run.label}: {error}"
        elif phases - {"done"}:
            outcome = "aborted"
        else:
            outcome = "done"
        tally.counts[outcome] += 1
        tally.outcomes[run.source] = outcome
        tally.shown.extend(run.rows)
        while len(tally.shown) > KEEP_ENDED_ROWS:
            row = tally.shown.popleft()
            tally.absorb(row)
            if self.rows.get(row.id) is row:
                del self.rows[row.id]
        tally.ended_at = self.clock()

    def begin_import(self, label: str, import_id: str | None = None) -> str:
        """Open an import (one summary row in the feed); returns its id (`imp_` + 12 hex, or
        `import_id`: an import resumed after a restart keeps its id). The oldest finished imports'
        summaries go beyond `MAX_IMPORT_SUMMARIES`."""
        import_id = import_id or self.new_id("imp_", 12)
        self.imports[import_id] = ImportTally(import_id, label, self.clock())
        finished = [t for t in self.imports.values() if not t.waiting and not t.running]
        for old in finished[: max(0, len(self.imports) - MAX_IMPORT_SUMMARIES)]:
            del self.imports[old.id]
        return import_id

    def import_known(self, import_id: str) -> bool:
        return import_id in self.imports

    def import_label(self, import_id: str) -> str | None:
        """The import's summary label as begun (None when unknown)."""
        tally = self.imports.get(import_id)
        return tally.label if tally is not None else None

    def note_refusals(self, import_id: str, refusals: dict[str, str]) -> None:
        """Keep why files of an import were refused (file name -> sentence) with its summary, up to
        `MAX_REFUSALS` of them."""
        tally = self.imports.get(import_id)
        if tally is None or not refusals:
            return
        for name, why in refusals.items():
            if len(tally.refusals) >= MAX_REFUSALS:
                break
            tally.refusals[name] = why
        self.feed_changed()

    def count_import(self, import_id: str, status: str, files: int = 1) -> None:
        """Count files of an import that start no run: `unchanged`, `refused`, `removed`,
        `running` (already being read by an earlier run)."""
        tally = self.imports.get(import_id)
        if tally is not None and files:
            key = "unchanged" if status == "running" else status
            tally.counts[key] = tally.counts.get(key, 0) + files
            self.feed_changed()

    async def wait(self, source: str) -> None:
        """Wait for a source's run (queued or running) to finish (tests, shutdown)."""
        run = self._queued.get(source) or self._active.get(source)
        if run is not None:
            await run.ended.wait()
        task = self.tasks.get(source)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def wait_all(self) -> None:
        """Wait until no run is queued or running."""
        while self._queue or self.tasks:
            await asyncio.gather(*list(self.tasks.values()), return_exceptions=True)
            await asyncio.sleep(0)

    async def shutdown(self) -> None:
        self.stopping = True
        while self._queue:
            self._drop(self._queue.popleft())
        for task in self.tasks.values():
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    def _drop(self, run: Run) -> None:
        """A queued run that never launches (aborted, shutdown): its rows end aborted, its
        `on_complete(False)` runs, waiters wake."""
        self._queued.pop(run.source, None)
        now = self.clock()
        for row in run.rows:
            row.phase, row.ended_at = "aborted", now
        if run.tally is not None and run.specs:
            run.tally.waiting -= 1
            run.tally.counts["aborted"] += 1
            run.tally.outcomes[run.source] = "aborted"
        if run.on_complete is not None:
            try:
                run.on_complete(False)
            except Exception:
                log.exception("completing source %s failed", run.source)
        run.ended.set()

    def set_phase(self, row: JobRow, phase: Phase) -> None:
        """Set an activity row's phase and tell the feed (`feed_changed`)."""
        row.phase = phase
        self.feed_changed()
