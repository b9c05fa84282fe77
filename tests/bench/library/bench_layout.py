"""Benchmark: the layout settle at scale, and whether sessions read as regions (issues 16, 17).

Run: `.venv/bin/python -m tests.bench.library.bench_layout` (prints a table; figures go to
docs/benchmarks.md). Not part of the test suite: speed is measured here, never asserted (the memory
bound and the region targets are asserted in tests/unit/library/test_layout.py).

The graph (`tests/synthetic_layout.py`): propositions in birth sessions of lognormal sizes (one per
~33 propositions), ~0.6 chains per proposition (each an implication node with 1-2 premises), 10 %
of them reaching a nearby session. Cases:

- 1,000 new propositions (40 new sessions, 100 links into the old graph) placed into 10,000 and
  into 100,000 existing ones; the existing layout is built with 5 force rounds (its quality does
  not change the cost of placing new nodes);
- 10,000 propositions with no saved positions placed at once;
- the region metrics of the 10,000 placed at once, and after 1,000 more;
- folders (issue 17 item 2): a synthetic vault of 30 folders × 40 notes (~2.3 propositions per
  note) placed at once, then 5 folders × 40 notes more: the same metrics over folders (the share
  of notes' nodes whose nearest folder centroid is their own folder's; folder-hull overlap) beside
  the sessions' (files').

Time is measured without tracemalloc (best of `--repeat`), the peak Python heap in a separate
traced run (tracemalloc, numpy arrays included).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from server.core.library.layout import settle
from server.core.library.layout_metrics import region_metrics
from tests.synthetic_layout import SyntheticGraph, synthetic_graph, synthetic_vault


def measure(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """(best wall time in s, peak traced heap in MiB, the result)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    return best, peak, result


def grown(
    base: SyntheticGraph, extra: int, seed: int
) -> tuple[list[str], list[tuple[str, str]], dict[str, str]]:
    more = synthetic_graph(extra, max(1, extra // 25), seed=seed, prefix="n")
    links = base.links + more.links + [(base.ids[i * 7], more.ids[i]) for i in range(min(100, extra))]
    return base.ids + more.ids, links, {**base.groups, **more.groups}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    rows: list[tuple[str, int, int, float, float]] = []
    for existing_n in (10_000, 100_000):
        base = synthetic_graph(existing_n, existing_n // 33, seed=11)
        placed = settle({}, base.ids, base.links, groups=base.groups, iterations=5)
        ids, links, groups = grown(base, 1_000, seed=12)
        new = len(ids) - len(base.ids)
        secs, peak, _ = measure(lambda: settle(placed, ids, links, groups=groups), args.repeat)  # noqa: B023
        rows.append((f"1,000 new props into {existing_n:,}", len(placed), new, secs, peak))
    g = synthetic_graph(10_000, 300, seed=7)
    secs, peak, at_once = measure(lambda: settle({}, g.ids, g.links, groups=g.groups), args.repeat)
    rows.append(("10,000 props unpositioned at once", 0, len(g.ids), secs, peak))
    print(f"{'case':36} {'placed nodes':>12} {'new nodes':>10} {'time s':>8} {'peak MiB':>9}")
    for name, old, new, secs, peak in rows:
        print(f"{name:36} {old:>12,} {new:>10,} {secs:>8.2f} {peak:>9.1f}")
    ids, links, groups = grown(g, 1_000, seed=8)
    after = settle(at_once, ids, links, groups=groups)
    print()
    print(
        f"{'regions (synthetic)':36} {'sessions':>8} {'pad':>4} {'own-centroid share':>19}"
        f" {'hull overlap':>13}"
    )
    for label, positions, groups_of in (
        ("10k at once", at_once, g.groups),
        ("10k + 1k later", after, groups),
    ):
        for pad in (0.0, 20.0):
            m = region_metrics(positions, groups_of, pad=pad)
            print(f"{label:36} {m.sessions:>8} {pad:>4.0f} {m.own_share:>19.3f} {m.overlap:>13.4f}")
    vault, folders = synthetic_vault(30, 40, seed=7)
    secs, _, placed = measure(
        lambda: settle({}, vault.ids, vault.links, groups=vault.groups, folders=folders), args.repeat
    )
    more, more_folders = synthetic_vault(5, 40, seed=9, prefix="n")
    all_groups, all_folders = {**vault.groups, **more.groups}, {**folders, **more_folders}
    grown_vault = settle(
        placed, vault.ids + more.ids, vault.links + more.links, groups=all_groups, folders=all_folders
    )
    print()
    print(f"vault 30 folders x 40 notes, {len(vault.ids):,} nodes placed at once in {secs:.2f} s")
    print(
        f"{'regions (synthetic vault)':36} {'level':>8} {'groups':>7} {'pad':>4} {'own-centroid share':>19}"
        f" {'hull overlap':>13}"
    )
    for label, positions, groups_of, folders_of in (
        ("30x40 at once", placed, vault.groups, folders),
        ("30x40 + 5x40 later", grown_vault, all_groups, all_folders),
    ):
        for pad in (0.0, 20.0):
            for level, by in (
                ("folder", {n: folders_of[s] for n, s in groups_of.items()}),
                ("file", groups_of),
            ):
                m = region_metrics(positions, by, pad=pad)
                print(
                    f"{label:36} {level:>8} {m.sessions:>7} {pad:>4.0f} {m.own_share:>19.3f}"
                    f" {m.overlap:>13.4f}"
                )


if __name__ == "__main__":
    main()
