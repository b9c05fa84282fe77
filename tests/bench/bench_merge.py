"""Benchmark: one job's merge + incremental chain simplification at 1k, 10k and 100k chains.

Run: `.venv/bin/python -m tests.bench.bench_merge` (prints a table; figures go to docs/benchmarks.md).
Not part of the test suite: speed is measured here, never asserted.

The graph: N chains over N/2 propositions, grouped like extraction output: sources of 100
propositions whose chains (1-4 premises each, drawn from lower ids of the same source, so every
conclusion has ancestry to walk) stay inside the source, plus 5% cross-source chains. The job: 20
new propositions and 30 chains leaning on existing nodes of one source (a realistic extraction
job). Timed with the chain index built inside `simplify` (a pass over every chain) and with a
`ChainIndex` the caller keeps across merges (what stays local). Also timed: a full
(non-incremental) simplification pass over the whole graph, for the ratio.
"""

from __future__ import annotations

import random
import statistics
from functools import partial

from server.core.contracts.graph import (
    Chain,
    FindingChain,
    FindingProposition,
    Findings,
    NodeLine,
    Provenance,
    Verdicts,
)
from server.core.graph import ChainIndex, chain_id, fold_nodes, plan_merge, simplify
from tests.bench.common import timed


def build_graph(n_chains: int, seed: int = 7) -> tuple[dict, dict[str, Chain]]:
    rng = random.Random(seed)
    n_nodes = max(10, n_chains // 2)
    ids = [f"n_{i:016x}" for i in range(n_nodes)]
    prov = Provenance(source="src_bench", job="job_0")
    nodes = fold_nodes(NodeLine(id=i, name=i, statement=f"{i} holds.", provenance=prov, at="t0") for i in ids)
    chains: dict[str, Chain] = {}
    while len(chains) < n_chains:
        c = rng.randrange(5, n_nodes)
        base = c - c % 100
        if rng.random() < 0.05:  # a cross-source chain: premises from anywhere below
            premises = sorted({ids[rng.randrange(0, c)] for _ in range(rng.randint(1, 3))})
        else:
            premises = sorted(
                {ids[rng.randrange(base, c)] for _ in range(rng.randint(1, 4))}
                if c > base
                else {ids[rng.randrange(0, c)]}
            )
        cid = chain_id(premises, ids[c])
        chains.setdefault(
            cid,
            Chain(
                id=cid,
                premises=premises,
                conclusion=ids[c],
                sources=["src_bench"],
                createdAt=f"t{len(chains):08d}",
            ),
        )
    return nodes, chains


def job(nodes: dict, rng: random.Random) -> Findings:
    start = rng.randrange(0, max(1, len(nodes) - 100)) // 100 * 100
    existing = list(nodes)[start : start + 100]
    props = [FindingProposition(id=f"p{i}", name=f"New {i}", statement=f"New claim {i}.") for i in range(20)]
    chains = []
    for _ in range(30):
        conclusion = f"p{rng.randrange(20)}"
        premises = {rng.choice(existing) for _ in range(rng.randint(1, 3))}
        chains.append(FindingChain(premises=sorted(premises), conclusion=conclusion))
    return Findings(propositions=props, chains=chains)


def main() -> None:
    print(
        f"{'chains':>8} {'merge+simplify ms (median, min-max)':>38} {'with kept index ms':>26}"
        f" {'full simplify ms':>18} {'ratio':>7}"
    )
    for size in (1_000, 10_000, 100_000):
        nodes, chains = build_graph(size)
        rng = random.Random(size)
        findings = job(nodes, rng)
        prov = Provenance(source="src_job", job="job_1")
        merge = timed(partial(plan_merge, nodes, chains, findings, Verdicts(links=[]), prov, "t9"), 7)
        index = ChainIndex(chains.values())
        kept = timed(
            partial(plan_merge, nodes, chains, findings, Verdicts(links=[]), prov, "t9", index=index), 7
        )
        full = timed(partial(simplify, chains), 1 if size >= 100_000 else 3)
        med, kmed, fmed = statistics.median(merge), statistics.median(kept), statistics.median(full)
        print(
            f"{size:>8} {med:>22.2f} ({min(merge):.2f}-{max(merge):.2f})"
            f" {kmed:>14.2f} ({min(kept):.2f}-{max(kept):.2f}) {fmed:>18.1f} {fmed / med:>7.0f}x"
        )


if __name__ == "__main__":
    main()
