"""The server process's garbage-collector policy (issue 16 health p99; issue 15 turn overhead;
issue 17 reads at 100k).

Why: CPython's cyclic collector traverses every tracked object of the generations it collects,
with the GIL held. A server holding a 10k-proposition graph (the store's folds, the view's row
memos, the chat records' caches) has millions of them, and each generation-2 collection froze the
whole process: 44 of them during a 1,200-note import, up to 260 ms each, 9.0 s in all (measured
with `gc.callbacks` by `tests/bench/loop_probe.py`; they were the slow 1 % of `/api/health`,
docs/benchmarks.md, issue 16). Generation 0, at its default threshold of 700 allocations, ran 65
times in 31 turns of a long lesson (0.87 ms of CPU a turn, issue 15).

Policy (installed by `python -m server`, `install()`; every call below is a no-op until then, so
a test process that builds services in-process keeps Python's defaults):

- `install()`: generation-0 threshold `GEN0_THRESHOLD` (allocations net of frees; most of a
  turn's garbage dies by reference counting before a collection looks at it), and what start-up
  built is frozen (`gc.freeze`: moved to the permanent generation, which no collection traverses).
- `survivors_settled()`: after a long-lived structure was built (the layout settle after each
  merge derives the view and keeps its memos): collect the young generations, then freeze what
  survived. A later generation-2 collection then traverses only what was made since.
- `compact()`: when the library goes idle (the import queue drained) and the frozen set grew by
  more than a quarter since the last compaction (CPython's own rule for generation 2): unfreeze,
  one full collection, freeze again. Frozen objects are still freed by reference counting the
  moment nothing refers to them; only reference *cycles* that became garbage while frozen wait for
  this pause (one per large import, not one per few notes). Returns the objects collected.

Thread-safety: each function runs under the GIL and may be called from worker threads.
"""

from __future__ import annotations

import gc
import logging
import threading
import time

log = logging.getLogger(__name__)

GEN0_THRESHOLD = 20_000
"""Allocations (net of frees) of container objects between generation-0 collections (CPython's
default is 700). Measured on a 1,000-message lesson: the collector's time per turn 0.87 ms ->
0.12 ms at 20,000 (issue 15, docs/benchmarks.md)."""

_lock = threading.Lock()
_installed = False
_stats = {"freezes": 0, "compactions": 0, "collected": 0, "compact_ms_max": 0.0}
_frozen_after_compact = 0
GROWTH = 1.25
"""`compact()` runs when the frozen objects number more than this times what the last
compaction left (or start-up froze)."""


def install(gen0: int = GEN0_THRESHOLD) -> None:
    """Turn the policy on for this process: the generation-0 threshold, then freeze what is alive
    now (start-up's modules, settings, stores). Idempotent. Generations 1 and 2 keep their
    thresholds (10, 10)."""
    global _installed, _frozen_after_compact
    with _lock:
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(gen0, gen1, gen2)
        _installed = True
    survivors_settled()
    _frozen_after_compact = gc.get_freeze_count()


def installed() -> bool:
    """Whether `install()` ran in this process."""
    return _installed


def survivors_settled() -> None:
    """Collect generations 0 and 1, then freeze every tracked object (`gc.freeze`). Called after
    a long-lived structure was built. A no-op unless installed."""
    if not _installed:
        return
    with _lock:
        gc.collect(1)
        gc.freeze()
        _stats["freezes"] += 1


def compact(force: bool = False) -> int:
    """Unfreeze, collect every generation, freeze again: reclaims reference cycles that became
    garbage while frozen. Returns the unreachable objects found (0 when not installed, or when
    the frozen set has not grown by `GROWTH` since the last compaction and not `force`). One full
    pause (about what one generation-2 collection cost before freezing); call it when the library
    goes idle, not per request."""
    global _frozen_after_compact
    if not _installed:
        return 0
    with _lock:
        if not force and gc.get_freeze_count() <= GROWTH * _frozen_after_compact:
            return 0
        started = time.perf_counter()
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        _frozen_after_compact = gc.get_freeze_count()
        elapsed = (time.perf_counter() - started) * 1000
        _stats["compactions"] += 1
        _stats["collected"] += found
        _stats["compact_ms_max"] = max(_stats["compact_ms_max"], elapsed)
    log.debug("heap compacted: %d unreachable objects, %.1f ms", found, elapsed)
    return found


def stats() -> dict[str, float]:
    """Counters since start: freezes, compactions, objects collected by compactions, the longest
    compaction (ms), and the objects frozen now (`gc.get_freeze_count`)."""
    with _lock:
        return {**_stats, "frozen": gc.get_freeze_count()}


def uninstall() -> None:
    """Back to CPython's defaults (threshold 700, nothing frozen). For tests."""
    global _installed, _frozen_after_compact
    with _lock:
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(700, gen1, gen2)
        gc.unfreeze()
        _installed = False
        _frozen_after_compact = 0
        _stats.update(freezes=0, compactions=0, collected=0, compact_ms_max=0.0)
