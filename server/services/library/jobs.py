"""A source's run, job by job (seed §6): each job's extractor call (inside a permit, and the
offline lane for the offline model), then its audit and merge in the merge section, the last job's
merge swapping in the source's new version; each ended job's usage on its row and in
`usage.jsonl`. `run_source` is the task `ExtractionService._pump` launches for a lone run."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pydantic_ai.usage import RunUsage

from server.agent.library.extraction import (
    build_extractor,
    digest,
    extractor_overhead_tokens,
    run_extractor,
    windowed_prompt,
)
from server.agent.library.window import Window
from server.agent.machine_room.model_guard import model_failure_of
from server.agent.machine_room.pricing import usage_cost
from server.core.contracts.graph import SourceKind
from server.core.contracts.models import ResolvedModel
from server.services.library.feed import JobRow, JobSpec, honest
from server.services.library.merge import row_stats
from server.services.library.runs import RunHost
from server.services.machine_room.offline_model import CONTEXT_TOKENS, TOKENS_PER_ESTIMATE

log = logging.getLogger("lh.extraction")

OFFLINE_MAX_TOKENS = 1024
"""The extractor's and auditor's answer cap on the offline model (tokens)."""


async def run_source(
    service: RunHost,
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
            merged_all = await _run_job(service, row, spec, kind, version, replace, pending) and merged_all
        if not jobs and version is not None:
            async with service.merge_section:
                merged_all = await service.merge.replace(source, version)
    except asyncio.CancelledError:
        merged_all = False
        for row, _ in jobs:
            if row.phase not in ("done", "error"):
                row.phase, row.ended_at = "aborted", service.clock()
        service.feed_changed()
        raise
    finally:
        if on_complete is not None:
            try:
                on_complete(merged_all)
            except Exception:
                log.exception("completing source %s failed", source)


async def _run_job(
    service: RunHost,
    row: JobRow,
    spec: JobSpec,
    kind: SourceKind,
    version: dict[str, str] | None = None,
    replace: dict[str, str] | None = None,
    pending: bool = False,
) -> bool:
    """One job. `replace`: after this merge, in the same section, the version replaces the
    source's earlier contribution (`MergeSection.replace`); its failure makes this return False.
    `pending`: the job's lines count only once its version completes; until then this run
    (and no other reader) sees them (`MergeLedger.graph_with`)."""
    usage = RunUsage()
    failed_calls = 0  # requests sent that failed (pydantic-ai counts only answered ones)
    resolved: ResolvedModel | None = None

    mine, graph = service.merge.view(row.source, version, pending)
    try:
        resolved, model = await service.model_for()
        cap = OFFLINE_MAX_TOKENS if resolved.offline else None
        nodes, chains = graph()
        # THE GRAPH SO FAR of a versioned run is its version's, never the replaced one's
        own = service.graph.contribution(mine()) if version is not None else (nodes, chains)
        window = offline_window() if resolved.offline else None
        extractor = build_extractor(model, kind=kind, existing=nodes, max_tokens=cap, window=window)
        prompt = windowed_prompt(spec.text, digest(*own, row.source), window)
        async with service.permits, service.merge.lane(resolved.offline):  # "queued" until a permit is free
            row.started_at = service.clock()
            service.set_phase(row, "extracting")
            findings = await run_extractor(extractor, prompt, usage)
        service.set_phase(row, "waiting")
        prepared = await service.merge.prepare(findings)  # embedded before the section (issue 28)
        async with service.merge_section:
            nodes, _ = graph()  # the graph as it stands now
            verdicts = await service.merge.audit(
                findings, nodes, model, cap, usage, [row], offline=resolved.offline, prepared=prepared
            )
            plan, replaced = await service.merge.commit(
                row, spec, findings, verdicts, graph, pending, replace
            )
        row.stats = row_stats(plan)
        row.phase = "done"
        return replaced
    except asyncio.CancelledError:
        row.phase = "aborted"
        raise
    except Exception as exc:
        log.warning("extraction job %s failed: %s", row.id, exc)
        row.phase, row.error = "error", honest(exc)
        failed = model_failure_of(exc)
        failed_calls = failed.attempts if failed is not None else 0
        return False
    finally:
        # requests that failed were still made: counted, with no tokens reported (a failed
        # job's usage is not "no model calls"; absence is not zero, trial finding 4)
        record_usage(service, row, usage, failed_calls, resolved)


def record_usage(
    service: RunHost,
    row: JobRow,
    usage: RunUsage,
    failed_calls: int,
    resolved: ResolvedModel | None,
    pack: tuple[int, int] | None = None,
) -> None:
    """An ended job's usage on its row and in `usage.jsonl` (a side channel: contained).

    `pack`: (notes, model calls) of the pack whose call read this note (decision 0023); `usage` is
    then the note's share of the pack's (`packs._charge`): its tokens are known whenever the pack
    made a call, even when its share of the calls rounds to 0 (issue 28 item 7: a packed note
    said "no model calls" beside its new propositions). None: the job ran alone."""
    row.ended_at = service.clock()
    row.pack_notes, row.pack_requests = pack if pack is not None else (0, 0)
    called = usage.requests or row.pack_requests
    row.input_tokens = usage.input_tokens if called else None
    row.output_tokens = usage.output_tokens if called else None
    row.requests = usage.requests + failed_calls
    row.cost_usd = usage_cost(usage, resolved) if resolved else None
    row.model = resolved.model if resolved else None
    try:
        service.graph.record_usage(  # on the loop: the run ends with its usage recorded
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
    service.feed_changed()


def offline_window() -> Window:
    """The offline model's window as the extractor's requests see it (`FitWindow`)."""
    return Window(CONTEXT_TOKENS, TOKENS_PER_ESTIMATE, OFFLINE_MAX_TOKENS, extractor_overhead_tokens())
