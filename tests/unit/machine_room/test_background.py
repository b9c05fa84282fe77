"""`run_background` (issue 16, health p99): library work runs in threads the scheduler puts behind
the event loop, and otherwise behaves like `asyncio.to_thread`."""

from __future__ import annotations

import asyncio
import contextvars
import os
import sys
import threading

import pytest

from server.services.machine_room.background import NICE, awaited_whole, run_background

who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def _thread_facts() -> tuple[int, int, str, str]:
    tid = threading.get_native_id()
    return tid, os.getpriority(os.PRIO_PROCESS, tid), threading.current_thread().name, who.get()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
async def test_background_threads_run_below_the_loop_and_see_the_callers_context() -> None:
    who.set("the caller")
    loop_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    tid, nice, name, seen = await run_background(_thread_facts)
    assert tid != threading.get_native_id() and name.startswith("lh-background")
    assert nice == min(19, loop_nice + NICE)
    assert seen == "the caller"
    # the loop's own thread (and the process) keep their priority
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == loop_nice
    assert os.getpriority(os.PRIO_PROCESS, 0) == loop_nice


async def test_errors_reach_the_caller_and_the_loop_keeps_answering() -> None:
    def boom() -> None:
        raise ValueError("what fn raised")

    with pytest.raises(ValueError, match="what fn raised"):
        await run_background(boom)
    results = await asyncio.gather(*(run_background(pow, 2, n) for n in range(16)))
    assert results == [2**n for n in range(16)]


async def test_awaited_whole_finishes_the_work_before_the_cancellation_reaches_its_caller() -> None:
    """A canonical write is awaited to its end even when its caller is cancelled meanwhile: the
    cancellation arrives after the work finished (issue 26: a turn's save, a merge commit)."""
    release = asyncio.Event()
    done: list[str] = []

    async def write() -> str:
        await release.wait()
        done.append("written")
        return "ok"

    caller = asyncio.ensure_future(awaited_whole(write()))
    await asyncio.sleep(0)
    caller.cancel()
    await asyncio.sleep(0.01)
    assert not caller.done(), "the caller waits for the write"
    release.set()
    try:
        await caller
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the cancellation is raised once the work is done")
    assert done == ["written"]
    assert await awaited_whole(asyncio.sleep(0, result=3)) == 3
