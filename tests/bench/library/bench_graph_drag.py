"""Benchmark (issue 17, bad input: "no read blocks the server for more than 100 ms"): the first
`GET /api/graph` after a drag, at 10k and 100k propositions, and how long it holds the event loop.

Run: `.venv/bin/python -m tests.bench.library.bench_graph_drag [sizes]`. Figures go to docs/benchmarks.md.
A drag changes the positions, so the next read derives the view again (patched: only the dragged
row is serialised again, but the pass over every row is O(N)). For each form (`full` JSON and
`compact`) and each way of reading, `repeat` drags, each followed by one read while a probe
coroutine on the same loop ticks every 2 ms; printed: the read's wall ms, and the longest gap
between two ticks (the loop held):

- `on the loop`: `view_json()` / `compact_json()` called on the loop, what the route did before;
- `read_json`: what the route does now (the derivation in a worker thread).

Each way runs with the collector as CPython ships it, then with the server's heap policy
(`server/services/machine_room/heap.py`: the folds frozen, as after a settle), all in one process, with the
server's GIL switch interval (0.5 ms, `server/__main__.py`).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.__main__ import GIL_SWITCH_S
from server.services.library.graph import GraphService
from server.services.machine_room import heap
from server.store.library.graph import FileGraphStore
from tests.bench.library.bench_graph_read import write_graph
from tests.fakes import FakeChatStore


async def _probe(stop: asyncio.Event, gaps: list[float]) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0.002)
        now = time.perf_counter()
        gaps.append((now - last) * 1000)
        last = now


async def _drag_then_read(
    service: GraphService, ids: list[str], n: int, read: Callable[[], Any]
) -> tuple[float, float]:
    """One drag (not timed), then one read: (read ms, longest loop gap ms while it ran)."""
    service.put_positions({ids[n % len(ids)]: (float(n), float(-n))})
    stop, gaps = asyncio.Event(), []
    probe = asyncio.create_task(_probe(stop, gaps))
    await asyncio.sleep(0.01)
    gaps.clear()
    t0 = time.perf_counter()
    result = read()
    if asyncio.iscoroutine(result):
        await result
    took = (time.perf_counter() - t0) * 1000
    await asyncio.sleep(0.005)
    stop.set()
    await probe
    return took, max(gaps)


async def run(size: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="lh-drag-") as tmp:
        root = Path(tmp)
        write_graph(root, size)
        service = GraphService(FileGraphStore(root), FakeChatStore(), None)  # type: ignore[arg-type]
        ids = sorted(service.graph.nodes())[:: max(1, size // 50)]
        service.view_json(), service.compact_json()  # fold and derive once: later reads patch
        for policy in ("CPython defaults", "heap policy"):
            if policy == "heap policy":
                heap.install()  # freezes what lives now: the folds, the rows
            for form in ("full", "compact"):
                ways: dict[str, Callable[[], Any]] = {
                    "on the loop": service.view_json if form == "full" else service.compact_json,
                    "read_json": lambda f=form: service.read_json(f == "compact"),
                }
                for way, read in ways.items():
                    got = [await _drag_then_read(service, ids, n, read) for n in range(repeat)]
                    took = statistics.median(t for t, _ in got)
                    held = [g for _, g in got]
                    print(
                        f"  {size:>7,} {policy:<16} {form:<7} {way:<11}: read {took:7.1f} ms;"
                        f" loop held max {max(held):7.1f} ms, median {statistics.median(held):6.1f} ms"
                    )
            heap.uninstall()


def main() -> None:
    sys.setswitchinterval(GIL_SWITCH_S)  # as `python -m server` runs: the loop gets the GIL back sooner
    sizes = [int(a) for a in sys.argv[1:] if a.isdigit()] or [10_000, 100_000]
    print("first GET /api/graph after a drag (median of the reads; loop gaps probed every 2 ms)")
    for size in sizes:
        asyncio.run(run(size, 7 if size <= 10_000 else 5))


if __name__ == "__main__":
    main()
