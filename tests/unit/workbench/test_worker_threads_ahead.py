"""Issue 26, item 6 (a burst stalls the server): `python -m server` starts its worker threads
before it says it is ready, so a burst's first thread hops never start a thread from the event
loop (`Thread.start` blocks until the new thread has run: 165 ms under load, docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import threading

import anyio.to_thread

from server.__main__ import ANYIO_THREADS, DEFAULT_EXECUTOR_THREADS, start_worker_threads


def test_a_burst_of_thread_hops_after_the_start_starts_no_thread() -> None:
    async def burst() -> tuple[int, int]:
        await start_worker_threads()
        started = threading.active_count()
        gate = threading.Barrier(DEFAULT_EXECUTOR_THREADS + ANYIO_THREADS)
        await asyncio.gather(
            *(asyncio.to_thread(gate.wait, 30) for _ in range(DEFAULT_EXECUTOR_THREADS)),
            *(anyio.to_thread.run_sync(gate.wait, 30) for _ in range(ANYIO_THREADS)),
        )
        return started, threading.active_count()

    started, after = asyncio.run(burst())
    assert after == started  # every hop found a thread waiting
