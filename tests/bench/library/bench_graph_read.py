"""Benchmark: `GET /api/graph`'s work (fold the ledgers + derive the view) at 1k, 10k and 100k
propositions, against a bare parse of the same ledgers (orjson per line).

Run: `.venv/bin/python -m tests.bench.library.bench_graph_read` (`--compact [sizes]`: the wire,
issue 17 item 5: body sizes of the full and compact view and the first read after a merge in each
form). Figures go to docs/benchmarks.md.
The graph: N propositions in sources of 100 and N chains (1-3 premises within the source).
Cold: a fresh store folds the ledgers; warm: the store reuses its folds (the ledgers did not change),
so only the view is derived.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from server.core.contracts.graph import (
    ChainLine,
    NodeLine,
    Provenance,
    Verdicts,
)
from server.core.library.graph import chain_id, plan_merge
from server.core.library.view_derive import derive_view
from server.services.library.graph import GraphService
from server.store.ledger import append_ledger
from server.store.library.graph import FileGraphStore
from tests.bench.common import extraction_job, run_line, timed
from tests.fakes import FakeChatStore


def write_graph(root: Path, size: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    nodes, chains = [], []
    for i in range(size):
        prov = Provenance(source=f"src_{i // 100:016x}", job="job_0")
        nodes.append(
            NodeLine(
                id=f"n_{i:016x}",
                name=f"Proposition {i}",
                statement=f"Statement number {i} holds.",
                provenance=prov,
                at="2026-11-30T00:00:00Z",
            )
        )
    for _ in range(size):
        c = rng.randrange(1, size)
        base = c - c % 100
        premises = sorted(
            {
                f"n_{rng.randrange(base, c) if c > base else rng.randrange(0, c):016x}"
                for _ in range(rng.randint(1, 3))
            }
        )
        conclusion = f"n_{c:016x}"
        chains.append(
            ChainLine(
                id=chain_id(premises, conclusion),
                premises=premises,
                conclusion=conclusion,
                provenance=Provenance(source=f"src_{c // 100:016x}", job="job_0"),
                at="2026-11-30T00:00:00Z",
            )
        )
    append_ledger(root / "nodes.jsonl", nodes)
    append_ledger(root / "chains.jsonl", chains)
    # the commit point: without a run line no line of job_0 counts (the view would be empty)
    append_ledger(root / "sessions.jsonl", [run_line("src_bench", "job_0", size, size)])


def bare_parse(root: Path) -> int:
    count = 0
    for name in ("nodes.jsonl", "chains.jsonl"):
        for line in (root / name).read_bytes().split(b"\n"):
            if line:
                orjson.loads(line)
                count += 1
    return count


def snapshot(store: FileGraphStore) -> dict:
    return derive_view(store.nodes(), store.chains(), store.positions(), {})


def merge_one(store: FileGraphStore, number: int) -> None:
    """Commit one extraction job (20 propositions, 30 chains onto one source's nodes) as
    `ExtractionService` does (plan with the store's kept chain index)."""
    rng = random.Random(number)
    nodes = store.nodes()
    prov = Provenance(source="src_job", job=f"job_m{number}")
    plan = plan_merge(
        nodes,
        store.chains(),
        extraction_job(nodes, rng),
        Verdicts(links=[]),
        prov,
        "2026-12-03T00:00:00Z",
        index=store.chain_index(),
    )
    run = run_line(
        "src_job",
        prov.job,
        plan.added_nodes,
        plan.added_chains,
        len(plan.dropped_chains),
        label="merge",
        at="2026-12-03T00:00:00Z",
    )
    store.commit_merge(plan, [], run)


def first_read_after_merges(root: Path, repeat: int) -> tuple[list[float], list[float]]:
    """ms of the first `view_json()` after each of `repeat` merges, with the last derived rows
    patched, and with them forgotten (a full derivation); the store is the merging one."""
    store = FileGraphStore(root)
    service = GraphService(store, FakeChatStore(), None)  # type: ignore[arg-type]
    service._snapshot(store.nodes(), store.chains(), {})  # what the last settle left
    patched: list[float] = []
    full: list[float] = []
    for number in range(2 * repeat):
        merge_one(store, number)
        if number % 2:
            service._rows = None
        t0 = time.perf_counter()
        service.view_json()
        (full if number % 2 else patched).append((time.perf_counter() - t0) * 1000)
    return patched, full


def main() -> None:
    print(
        f"{'propositions':>12} {'cold snapshot ms (median, min-max)':>36} {'warm ms':>8} "
        f"{'cached GET':>10} {'bare parse ms':>14} {'cold/bare':>9} "
        f"{'cold GET ms':>11} {'/bare':>8} {'MB':>6} {'1st GET after merge: patched / full ms':>40}"
    )
    for size in (1_000, 10_000, 100_000):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_graph(root, size)
            repeat = 3 if size >= 100_000 else 7
            snap = timed(lambda r=root: snapshot(FileGraphStore(r)), repeat)  # a fresh store: no cache
            store = FileGraphStore(root)
            snapshot(store)
            warm = timed(lambda s=store: snapshot(s), repeat)  # ledgers unchanged: folds reused
            service = GraphService(store, FakeChatStore(), None)  # type: ignore[arg-type]
            service.view_json()
            cached = timed(service.view_json, repeat)  # what GET /api/graph does while nothing changed
            bare = timed(lambda r=root: bare_parse(r), repeat)
            # what a settle leaves behind after a merge: the snapshot a cold start serves
            service._snapshot(store.nodes(), store.chains(), {})
            cold_get = timed(
                lambda r=root: GraphService(FileGraphStore(r), FakeChatStore(), None).view_json(),  # type: ignore[arg-type]
                repeat,
            )
            patched, full = first_read_after_merges(root, repeat)
            med, bmed, gmed = statistics.median(snap), statistics.median(bare), statistics.median(cold_get)
            print(
                f"{size:>12} {med:>22.1f} ({min(snap):.1f}-{max(snap):.1f}) {statistics.median(warm):>8.1f} "
                f"{statistics.median(cached):>10.2f} {bmed:>14.1f} {med / bmed:>8.1f}x"
                f" {gmed:>10.1f} {gmed / bmed:>7.2f}x {len(service.view_json()) / 1e6:>6.1f}"
                f" {statistics.median(patched):>15.1f} ({min(patched):.0f}-{max(patched):.0f})"
                f" / {statistics.median(full):.1f} ({min(full):.0f}-{max(full):.0f})"
            )


def place_all(store: FileGraphStore, seed: int = 5) -> None:
    """Give every node and chain a position, as the settle does in a real graph (the view rows
    carry them: bodies without them under-state the wire)."""
    rng = random.Random(seed)
    ids = [*store.nodes(), *store.chains()]
    store.save_positions({i: (rng.uniform(-5000, 5000), rng.uniform(-5000, 5000)) for i in ids})


def compact_reads(root: Path, repeat: int) -> dict[str, Any]:
    """Issue 17 item 5, the wire: body sizes of the full and the compact view, and what the
    first read after each of `repeat` merges costs (ms) and carries (bytes):

    - `json_patched`: `view_json()` (the full JSON, rows patched), what the canvas read before;
    - `since_unsettled`: `compact_json(since)` before any settle derived it (it derives, patching
      the compact rows, then cuts the delta): the worst case for the canvas;
    - `since_settled`: the same after the settle derived the view (`_snapshot`): what the canvas
      pays, since `graph-changed` is emitted after the settle;
    - `settle_derive`: the settle's derivation of both forms and their snapshots (worker thread).
    """
    store = FileGraphStore(root)
    place_all(store)
    service = GraphService(store, FakeChatStore(), None)  # type: ignore[arg-type]
    service._snapshot(store.nodes(), store.chains(), {})  # what the last settle left
    out: dict[str, Any] = {
        "json_bytes": len(service.view_json()),
        "compact_bytes": len(service.compact_json()),
        "cold_compact": timed(
            lambda: GraphService(FileGraphStore(root), FakeChatStore(), None).compact_json(),  # type: ignore[arg-type]
            repeat,
        ),
    }
    for name in ("json_patched", "since_unsettled", "since_settled", "settle_derive", "delta_bytes"):
        out[name] = []
        out[name + "_cpu"] = []
    for number in range(2 * repeat):
        held = service._compact.version if service._compact else None
        merge_one(store, 1000 + number)
        if number % 2 == 0:  # a read before the settle: each form derives on the read
            t0, c0 = time.perf_counter(), time.process_time()
            service.view_json()
            out["json_patched"].append((time.perf_counter() - t0) * 1000)
            out["json_patched_cpu"].append((time.process_time() - c0) * 1000)
            t0, c0 = time.perf_counter(), time.process_time()
            body = service.compact_json(held)
            out["since_unsettled"].append((time.perf_counter() - t0) * 1000)
            out["since_unsettled_cpu"].append((time.process_time() - c0) * 1000)
        else:  # the settle derived both, then `graph-changed`: the canvas's read
            t0, c0 = time.perf_counter(), time.process_time()
            service._snapshot(store.nodes(), store.chains(), {})
            out["settle_derive"].append((time.perf_counter() - t0) * 1000)
            out["settle_derive_cpu"].append((time.process_time() - c0) * 1000)
            t0, c0 = time.perf_counter(), time.process_time()
            body = service.compact_json(held)
            out["since_settled"].append((time.perf_counter() - t0) * 1000)
            out["since_settled_cpu"].append((time.process_time() - c0) * 1000)
        assert orjson.loads(body)["full"] is False
        out["delta_bytes"].append(len(body))
    return out


def compact_main() -> None:
    def fig(values: list[float]) -> str:
        return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"

    sizes = [int(a) for a in sys.argv[1:] if a.isdigit()] or [1_000, 10_000, 100_000]
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_graph(root, size)
            figures = compact_reads(root, 3 if size >= 100_000 else 7)
            print(
                f"{size:>7} full JSON {figures['json_bytes'] / 1e6:.1f} MB, compact "
                f"{figures['compact_bytes'] / 1e6:.1f} MB "
                f"({figures['json_bytes'] / figures['compact_bytes']:.1f}x smaller); "
                f"delta after a merge {statistics.median(figures['delta_bytes']) / 1e3:.1f} kB\n"
                f"        cold compact GET {fig(figures['cold_compact'])} ms; 1st read after a merge: "
                f"full JSON patched {fig(figures['json_patched'])} ms, compact since (unsettled) "
                f"{fig(figures['since_unsettled'])} ms, compact since (settled) "
                f"{fig(figures['since_settled'])} ms; settle's derivation of both forms "
                f"{fig(figures['settle_derive'])} ms\n        CPU ms (process_time): full JSON patched "
                f"{fig(figures['json_patched_cpu'])}, compact since (unsettled) "
                f"{fig(figures['since_unsettled_cpu'])}, compact since (settled) "
                f"{fig(figures['since_settled_cpu'])}, settle's derivation "
                f"{fig(figures['settle_derive_cpu'])}",
                flush=True,
            )


if __name__ == "__main__":
    compact_main() if "--compact" in sys.argv[1:] else main()
