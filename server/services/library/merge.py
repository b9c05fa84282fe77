"""The audit -> merge critical section (seed §6): an auditor judges a job's findings against the
graph as it stands, and the merge (nodes, chains, run line, coverage, simplification, and a
version's swap) lands before the next job's audit starts. Deletions take the same lock
(`GraphService.delete` through `MergeGate`), so a merge plans against the graph read inside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.library.auditor import AuditDeps, auditor_prompt, build_auditor, run_auditor
from server.core.clock import Clock
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
from server.core.events import EventBus
from server.core.fanout import FanOut, MergeLanded
from server.core.library.candidates import AuditCandidates, CandidateIndex, audit_candidates
from server.core.library.graph import MergePlan, completion, plan_merge, version_jobs
from server.core.library.simplify import restorable, simplify
from server.core.ports import ExtractionGraph
from server.services.library.embeddings import CandidateVectors, FindingVectors
from server.services.library.feed import JobRow, JobSpec, Phase
from server.services.machine_room.background import awaited_whole, run_background

log = logging.getLogger("lh.extraction")


class MergeSection:
    """The section every merge into the graph holds, and what runs inside it.

    Args:
        graph: the graph ledgers port (the extraction pipeline is its only writer).
        permits: the process-wide background model permits (the auditor's call takes one).
        offline_lane: held, inside a permit, by every call to the offline model.
        vectors: sentence embeddings for the auditor's candidates; None: lexical candidates only.
        fanout: `MergeLanded` is published (and awaited) after each committed merge or
            retirement, before `graph-changed`.
        events: the browser's bus (`graph-changed` after every committed write).
        clock: ISO timestamp source (`server.core.clock`).
        phase: sets an activity row's phase and tells the feed (`ExtractionService.set_phase`).

    Attributes:
        lock: the section itself (`ExtractionService.merge_section`, which `MergeGate` shares with
            deletions); hold it around `audit` and `commit`, `replace` alone for a run with no jobs.
    """

    def __init__(
        self,
        graph: ExtractionGraph,
        *,
        permits: asyncio.Semaphore,
        offline_lane: asyncio.Semaphore,
        vectors: CandidateVectors | None,
        fanout: FanOut,
        events: EventBus,
        clock: Clock,
        phase: Callable[[JobRow, Phase], None],
    ) -> None:
        self.lock = asyncio.Lock()
        self.embedding = asyncio.Semaphore(1)
        """Held by `prepare`'s embedding: one job's findings embed beside the section's work, not
        every waiting job's at once (2 cores; each run's buffers are memory)."""
        self.index = CandidateIndex()
        """The graph's nodes indexed for the auditor's candidates, synced before each ranking."""
        self.graph = graph
        self.permits = permits
        self.offline_lane = offline_lane
        self.vectors = vectors
        self.fanout = fanout
        self.events = events
        self.clock = clock
        self.phase = phase

    def view(
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

    async def prepare(self, findings: Findings) -> FindingVectors | None:
        """A job's findings embedded before it takes the merge section (issue 28 item 2: the
        embedding was ~40 % of a vault import's CPU and ran inside the section, so jobs waited on
        each other's), for `audit(prepared=...)`; in a worker thread, one job at a time
        (`embedding`). None without an embedder, an unavailable one, or no findings, and for a
        lone finding while the graph is empty (the audit ranks nothing then: the embedder is not
        loaded for it; should a node land meanwhile, the audit embeds the finding itself). Call it
        NOT holding the section: its result does not depend on the graph."""
        vectors = self.vectors
        if vectors is None or not findings.propositions:
            return None
        if len(findings.propositions) == 1 and not self.graph.nodes():
            return None
        async with self.embedding:
            return await run_background(vectors.embed_findings, findings.propositions)

    async def audit(
        self,
        findings: Findings,
        nodes: dict[str, Proposition],
        model: Model,
        cap: int | None,
        usage: RunUsage,
        rows: list[JobRow],
        shared: bool = False,
        offline: bool = False,
        prepared: FindingVectors | None = None,
    ) -> Verdicts:
        """The audit of one job's (or one pack's) findings against `nodes`: exact links without the
        model, the auditor for the rest when there is something to judge. Call it holding the
        merge section. `offline`: the model is the offline one (its calls take `offline_lane`).
        `prepared`: the findings' vectors from `prepare` (any finding missing is embedded here)."""
        if not findings.propositions or not (nodes or len(findings.propositions) > 1):
            return Verdicts(links=[])
        for row in rows:
            self.phase(row, "auditing")
        found = await self._candidates(findings, nodes, prepared)
        links = [IdentityLink(finding=f, node=n) for f, n in found.exact.items()]
        open_ = [p for p in findings.propositions if p.id not in found.exact]
        if open_ and (nodes or found.undecided()):  # else nothing to judge
            deps = AuditDeps(nodes=nodes, sessions={s.id: s.title for s in self.graph.sources().values()})
            judge = Findings(propositions=open_, chains=[])
            async with self.permits, self.lane(offline):
                judged = await run_auditor(
                    build_auditor(model, max_tokens=cap),
                    auditor_prompt(judge, found.existing, nodes, found.batch, shared=shared),
                    deps,
                    usage,
                )
            links += judged.links  # an exact link, listed first, wins
        return Verdicts(links=links)

    async def _candidates(
        self, findings: Findings, nodes: dict[str, Proposition], prepared: FindingVectors | None = None
    ) -> AuditCandidates:
        """Exact links and fused candidates (`audit_candidates`), computed in a worker thread with
        the node index's sync (issue 16: the ranking held the loop 10-50 ms per job late in a vault
        import); the findings' own vectors come `prepared` (`prepare`, before the section) when
        they can. The indexes (`self.index`, `CandidateVectors.index`) are kept across jobs and
        synced here to the graph as this job sees it (issue 28: only changed nodes are indexed
        again, no node is scanned per finding). The caller holds the merge section, so the graph
        read is the one merged into and one ranking runs at a time. An embedder that fails leaves
        the candidates lexical (`CandidateVectors`)."""
        vectors, index = self.vectors, self.index

        def rank() -> AuditCandidates:
            pair = vectors.vectors(findings.propositions, nodes, prepared) if vectors is not None else None
            fv, nv = pair if pair is not None else (None, None)
            return audit_candidates(findings.propositions, nodes, finding_vectors=fv, vectors=nv, index=index)

        return await run_background(rank)  # behind the event loop (issue 16)

    async def commit(
        self,
        row: JobRow,
        spec: JobSpec,
        findings: Findings,
        verdicts: Verdicts,
        graph: Callable[[], tuple[dict[str, Proposition], dict[str, Chain]]],
        pending: bool,
        replace: dict[str, str] | None,
        announce: bool = True,
    ) -> tuple[MergePlan, bool]:
        """Plan and commit one job's merge (nodes, chains, run line, coverage, simplification),
        then, for a version's last job, its swap (`_replace`). Call it holding the merge section.
        Returns the plan and whether the swap (if any) was written.

        announce: False leaves `after_merge` (the layout settle and view snapshot, then
            `graph-changed`) to the caller, who calls it once for several commits (a pack's
            members: the settle and snapshot were 30 % of a vault import's CPU, issue 28)."""
        self.phase(row, "merging")
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
        replaced = await self.replace(row.source, replace) if replace is not None else True
        if announce:
            await self.after_merge(row.id)
        return plan, replaced

    async def replace(self, source: str, version: dict[str, str]) -> bool:
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
                await self.after_merge(source)
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

    async def after_merge(self, label: str) -> None:
        """After a committed merge or retirement: `MergeLanded` (the layout settle, awaited: it
        computes in a worker thread, the loop stays free), then `graph-changed` (the write is
        committed whether or not a handler succeeded: each is contained)."""
        await self.fanout.publish_awaited(MergeLanded(label))
        self.events.emit("graph-changed")

    def lane(self, offline: bool) -> contextlib.AbstractAsyncContextManager[Any]:
        """`offline_lane` when the call goes to the offline model, else nothing to wait for."""
        return self.offline_lane if offline else contextlib.nullcontext()


def row_stats(plan: MergePlan) -> dict[str, int]:
    """What a committed merge did, for its activity row (`JobStats`' camelCase keys)."""
    return {
        "addedNodes": plan.added_nodes,
        "linkedNodes": plan.linked_nodes,
        "addedChains": plan.added_chains,
        "droppedChains": len(plan.dropped_chains),
    }
