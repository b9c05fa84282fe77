"""Background work in threads the scheduler puts behind the event loop (issue 16, health p99).

During a vault import the library's worker threads (auditor candidates with the embedder, the
merge plan and commit, the layout settle) keep one core busy while the event loop answers the
learner. On a loaded machine the loop thread then waits for a CPU behind them: the loop probe
measured 13.4 s runnable-but-waiting against 16.3 s running over a 1,200-note import, and
`/api/health` p99 ~170 ms while the loop's own lag p99 was 13 ms. These threads run at a lower
scheduling priority (nice +`NICE`, per thread on Linux), so the kernel runs the loop first when
both are ready; on an idle core they run at full speed, so an import is not slower on a quiet
machine.

`run_background(fn, *args)` is `asyncio.to_thread` with that pool: same context copy, same
exceptions. Where threads cannot be reniced (not Linux, or refused), the pool's threads simply
keep the process's priority.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

NICE = 10
"""How much lower than the process the background threads run (Linux nice increment)."""

WORKERS = 4
"""Threads in the pool: the library's sections are serialized (merges, settles) but an audit's
ranking, a page's preparation and a settle may overlap."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def lower_this_thread(increment: int = NICE) -> bool:
    """Lower the calling thread's scheduling priority by `increment` (Linux: `setpriority` on the
    thread id changes that thread only). Returns whether it took effect; never raises."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + increment))
    except OSError as exc:  # e.g. a sandbox that forbids it: run at the process's priority
        log.debug("background threads keep the process's priority: %s", exc)
        return False
    return True


def _pool_now() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                max_workers=WORKERS, thread_name_prefix="lh-background", initializer=lower_this_thread
            )
        return _pool


async def run_background(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a background thread (lower priority than the event loop), with the caller's
    context variables, like `asyncio.to_thread`. Raises what `fn` raises."""
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, fn, *args)
    return await loop.run_in_executor(_pool_now(), call)


async def awaited_whole(work: Awaitable[T]) -> T:
    """`work`'s result, awaited to its end even when the awaiting task is cancelled meanwhile (the
    cancellation is raised afterwards): a canonical write (a turn's save, a merge commit) is never
    left running while its caller releases what it holds (the session's claim, the merge
    section). Raises what `work` raises."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return result
