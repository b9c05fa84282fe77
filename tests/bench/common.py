"""Shared benchmark helpers."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from server.core.contracts.graph import FindingChain, FindingProposition, Findings, RunLine


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    """Wall times of `repeat` calls of `fn`, in milliseconds."""
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def extraction_job(node_ids: Iterable[str], rng: random.Random) -> Findings:
    """One realistic extraction job's findings: 20 new propositions p0..p19 and 30 chains, each
    concluding in one of them from 1-3 premises among 100 consecutive existing node ids (one
    source of the bench graphs, which come in sources of 100)."""
    ids = list(node_ids)
    start = rng.randrange(0, max(1, len(ids) - 100)) // 100 * 100
    existing = ids[start : start + 100]
    props = [FindingProposition(id=f"p{i}", name=f"New {i}", statement=f"New claim {i}.") for i in range(20)]
    chains = []
    for _ in range(30):
        conclusion = f"p{rng.randrange(20)}"
        premises = {rng.choice(existing) for _ in range(rng.randint(1, 3))}
        chains.append(FindingChain(premises=sorted(premises), conclusion=conclusion))
    return Findings(propositions=props, chains=chains)


def run_line(
    source: str,
    job: str,
    added_nodes: int,
    added_chains: int,
    dropped_chains: int = 0,
    *,
    label: str = "bench",
    at: str = "2026-11-30T00:00:00Z",
) -> RunLine:
    """The run line that commits a bench job: without it no line of the job counts (the graph
    store reads committed jobs only)."""
    return RunLine(
        source=source,
        job=job,
        label=label,
        addedNodes=added_nodes,
        linkedNodes=0,
        addedChains=added_chains,
        droppedChains=dropped_chains,
        at=at,
    )
