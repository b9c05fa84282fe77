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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import itertools
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.library.auditor import AuditDeps, auditor_prompt, build_auditor, run_auditor
from server.agent.library.extraction import (
    build_extractor,
    build_pack_extractor,
    digest,
    extractor_overhead_tokens,
    run_extractor,
    run_pack_extractor,
    windowed_prompt,
)
from server.agent.library.window import Window
from server.agent.machine_room.model_guard import model_failure_of
from server.agent.machine_room.pricing import usage_cost
from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.graph import (
    Chain,
    CoverageLine,
    Findings,
    IdentityLink,
    Proposition,
    Provenance,
    RunLine,
    SourceKind,
    Verdicts,
)
from server.core.contracts.models import ResolvedModel
from server.core.events import EventBus
from server.core.fanout import FanOut, MergeLanded
from server.core.library.candidates import AuditCandidates, audit_candidates
from server.core.library.graph import MergePlan, completion, plan_merge, version_jobs
from server.core.library.packing import (
    PACK_BUDGET,
    PackNote,
    pack_prompt,
    packable,
    shares,
    split_pack,
    take_pack,
)
from server.core.library.simplify import restorable, simplify
from server.core.machine_room.model_failures import failure_in_text, learner_words
from server.core.ports import Embedder, ExtractionGraph
from server.core.tokens import estimate_tokens
from server.services.library.embeddings import CandidateVectors
from server.services.library.feed import KEEP_ENDED_ROWS, MAX_REFUSALS, ImportTally, JobRow, JobSpec, Phase
from server.services.library.memory import release_memory
from server.services.machine_room import heap
from server.services.machine_room.background import awaited_whole, run_background
from server.services.machine_room.offline_model import CONTEXT_TOKENS, TOKENS_PER_ESTIMATE

log = logging.getLogger("lh.extraction")

BACKGROUND_PERMITS = 3
MAX_ACTIVE_RUNS = BACKGROUND_PERMITS + 1
"""Source runs executing at once (each holds its model client, prompt and graph view); the rest
wait in the queue as plain job specs."""
MAX_IMPORT_SUMMARIES = 50
"""Finished imports whose summary rows the feed keeps (the oldest go first)."""
TRIM_EVERY_RUNS = 64
"""Freed heap is handed back to the OS after this many ended runs, and when the queue drains."""
OFFLINE_MAX_TOKENS = 1024


def offline_window() -> Window:
    """The offline model's window as the extractor's requests see it (`FitWindow`)."""
    return Window(CONTEXT_TOKENS, TOKENS_PER_ESTIMATE, OFFLINE_MAX_TOKENS, extractor_overhead_tokens())


@dataclass
class _Run:
    """A source's run, queued or executing."""

    source: str
    kind: SourceKind
    label: str
    specs: list[JobSpec]
    on_complete: Callable[[bool], None] | None
    version: dict[str, str] | None
    tally: ImportTally | None
    ended: asyncio.Event
    rows: list[JobRow] = field(default_factory=list)


@dataclass
class _Pack:
    """Small notes' runs sharing one extractor call (decision 0023): each keeps its own row, job
    id, provenance, coverage, run line, version swap and fingerprint."""

    runs: list[_Run]
    pending: list[bool]
    aborted: set[str] = field(default_factory=set)
    """Members aborted while the pack runs: they merge nothing and re-run nothing."""
    alone: dict[str, asyncio.Future[None]] = field(default_factory=dict)
    """Members re-running alone after the pack failed (an abort cancels only that one)."""


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
        self.vectors = CandidateVectors(embedder) if embedder is not None else None
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
        self.merge_section = asyncio.Lock()
        self.rows: dict[str, JobRow] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        """The runs executing now (at most `MAX_ACTIVE_RUNS`), by source."""
        self._active: dict[str, _Run] = {}
        self._queue: deque[_Run] = deque()
        """Runs waiting to launch, FIFO (a lesson's at the front)."""
        self._queued: dict[str, _Run] = {}
        self._finished = 0
        self._packs: dict[str, _Pack] = {}
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
            self._changed()
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
                self._changed()
            return True
        task.cancel()
        return True

    def _changed(self) -> None:
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
        run = _Run(source, kind, label, jobs, on_complete, version, tally, asyncio.Event())
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
        self._changed()
        return True

    def _make_rows(self, run: _Run) -> list[JobRow]:
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
                coro: Coroutine[Any, Any, None] = self._run_source(
                    run.source,
                    run.kind,
                    list(zip(run.rows, run.specs, strict=True)),
                    run.on_complete,
                    run.version,
                    pendings[0],
                )
            else:
                pack = _Pack(group, pendings)
                for run in group:
                    self._packs[run.source] = pack
                coro = self._run_pack(pack)
            task = asyncio.get_running_loop().create_task(coro, name=f"extraction {group[0].source}")
            for run in group:
                self.tasks[run.source] = task
                self._active[run.source] = run
                task.add_done_callback(functools.partial(self._ended, run))

    def _executing(self) -> int:
        """Tasks executing now (a pack's task serves several sources)."""
        return len({id(task) for task in self.tasks.values()})

    def _pack_size(self, run: _Run) -> int | None:
        """A queued run's note tokens when it may share a pack: a notes file of one chunk far below
        the budget (`PACK_NOTE_TOKENS`), with a version; else None."""
        if run.kind != "notes" or run.version is None or len(run.specs) != 1:
            return None
        tokens = estimate_tokens(run.specs[0].text)
        return tokens if packable(tokens) else None

    def _prepare_launch(self, run: _Run) -> bool:
        """A run leaves the queue: an import's rows are made; returns whether it merges pending
        (it replaces jobs its version does not keep)."""
        self._queued.pop(run.source, None)
        if run.tally is not None and run.specs:
            run.tally.waiting -= 1
            run.tally.running += 1
            run.rows = self._make_rows(run)
        # a new source (no contributors) reads no coverage: a launch costs one ledger read
        contributors = self.graph.contributors(run.source) if run.version is not None else set()
        return run.version is not None and bool(
            contributors and contributors - version_jobs(self.graph.coverage(run.source), run.version)
        )

    def _ended(self, run: _Run, task: asyncio.Task[None]) -> None:
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
        self._changed()

    def _fold(self, run: _Run) -> None:
        """Fold an ended import run's rows into its import's summary (counts, usage, stats; a
        failed or aborted file keeps its outcome and first error there)."""
        tally = run.tally
        assert tally is not None
        if not run.specs:
            return
        tally.running = max(0, tally.running - 1) if run.rows else tally.running
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
        self._changed()

    def count_import(self, import_id: str, status: str, files: int = 1) -> None:
        """Count files of an import that start no run: `unchanged`, `refused`, `removed`,
        `running` (already being read by an earlier run)."""
        tally = self.imports.get(import_id)
        if tally is not None and files:
            key = "unchanged" if status == "running" else status
            tally.counts[key] = tally.counts.get(key, 0) + files
            self._changed()

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

    def _drop(self, run: _Run) -> None:
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

    async def _run_source(
        self,
        source: str,
        kind: SourceKind,
        jobs: list[tuple[JobRow, JobSpec]],
        on_complete: Callable[[bool], None] | None,
        version: dict[str, str] | None = None,
        pending: bool = False,
    ) -> None:
        merged_all = True
        try:
            for index, (row, spec) in enumerate(jobs):
                # The last job swaps the versions in its own merge section: no reader ever sees both.
                replace = version if merged_all and index == len(jobs) - 1 else None
                merged_all = await self._run_job(row, spec, kind, version, replace, pending) and merged_all
            if not jobs and version is not None:
                async with self.merge_section:
                    merged_all = await self._replace(source, version)
        except asyncio.CancelledError:
            merged_all = False
            for row, _ in jobs:
                if row.phase not in ("done", "error"):
                    row.phase, row.ended_at = "aborted", self.clock()
            self._changed()
            raise
        finally:
            if on_complete is not None:
                try:
                    on_complete(merged_all)
                except Exception:
                    log.exception("completing source %s failed", source)

    async def _replace(self, source: str, version: dict[str, str]) -> bool:
        """Complete `version`: one version line accepts its pending jobs and retires the source's
        jobs that merged no part of it. Call it holding the merge section. Returns False when the
        ledger could not be written (the version is then not stamped complete, its jobs stay
        pending, and the next import of it retries the swap)."""
        try:
            line = completion(
                source,
                self.graph.contributors(source),
                self.graph.coverage(source),
                version,
                self.graph.pending(),
                self.clock(),
            )
            if line is not None:
                self.graph.complete(line)
                self._settle(set(line.accepted))
                await self._after_merge(source)
        except OSError:
            log.exception("completing the new version of %s failed", source)
            return False
        return True

    def _settle(self, accepted: set[str]) -> None:
        """After a swap: chains simplification dropped because a now-retired chain covered them
        come back, and whatever they or the accepted jobs' chains make redundant goes (seed §6,
        chain simplification; a pending run's merges dropped only its own chains)."""
        chains = self.graph.chains()
        restored = restorable(self.graph.archived_chains(), chains, self.graph.nodes())
        if restored:
            self.graph.restore_chains({c.id for c in restored})
        changed = [*restored, *self.graph.contribution(accepted)[1].values()] if accepted else restored
        if changed:
            self.graph.drop_chains(simplify(self.graph.chains(), changed=changed))

    async def _after_merge(self, label: str) -> None:
        """After a committed merge or retirement: `MergeLanded` (the layout settle, awaited: it
        computes in a worker thread, the loop stays free), then `graph-changed` (the write is
        committed whether or not a handler succeeded: each is contained)."""
        await self.fanout.publish_awaited(MergeLanded(label))
        self.events.emit("graph-changed")

    async def _audit_candidates(self, findings: Findings, nodes: dict[str, Proposition]) -> AuditCandidates:
        """Exact links and fused candidates (`audit_candidates`), computed in a worker thread with
        the embedding (both are O(graph) per job: the fuzzy ranking alone held the loop 10-50 ms
        per job late in a vault import, issue 16). The caller holds the merge section, so the
        graph read is the one merged into. An embedder that fails leaves the candidates lexical
        (`CandidateVectors`)."""
        vectors = self.vectors

        def rank() -> AuditCandidates:
            pair = vectors.vectors(findings.propositions, nodes) if vectors is not None else None
            fv, nv = pair if pair is not None else (None, None)
            return audit_candidates(findings.propositions, nodes, finding_vectors=fv, node_vectors=nv)

        return await run_background(rank)  # behind the event loop (issue 16)

    def _phase(self, row: JobRow, phase: Phase) -> None:
        row.phase = phase
        self._changed()

    async def _run_job(
        self,
        row: JobRow,
        spec: JobSpec,
        kind: SourceKind,
        version: dict[str, str] | None = None,
        replace: dict[str, str] | None = None,
        pending: bool = False,
    ) -> bool:
        """One job. `replace`: after this merge, in the same section, the version replaces the
        source's earlier contribution (`_replace`); its failure makes this return False.
        `pending`: the job's lines count only once its version completes; until then this run
        (and no other reader) sees them (`MergeLedger.graph_with`)."""
        usage = RunUsage()
        failed_calls = 0  # requests sent that failed (pydantic-ai counts only answered ones)
        resolved: ResolvedModel | None = None

        mine, graph = self._view(row.source, version, pending)
        try:
            resolved, model = await self.model_for()
            cap = OFFLINE_MAX_TOKENS if resolved.offline else None
            nodes, chains = graph()
            # THE GRAPH SO FAR of a versioned run is its version's, never the replaced one's
            own = self.graph.contribution(mine()) if version is not None else (nodes, chains)
            window = offline_window() if resolved.offline else None
            extractor = build_extractor(model, kind=kind, existing=nodes, max_tokens=cap, window=window)
            prompt = windowed_prompt(spec.text, digest(*own, row.source), window)
            async with self.permits, self._lane(resolved.offline):  # "queued" until a permit is free
                row.started_at = self.clock()
                self._phase(row, "extracting")
                findings = await run_extractor(extractor, prompt, usage)
            self._phase(row, "waiting")
            async with self.merge_section:
                nodes, _ = graph()  # the graph as it stands now
                verdicts = await self._audit(
                    findings, nodes, model, cap, usage, [row], offline=resolved.offline
                )
                plan, replaced = await self._commit(row, spec, findings, verdicts, graph, pending, replace)
            row.stats = _row_stats(plan)
            row.phase = "done"
            return replaced
        except asyncio.CancelledError:
            row.phase = "aborted"
            raise
        except Exception as exc:
            log.warning("extraction job %s failed: %s", row.id, exc)
            row.phase, row.error = "error", _honest(exc)
            failed = model_failure_of(exc)
            failed_calls = failed.attempts if failed is not None else 0
            return False
        finally:
            # requests that failed were still made: counted, with no tokens reported (a failed
            # job's usage is not "no model calls"; absence is not zero, trial finding 4)
            self._record_usage(row, usage, failed_calls, resolved)

    def _lane(self, offline: bool) -> contextlib.AbstractAsyncContextManager[Any]:
        """`offline_lane` when the call goes to the offline model, else nothing to wait for."""
        return self.offline_lane if offline else contextlib.nullcontext()

    def _record_usage(
        self, row: JobRow, usage: RunUsage, failed_calls: int, resolved: ResolvedModel | None
    ) -> None:
        """An ended job's usage on its row and in `usage.jsonl` (a side channel: contained)."""
        row.ended_at = self.clock()
        row.input_tokens = usage.input_tokens if usage.requests else None
        row.output_tokens = usage.output_tokens if usage.requests else None
        row.requests = usage.requests + failed_calls
        row.cost_usd = usage_cost(usage, resolved) if resolved else None
        try:
            self.graph.record_usage(  # on the loop: the run ends with its usage recorded
                {
                    "job": row.job,
                    "source": row.source,
                    "label": row.view()["label"],
                    "phase": row.phase,
                    "inputTokens": row.input_tokens,
                    "outputTokens": row.output_tokens,
                    "requests": row.requests,
                    "costUsd": row.cost_usd,
                    "model": resolved.model if resolved else None,
                    "at": row.ended_at,
                }
            )
        except OSError:
            log.exception("recording usage of %s failed", row.id)  # a side channel: contained
        self._changed()

    def _view(
        self, source: str, version: dict[str, str] | None, pending: bool
    ) -> tuple[Callable[[], set[str]], Callable[[], tuple[dict[str, Proposition], dict[str, Chain]]]]:
        """(mine, graph) for a run of `source`: the version's jobs it stands on (a pending run its
        own pending ones too), and the graph as it sees it (the counted graph, plus its version's
        pending jobs when it merges pending)."""

        def mine() -> set[str]:
            if version is None:
                return set()
            jobs = version_jobs(self.graph.coverage(source), version)
            return jobs if pending else jobs - self.graph.pending()

        def graph() -> tuple[dict[str, Proposition], dict[str, Chain]]:
            return self.graph.graph_with(mine()) if pending else (self.graph.nodes(), self.graph.chains())

        return mine, graph

    async def _run_pack(self, pack: _Pack) -> None:
        """A pack of small notes (decision 0023): one extractor call reads them all, each in its
        own `<note id>` section; one audit judges their propositions together; then each note
        merges on its own, in order (its job id, provenance, coverage, run line and, when it
        replaces an earlier version, its swap) and its `on_complete` stamps its fingerprint. A
        proposition the audit linked to one of an earlier member's lands on that member's node.
        If the pack fails before a note merged (the call, the submit, the audit), that note runs
        again alone (`_run_source`), so only what failed re-runs; a note whose own merge failed
        ends with its own error, as a single job would. The pack's usage is charged to its notes
        in proportion to their tokens."""
        members = [
            (run, run.rows[0], run.specs[0], pending)
            for run, pending in zip(pack.runs, pack.pending, strict=True)
        ]
        notes = [PackNote(run.source, run.label, spec.text) for run, _, spec, _ in members]
        usage = RunUsage()
        failed_calls = 0
        resolved: ResolvedModel | None = None
        ended: set[str] = set()  # members whose merge ran (merged or failed on their own)
        failure: Exception | None = None
        try:
            resolved, model = await self.model_for()
            if resolved.offline:  # a 4,096-token context: each note has its own call
                raise _Unpacked("the offline model reads one note at a time")
            extractor = build_pack_extractor(
                model, notes=[n.source for n in notes], existing=self.graph.nodes()
            )
            async with self.permits:
                for _, row, _, _ in members:
                    row.started_at = self.clock()
                    self._phase(row, "extracting")
                packed = await run_pack_extractor(extractor, pack_prompt(notes), usage)
            split = split_pack(packed, [n.source for n in notes])
            for run, row, _, _ in members:
                if run.source not in pack.aborted:
                    self._phase(row, "waiting")
            async with self.merge_section:
                live = [m for m in members if m[0].source not in pack.aborted]
                nodes = self.graph.nodes()
                combined = Findings(
                    propositions=[p for m in live for p in split[m[0].source].propositions], chains=[]
                )
                verdicts = await self._audit(
                    combined, nodes, model, None, usage, [m[1] for m in live], shared=True
                )
                owner = {p.id: m[0].source for m in live for p in split[m[0].source].propositions}
                landed: dict[str, str] = {}  # an earlier member's finding id -> its node id
                for run, row, spec, pending in live:
                    findings = split[run.source]
                    links = []
                    for link in verdicts.links:
                        if owner.get(link.finding) != run.source:
                            continue
                        node = landed.get(link.node, link.node)
                        if owner.get(node, run.source) != run.source:
                            continue  # a twin in a note that did not merge: this one is new
                        links.append(IdentityLink(finding=link.finding, node=node))
                    _, graph = self._view(run.source, run.version, pending)
                    ended.add(run.source)
                    try:
                        plan, merged = await self._commit(
                            row, spec, findings, Verdicts(links=links), graph, pending, run.version
                        )
                    except Exception as exc:  # this note's own merge failed: its error alone
                        log.warning("merging packed note %s failed: %s", row.id, exc)
                        row.phase, row.error = "error", _honest(exc)
                        merged = False
                    else:
                        landed.update(
                            (p.id, line.id)
                            for p, line in zip(findings.propositions, plan.node_lines, strict=True)
                        )
                        row.stats = _row_stats(plan)
                        row.phase = "done"
                    _complete(run, merged)
        except asyncio.CancelledError:
            for run, row, _, _ in members:
                if run.source not in ended:
                    row.phase = "aborted"
                    _complete(run, False)
            raise
        except Exception as exc:
            failure = exc
            failed = model_failure_of(exc)
            failed_calls = failed.attempts if failed is not None else 0
            if not isinstance(exc, _Unpacked):
                log.warning("a pack of %d notes failed (%s); its notes run alone", len(members), exc)
        finally:
            self._charge(pack, usage, failed_calls, resolved, failure is not None)
        for run, row, spec, pending in members:
            if run.source in ended:
                continue
            if run.source in pack.aborted:
                row.phase, row.ended_at = "aborted", self.clock()
                _complete(run, False)
                continue
            # only what failed re-runs: this note alone, as if it had never been packed
            row.phase, row.error, row.started_at, row.ended_at = "queued", None, None, None
            self._changed()
            alone = asyncio.ensure_future(
                self._run_source(run.source, run.kind, [(row, spec)], run.on_complete, run.version, pending)
            )
            pack.alone[run.source] = alone
            await asyncio.gather(alone, return_exceptions=True)  # an abort of this note ends it alone

    def _charge(
        self, pack: _Pack, usage: RunUsage, failed_calls: int, resolved: ResolvedModel | None, failed: bool
    ) -> None:
        """A pack's usage charged to its notes in proportion to their tokens: each note's row and
        usage line (a failed pack's line says `error`; the note's own rerun adds its own)."""
        weights = [estimate_tokens(run.specs[0].text) for run in pack.runs]
        inputs = shares(usage.input_tokens, weights)
        outputs = shares(usage.output_tokens, weights)
        requests = shares(usage.requests + failed_calls, weights)
        for i, run in enumerate(pack.runs):
            row = run.rows[0]
            part = RunUsage(input_tokens=inputs[i], output_tokens=outputs[i], requests=requests[i])
            if failed and row.phase not in ("done", "error", "aborted"):
                phase, row.phase = row.phase, "error"
                self._record_usage(row, part, 0, resolved)
                row.phase = phase
            else:
                self._record_usage(row, part, 0, resolved)

    async def _audit(
        self,
        findings: Findings,
        nodes: dict[str, Proposition],
        model: Model,
        cap: int | None,
        usage: RunUsage,
        rows: list[JobRow],
        shared: bool = False,
        offline: bool = False,
    ) -> Verdicts:
        """The audit of one job's (or one pack's) findings against `nodes`: exact links without the
        model, the auditor for the rest when there is something to judge. Call it holding the
        merge section. `offline`: the model is the offline one (its calls take `offline_lane`)."""
        if not findings.propositions or not (nodes or len(findings.propositions) > 1):
            return Verdicts(links=[])
        for row in rows:
            self._phase(row, "auditing")
        found = await self._audit_candidates(findings, nodes)
        links = [IdentityLink(finding=f, node=n) for f, n in found.exact.items()]
        open_ = [p for p in findings.propositions if p.id not in found.exact]
        if open_ and (nodes or found.undecided()):  # else nothing to judge
            deps = AuditDeps(nodes=nodes, sessions={s.id: s.title for s in self.graph.sources().values()})
            judge = Findings(propositions=open_, chains=[])
            async with self.permits, self._lane(offline):
                judged = await run_auditor(
                    build_auditor(model, max_tokens=cap),
                    auditor_prompt(judge, found.existing, nodes, found.batch, shared=shared),
                    deps,
                    usage,
                )
            links += judged.links  # an exact link, listed first, wins
        return Verdicts(links=links)

    async def _commit(
        self,
        row: JobRow,
        spec: JobSpec,
        findings: Findings,
        verdicts: Verdicts,
        graph: Callable[[], tuple[dict[str, Proposition], dict[str, Chain]]],
        pending: bool,
        replace: dict[str, str] | None,
    ) -> tuple[MergePlan, bool]:
        """Plan and commit one job's merge (nodes, chains, run line, coverage, simplification),
        then, for a version's last job, its swap (`_replace`). Call it holding the merge section.
        Returns the plan and whether the swap (if any) was written."""
        self._phase(row, "merging")
        at = self.clock()
        provenance = Provenance(source=row.source, job=row.job, messages=spec.messages)
        nodes, chains = graph()  # unchanged while the section is held
        # The store keeps the index of exactly its counted chains (carried forward by each
        # commit, which is the only writer of it and runs in this section).
        counted = self.graph.chain_index()
        reserved = self.graph.deleted()
        label = row.view()["label"]

        def plan_and_commit() -> MergePlan:
            # In the worker thread with the commit (issue 16: chain simplification held the loop
            # per merge late in a vault import). The section is held until it returns, so the
            # graph read above is still the one merged into.
            index = counted
            if pending:  # its own chains (graph_with: a superset) layered over, never copied in
                index = counted.over([c for cid, c in chains.items() if cid not in counted])
            plan = plan_merge(
                nodes, chains, findings, verdicts, provenance, at, reserved=reserved, index=index
            )
            if pending:  # drop only this version's own chains: the counted graph stays whole
                plan.dropped_chains = {cid for cid in plan.dropped_chains if cid not in counted}
            run = RunLine(
                source=row.source,
                job=row.job,
                label=label,
                addedNodes=plan.added_nodes,
                linkedNodes=plan.linked_nodes,
                addedChains=plan.added_chains,
                droppedChains=len(plan.dropped_chains),
                at=at,
                pending=True if pending else None,
            )
            coverage = [
                CoverageLine(source=row.source, message=key, fingerprint=fp, job=row.job, at=at)
                for key, fp in spec.coverage
            ]
            self.graph.commit_merge(plan, coverage, run)
            return plan

        # in a background thread (its fsyncs never stall the loop, its CPU work runs behind the
        # loop's), awaited whole: a commit never outlives its hold on the merge section
        plan = await awaited_whole(run_background(plan_and_commit))
        replaced = await self._replace(row.source, replace) if replace is not None else True
        await self._after_merge(row.id)
        return plan, replaced


class _Unpacked(Exception):
    """A pack that is not to run as one (its notes run alone)."""


def _complete(run: _Run, merged: bool) -> None:
    """A run's `on_complete(merged)` (a notes file's fingerprint stamp), contained."""
    if run.on_complete is None:
        return
    try:
        run.on_complete(merged)
    except Exception:
        log.exception("completing source %s failed", run.source)


def _row_stats(plan: MergePlan) -> dict[str, int]:
    """What a committed merge did, for its activity row (`JobStats`' camelCase keys)."""
    return {
        "addedNodes": plan.added_nodes,
        "linkedNodes": plan.linked_nodes,
        "addedChains": plan.added_chains,
        "droppedChains": len(plan.dropped_chains),
    }


def _honest(exc: Exception) -> str:
    """A short, true sentence about a failed job for the activity feed."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    gave_up = failure_in_text(text, kept=False)  # not the SDK's "Exceeded maximum output retries (3)"
    return learner_words(gave_up) if gave_up is not None else text[:300]
