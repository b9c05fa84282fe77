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
import hashlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.extraction import (
    AuditDeps,
    Door,
    auditor_prompt,
    build_auditor,
    build_extractor,
    digest,
    extractor_prompt,
    run_auditor,
    run_extractor,
)
from server.agent.pricing import usage_cost
from server.core.candidates import AuditCandidates, audit_candidates
from server.core.contracts.graph import (
    Chain,
    CoverageLine,
    Findings,
    IdentityLink,
    Proposition,
    Provenance,
    RunLine,
    Verdicts,
)
from server.core.contracts.models import ResolvedModel
from server.core.events import EventBus
from server.core.graph import completion, plan_merge, restorable, simplify, version_jobs
from server.core.ports import Embedder, GraphStore
from server.services.chats import utc_now
from server.services.embeddings import CandidateVectors

log = logging.getLogger("lh.extraction")

BACKGROUND_PERMITS = 3
OFFLINE_MAX_TOKENS = 1024
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
    kind: Literal["chat", "notes"]
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
    queued_at: str = ""
    started_at: str | None = None
    """When the job got a model-call permit and began extracting (None while queued)."""
    ended_at: str | None = None
    stats: dict[str, int] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
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
            },
            "queuedAt": self.queued_at,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
            "stats": self.stats,
        }


ModelProvider = Callable[[], "asyncio.Future[tuple[ResolvedModel, Model]] | Any"]


class ExtractionService:
    """Runs extraction jobs against the graph store.

    Args:
        graph: the graph ledgers port (this service is its only writer).
        model_for: async callable returning (resolved, model) for background work (the cheap slot).
        clock: ISO timestamp source.
        embedder: sentence embeddings for the auditor's candidates (fused with the lexical
            ranks); None: lexical candidates only.
    """

    def __init__(
        self,
        graph: GraphStore,
        model_for: Callable[[], Any],
        clock: Callable[[], str] = utc_now,
        events: EventBus | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.graph = graph
        self.vectors = CandidateVectors(embedder) if embedder is not None else None
        self.events = events if events is not None else EventBus()
        """`activity-changed` on every row change, `graph-changed` after every committed write."""
        self.model_for = model_for
        self.clock = clock
        self.permits = asyncio.Semaphore(BACKGROUND_PERMITS)
        self.merge_section = asyncio.Lock()
        self.rows: dict[str, JobRow] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.listeners: list[Callable[[], None]] = []
        self.after_merge: Callable[[], object] | None = None
        """Side channel after each merge (the layout settle); contained, never fails the job."""

    # -- the activity feed ----------------------------------------------------------------------
    def activity(self) -> list[dict[str, Any]]:
        """Every job row, newest first."""
        return [row.view() for row in sorted(self.rows.values(), key=lambda r: r.queued_at, reverse=True)]

    def running(self, source: str) -> bool:
        task = self.tasks.get(source)
        return task is not None and not task.done()

    def abort(self, source: str) -> bool:
        """Abort a source's run (source-wide): the current job stops, later ones never start."""
        task = self.tasks.get(source)
        if task is None or task.done():
            return False
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
        kind: Literal["chat", "notes"],
        label: str,
        door: Door,
        jobs: list[JobSpec],
        on_complete: Callable[[bool], None] | None = None,
        version: dict[str, str] | None = None,
    ) -> bool:
        """Start a source's run unless one is running (single-flight). Returns whether it started.

        `on_complete(all_merged)` runs after the last job (e.g. to stamp a notes file's fingerprint).
        `version` (notes): every (coverage key -> fingerprint) of the source's new content. The
        extractor's THE GRAPH SO FAR is then what this version merged so far, and once every job
        merged, the source's jobs that merged no part of it are retired (so `jobs` may be empty:
        the version merged in earlier runs and only its completion is left). When the source has
        such jobs (the run replaces something), its jobs merge pending: they count only from the
        version line that completes the version, never beside the old one."""
        if self.running(source) or (not jobs and version is None):
            return False
        pending = version is not None and bool(
            self.graph.contributors(source) - version_jobs(self.graph.coverage(source), version)
        )
        rows = []
        run = uuid.uuid4().hex[:12]  # a run's own nonce: ids minted by two runs never collide
        for index, spec in enumerate(jobs, start=1):
            fingerprint = hashlib.sha256(spec.text.encode("utf-8")).hexdigest()[:12]
            row = JobRow(
                id=f"job_{source}_{fingerprint}_{index}",
                job=f"job_{source}_{fingerprint}_{index}_{run}",
                source=source,
                kind=kind,
                label=label,
                index=index,
                total=len(jobs),
                queued_at=self.clock(),
            )
            self.rows[row.id] = row
            rows.append(row)
        self._changed()
        self.tasks[source] = asyncio.get_running_loop().create_task(
            self._run_source(source, door, list(zip(rows, jobs, strict=True)), on_complete, version, pending),
            name=f"extraction {source}",
        )
        return True

    async def wait(self, source: str) -> None:
        """Wait for a source's run to finish (tests, shutdown)."""
        task = self.tasks.get(source)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def shutdown(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    async def _run_source(
        self,
        source: str,
        door: Door,
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
                merged_all = await self._run_job(row, spec, door, version, replace, pending) and merged_all
            if not jobs and version is not None:
                async with self.merge_section:
                    merged_all = self._replace(source, version)
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

    def _replace(self, source: str, version: dict[str, str]) -> bool:
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
                self._after_merge(source)
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

    def _after_merge(self, label: str) -> None:
        """After a committed merge or retirement: the layout settle, then `graph-changed` (the
        write is committed whether or not the settle succeeded)."""
        if self.after_merge is not None:
            try:
                self.after_merge()
            except Exception:
                log.exception("after-merge side channel failed for %s", label)
        self.events.emit("graph-changed")

    async def _audit_candidates(self, findings: Findings, nodes: dict[str, Proposition]) -> AuditCandidates:
        """Exact links and fused candidates (`audit_candidates`); the embedding runs off the loop.
        An embedder that fails leaves the candidates lexical (`CandidateVectors`)."""
        pair = None
        if self.vectors is not None:
            pair = await asyncio.to_thread(self.vectors.vectors, findings.propositions, nodes)
        fv, nv = pair if pair is not None else (None, None)
        return audit_candidates(findings.propositions, nodes, finding_vectors=fv, node_vectors=nv)

    def _phase(self, row: JobRow, phase: Phase) -> None:
        row.phase = phase
        self._changed()

    async def _run_job(
        self,
        row: JobRow,
        spec: JobSpec,
        door: Door,
        version: dict[str, str] | None = None,
        replace: dict[str, str] | None = None,
        pending: bool = False,
    ) -> bool:
        """One job. `replace`: after this merge, in the same section, the version replaces the
        source's earlier contribution (`_replace`); its failure makes this return False.
        `pending`: the job's lines count only once its version completes; until then this run
        (and no other reader) sees them (`GraphStore.graph_with`)."""
        usage = RunUsage()
        resolved: ResolvedModel | None = None

        def mine() -> set[str]:
            """The version's jobs this run stands on: a pending run its own pending ones too."""
            if version is None:
                return set()
            jobs = version_jobs(self.graph.coverage(row.source), version)
            return jobs if pending else jobs - self.graph.pending()

        def graph() -> tuple[dict[str, Proposition], dict[str, Chain]]:
            """The graph as this run sees it: the counted graph, plus its version's pending jobs."""
            return self.graph.graph_with(mine()) if pending else (self.graph.nodes(), self.graph.chains())

        try:
            resolved, model = await self.model_for()
            cap = OFFLINE_MAX_TOKENS if resolved.offline else None
            nodes, chains = graph()
            # THE GRAPH SO FAR of a versioned run is its version's, never the replaced one's
            own = self.graph.contribution(mine()) if version is not None else (nodes, chains)
            extractor = build_extractor(model, door=door, existing=nodes, max_tokens=cap)
            prompt = extractor_prompt(spec.text, digest(*own, row.source))
            async with self.permits:  # "queued" until a permit is free
                row.started_at = self.clock()
                self._phase(row, "extracting")
                findings = await run_extractor(extractor, prompt, usage)
            self._phase(row, "waiting")
            async with self.merge_section:
                nodes, chains = graph()  # the graph as it stands now
                verdicts = Verdicts(links=[])
                if findings.propositions and (nodes or len(findings.propositions) > 1):
                    self._phase(row, "auditing")
                    found = await self._audit_candidates(findings, nodes)
                    links = [IdentityLink(finding=f, node=n) for f, n in found.exact.items()]
                    open_ = [p for p in findings.propositions if p.id not in found.exact]
                    if open_ and (nodes or found.undecided()):  # else nothing to judge
                        deps = AuditDeps(
                            nodes=nodes, sessions={s.id: s.title for s in self.graph.sources().values()}
                        )
                        judge = Findings(propositions=open_, chains=[])
                        async with self.permits:
                            judged = await run_auditor(
                                build_auditor(model, max_tokens=cap),
                                auditor_prompt(judge, found.existing, nodes, found.batch),
                                deps,
                                usage,
                            )
                        links += judged.links  # an exact link, listed first, wins
                    verdicts = Verdicts(links=links)
                self._phase(row, "merging")
                at = self.clock()
                provenance = Provenance(source=row.source, job=row.job, messages=spec.messages)
                nodes, chains = graph()  # unchanged while the section is held
                plan = plan_merge(
                    nodes, chains, findings, verdicts, provenance, at, reserved=self.graph.deleted()
                )
                if pending:  # drop only this version's own chains: the counted graph stays whole
                    plan.dropped_chains -= set(self.graph.chains())
                run = RunLine(
                    source=row.source,
                    job=row.job,
                    label=row.view()["label"],
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
                replaced = self._replace(row.source, replace) if replace is not None else True
                self._after_merge(row.id)
            row.stats = {
                "addedNodes": plan.added_nodes,
                "linkedNodes": plan.linked_nodes,
                "addedChains": plan.added_chains,
                "droppedChains": len(plan.dropped_chains),
            }
            row.phase = "done"
            return replaced
        except asyncio.CancelledError:
            row.phase = "aborted"
            raise
        except Exception as exc:
            log.warning("extraction job %s failed: %s", row.id, exc)
            row.phase, row.error = "error", _honest(exc)
            return False
        finally:
            row.ended_at = self.clock()
            row.input_tokens = usage.input_tokens if usage.requests else None
            row.output_tokens = usage.output_tokens if usage.requests else None
            row.requests = usage.requests
            row.cost_usd = usage_cost(usage, resolved) if resolved else None
            try:
                self.graph.record_usage(
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


def _honest(exc: Exception) -> str:
    """A short, true sentence about a failed job for the activity feed."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "exceeded maximum retries" in text or "retries" in text.lower():
        return f"the model could not produce a valid submit ({text})"
    return text[:300]
