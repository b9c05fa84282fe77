"""Small notes' runs packed into one extractor call (decision 0023): `Pack` (a pack's members) and
`run_pack`, the task `ExtractionService._pump` launches for a pack (one call, one audit, then each
note's own merge in the merge section; a note the pack failed re-runs alone), which charges the
pack's usage to its notes in proportion to their tokens."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from pydantic_ai.usage import RunUsage

from server.agent.library.extraction import build_pack_extractor, run_pack_extractor
from server.agent.machine_room.model_guard import model_failure_of
from server.core.contracts.graph import Findings, IdentityLink, Verdicts
from server.core.contracts.models import ResolvedModel
from server.core.library.packing import PackNote, pack_prompt, shares, split_pack
from server.core.tokens import estimate_tokens
from server.services.library.feed import JobRow, JobSpec, honest
from server.services.library.jobs import record_usage, run_source
from server.services.library.merge import row_stats
from server.services.library.runs import Run, RunHost

log = logging.getLogger("lh.extraction")


@dataclass
class Pack:
    """Small notes' runs sharing one extractor call (decision 0023): each keeps its own row, job
    id, provenance, coverage, run line, version swap and fingerprint."""

    runs: list[Run]
    pending: list[bool]
    aborted: set[str] = field(default_factory=set)
    """Members aborted while the pack runs: they merge nothing and re-run nothing."""
    alone: dict[str, asyncio.Future[None]] = field(default_factory=dict)
    """Members re-running alone after the pack failed (an abort cancels only that one)."""


class _Unpacked(Exception):
    """A pack that is not to run as one (its notes run alone)."""


async def run_pack(service: RunHost, pack: Pack) -> None:
    """A pack of small notes (decision 0023): one extractor call reads them all, each in its
    own `<note id>` section; one audit judges their propositions together; then each note
    merges on its own, in order (its job id, provenance, coverage, run line and, when it
    replaces an earlier version, its swap) and its `on_complete` stamps its fingerprint. A
    proposition the audit linked to one of an earlier member's lands on that member's node.
    If the pack fails before a note merged (the call, the submit, the audit), that note runs
    again alone (`jobs.run_source`), so only what failed re-runs; a note whose own merge failed
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
        resolved, model = await service.model_for()
        if resolved.offline:  # a 4,096-token context: each note has its own call
            raise _Unpacked("the offline model reads one note at a time")
        extractor = build_pack_extractor(
            model, notes=[n.source for n in notes], existing=service.graph.nodes()
        )
        async with service.permits:
            for run, row, _, _ in members:
                if run.source in pack.aborted:  # stopped while it waited: it is read by no call
                    continue
                row.started_at = service.clock()
                service.set_phase(row, "extracting")
            packed = await run_pack_extractor(extractor, pack_prompt(notes), usage)
        split = split_pack(packed, [n.source for n in notes])
        for run, row, _, _ in members:
            if run.source not in pack.aborted:
                service.set_phase(row, "waiting")
        # every member's findings embedded before the section (issue 28): jobs overlap there
        prepared = await service.merge.prepare(
            Findings(propositions=[p for n in notes for p in split[n.source].propositions], chains=[])
        )
        async with service.merge_section:
            live = [m for m in members if m[0].source not in pack.aborted]
            nodes = service.graph.nodes()
            combined = Findings(
                propositions=[p for m in live for p in split[m[0].source].propositions], chains=[]
            )
            verdicts = await service.merge.audit(
                combined, nodes, model, None, usage, [m[1] for m in live], shared=True, prepared=prepared
            )
            for _, row, _, _ in live:  # audited: each now waits for its own turn to merge
                if row.phase == "auditing":
                    service.set_phase(row, "waiting")
            owner = {p.id: m[0].source for m in live for p in split[m[0].source].propositions}
            landed: dict[str, str] = {}  # an earlier member's finding id -> its node id
            committed: list[str] = []  # members whose commit wrote: one settle for them all
            try:
                await _merge_members(service, live, split, verdicts, owner, landed, ended, committed)
            finally:
                if committed:  # the layout settle and view snapshot once per pack, not per member
                    await service.merge.after_merge(committed[-1])
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
        _charge(service, pack, usage, failed_calls, resolved, failure is not None)
    for run, row, spec, pending in members:
        if run.source in ended:
            continue
        if run.source in pack.aborted:
            row.phase, row.ended_at = "aborted", service.clock()
            _complete(run, False)
            continue
        # only what failed re-runs: this note alone, as if it had never been packed
        row.phase, row.error, row.started_at, row.ended_at = "queued", None, None, None
        service.feed_changed()
        alone = asyncio.ensure_future(
            run_source(service, run.source, run.kind, [(row, spec)], run.on_complete, run.version, pending)
        )
        pack.alone[run.source] = alone
        await asyncio.gather(alone, return_exceptions=True)  # an abort of this note ends it alone


async def _merge_members(
    service: RunHost,
    live: list[tuple[Run, JobRow, JobSpec, bool]],
    split: dict[str, Findings],
    verdicts: Verdicts,
    owner: dict[str, str],
    landed: dict[str, str],
    ended: set[str],
    committed: list[str],
) -> None:
    """Each live member's own merge, in order, in the merge section (held by the caller): its
    links (an earlier member's finding resolved to the node it landed on), then its commit
    without the settle (`committed` collects the row ids that wrote; the caller settles once).
    A member whose commit fails ends with its own error; the others go on."""
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
        _, graph = service.merge.view(run.source, run.version, pending)
        ended.add(run.source)
        try:
            plan, merged = await service.merge.commit(
                row, spec, findings, Verdicts(links=links), graph, pending, run.version, announce=False
            )
        except Exception as exc:  # this note's own merge failed: its error alone
            log.warning("merging packed note %s failed: %s", row.id, exc)
            row.phase, row.error = "error", honest(exc)
            merged = False
        else:
            committed.append(row.id)
            landed.update(
                (p.id, line.id) for p, line in zip(findings.propositions, plan.node_lines, strict=True)
            )
            row.stats = row_stats(plan)
            row.phase = "done"
        _complete(run, merged)


def _charge(
    service: RunHost,
    pack: Pack,
    usage: RunUsage,
    failed_calls: int,
    resolved: ResolvedModel | None,
    failed: bool,
) -> None:
    """A pack's usage charged to its notes in proportion to their tokens: each note's row and
    usage line (a failed pack's line says `error`; the note's own rerun adds its own). Each row
    says it was read by the pack's calls (`JobRow.pack_notes`, `pack_requests`) and shows its
    share of their tokens and cost; the calls' shares (whole numbers) sum to the pack's."""
    weights = [estimate_tokens(run.specs[0].text) for run in pack.runs]
    inputs = shares(usage.input_tokens, weights)
    outputs = shares(usage.output_tokens, weights)
    calls = usage.requests + failed_calls
    requests = shares(calls, weights)
    for i, run in enumerate(pack.runs):
        row = run.rows[0]
        part = RunUsage(input_tokens=inputs[i], output_tokens=outputs[i], requests=requests[i])
        share = (len(pack.runs), calls) if usage.requests else None  # no answer: tokens unknown
        if failed and row.phase not in ("done", "error", "aborted"):
            phase, row.phase = row.phase, "error"
            record_usage(service, row, part, 0, resolved, share)
            row.phase = phase
        else:
            record_usage(service, row, part, 0, resolved, share)


def _complete(run: Run, merged: bool) -> None:
    """A run's `on_complete(merged)` (a notes file's fingerprint stamp), contained."""
    if run.on_complete is None:
        return
    try:
        run.on_complete(merged)
    except Exception:
        log.exception("completing source %s failed", run.source)
