"""Benchmark: one job's merge + incremental chain simplification at 1k, 10k and 100k chains.

Run: `.venv/bin/python -m tests.bench.library.bench_merge` (prints a table; figures go to docs/benchmarks.md).
Not part of the test suite: speed is measured here, never asserted.

The graph: N chains over N/2 propositions, grouped like extraction output: sources of 100
propositions whose chains (1-4 premises each, drawn from lower ids of the same source, so every
conclusion has ancestry to walk) stay inside the source, plus 5% cross-source chains. The job: 20
new propositions and 30 chains leaning on existing nodes of one source (a realistic extraction
job). Timed with the chain index built inside `simplify` (a pass over every chain) and with a
`ChainIndex` the caller keeps across merges (what stays local). Also timed: a full
(non-incremental) simplification pass over the whole graph, for the ratio.

Through the store (`--store`, issue 17 item 6): the same graph written as ledgers to a
`FileGraphStore`; successive jobs merge the way `ExtractionService` does: `graph()` reads
(`nodes()`, `chains()`), then `plan_merge` with `store.chain_index()` (built lazily by the first
merge, then carried forward by `commit_merge`), then `commit_merge` (append, rewrite of
chains.jsonl when simplification dropped a chain, folds and index carried forward).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from server.core.contracts.graph import (
    Chain,
    ChainLine,
    NodeLine,
    Provenance,
    Verdicts,
)
from server.core.library.graph import chain_id, fold_nodes, plan_merge
from server.core.library.simplify import ChainIndex, simplify
from server.store.ledger import append_ledger
from server.store.library.graph import FileGraphStore
from tests.bench.common import extraction_job, run_line, timed


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


def main() -> None:
    print(
        f"{'chains':>8} {'merge+simplify ms (median, min-max)':>38} {'with kept index ms':>26}"
        f" {'full simplify ms':>18} {'ratio':>7}"
    )
    for size in (1_000, 10_000, 100_000):
        nodes, chains = build_graph(size)
        rng = random.Random(size)
        findings = extraction_job(nodes, rng)
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


def write_store(root: Path, nodes: dict, chains: dict[str, Chain]) -> FileGraphStore:
    prov = Provenance(source="src_bench", job="job_0")
    append_ledger(
        root / "nodes.jsonl",
        [
            NodeLine(id=n.id, name=n.name, statement=n.statement, provenance=prov, at="t0")
            for n in nodes.values()
        ],
    )
    append_ledger(
        root / "chains.jsonl",
        [
            ChainLine(id=c.id, premises=c.premises, conclusion=c.conclusion, provenance=prov, at=c.created_at)
            for c in chains.values()
        ],
    )
    append_ledger(root / "sessions.jsonl", [run_line("src_bench", "job_0", 0, 0, at="t9")])
    return FileGraphStore(root)


def store_merges(size: int, repeat: int = 7) -> dict[str, list[float]]:
    """ms per phase of `repeat + 1` successive merges through a FileGraphStore (the first builds
    the index: reported apart)."""
    nodes, chains = build_graph(size)
    rng = random.Random(size)
    out: dict[str, list[float]] = {"read": [], "plan": [], "commit": [], "first plan": [], "dropped": []}
    with tempfile.TemporaryDirectory() as tmp:
        store = write_store(Path(tmp), nodes, chains)
        store.nodes(), store.chains()  # the folds a running server holds
        for number in range(repeat + 1):
            t0 = time.perf_counter()
            nodes, chains = store.nodes(), store.chains()
            t1 = time.perf_counter()
            prov = Provenance(source="src_job", job=f"job_{number + 1}")
            findings = extraction_job(nodes, rng)
            t2 = time.perf_counter()
            plan = plan_merge(
                nodes, chains, findings, Verdicts(links=[]), prov, "t9", index=store.chain_index()
            )
            t3 = time.perf_counter()
            run = run_line(
                "src_bench", prov.job, plan.added_nodes, plan.added_chains, len(plan.dropped_chains), at="t9"
            )
            store.commit_merge(plan, [], run)
            t4 = time.perf_counter()
            out["first plan" if number == 0 else "plan"].append((t3 - t2) * 1000)
            if number:
                out["read"].append((t1 - t0) * 1000)
                out["commit"].append((t4 - t3) * 1000)
                out["dropped"].append(len(plan.dropped_chains))
    return out


def main_store() -> None:
    print(
        f"{'chains':>8} {'first merge (builds index) ms':>30} {'merge+simplify, kept index ms':>34}"
        f" {'graph() reads ms':>18} {'commit ms':>18} {'dropped':>8}"
    )
    for size in (1_000, 10_000, 100_000):
        r = store_merges(size)
        plan, read, commit = r["plan"], r["read"], r["commit"]
        print(
            f"{size:>8} {r['first plan'][0]:>30.1f}"
            f" {statistics.median(plan):>20.2f} ({min(plan):.2f}-{max(plan):.2f})"
            f" {statistics.median(read):>18.1f} {statistics.median(commit):>10.1f}"
            f" ({min(commit):.0f}-{max(commit):.0f})"
            f" {sum(r['dropped']):>8}"
        )


if __name__ == "__main__":
    main_store() if "--store" in sys.argv else main()
