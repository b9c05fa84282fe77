"""Bench-only: `python -m tests.bench.loop_probe <server args>` runs `python -m server` with a
sampling loop-lag probe (issue 16, health p99 during an import).

A watchdog thread posts a no-op to the event loop every `PERIOD_S` (10 ms) with
`call_soon_threadsafe` and times how long it waits to run (the loop's lag, in ms). While a post
waits longer than `STALL_S` (30 ms), the event-loop thread's Python stack is sampled every
`PERIOD_S`; each sample counts once for its innermost `server/` frame and once for its whole
`server/`-only stack. At shutdown the figures are written as JSON to `$LH_LOOP_PROBE_OUT`:
`{"lags_ms": [...], "stalls": n, "leaf": {frame: samples}, "stacks": {stack: samples}, ...}`, with
the loop thread's CPU seconds and its run-queue wait (seconds runnable but not on a CPU).
Nothing here is imported by the server: it wraps `server.__main__.main`.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

from server.services.machine_room import heap

PERIOD_S = 0.01
STALL_S = 0.03


class LoopProbe:
    def __init__(self, loop: asyncio.AbstractEventLoop, thread_id: int) -> None:
        self.loop = loop
        self.thread_id = thread_id
        self.native_id = threading.get_native_id()
        self.lags: list[float] = []
        self.health: list[tuple[float, float]] = []
        self.gaps: list[tuple[float, int, list[str]]] = []
        self.leaf: Counter[str] = Counter()
        self.stacks: Counter[str] = Counter()
        self.stalls = 0
        self.current: Counter[str] = Counter()
        self.worst: list[tuple[float, list[tuple[str, int]]]] = []
        self.stop = threading.Event()
        self.gc_ms: list[tuple[int, float]] = []  # (generation, ms) of each collection
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)
        self.thread = threading.Thread(target=self._run, name="loop-probe", daemon=True)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.gc_ms.append((info["generation"], round((time.perf_counter() - self._gc_start) * 1000, 2)))

    def start(self) -> None:
        self.thread.start()

    def _sample(self) -> None:
        frame: FrameType | None = sys._current_frames().get(self.thread_id)
        names: list[str] = []
        while frame is not None:
            code = frame.f_code
            where = code.co_filename
            short = (
                where.split("/server/", 1)[-1] if "/server/" in where else "/".join(where.rsplit("/", 2)[-2:])
            )
            names.append(f"{short}:{code.co_name}")
            frame = frame.f_back
        if not names:
            return
        self.leaf[names[0]] += 1
        own = [n for n in names if not n.startswith(("asyncio", "uvicorn", "starlette", "anyio"))]
        self.stacks[" < ".join(own[:8])] += 1
        self.current[" < ".join(names[:6])] += 1

    def _others(self) -> list[str]:
        """Each other thread's innermost three frames (file:line function)."""
        out = []
        own = threading.get_ident()
        for ident, frame in sys._current_frames().items():
            if ident == own:
                continue
            names = []
            while frame is not None and len(names) < 3:
                code = frame.f_code
                names.append(
                    f"{'/'.join(code.co_filename.rsplit('/', 2)[-2:])}:{frame.f_lineno} {code.co_name}"
                )
                frame = frame.f_back
            out.append(" < ".join(names))
        return out

    def _run(self) -> None:
        while not self.stop.is_set():
            ran = threading.Event()
            posted = time.perf_counter()
            try:
                self.loop.call_soon_threadsafe(ran.set)
            except RuntimeError:  # the loop closed
                return
            stalled = False
            while not ran.wait(PERIOD_S):
                if time.perf_counter() - posted > STALL_S:
                    stalled = True
                    self._sample()
                if self.stop.is_set():
                    return
            lag = (time.perf_counter() - posted) * 1000
            self.lags.append(lag)
            self.stalls += stalled
            if lag > 100:
                self.worst.append((round(lag), self.current.most_common(3)))
            self.current = Counter()
            slept = time.perf_counter()
            time.sleep(PERIOD_S)
            if time.perf_counter() - slept > 0.05:
                # this thread could not run (or not take the GIL) for > 50 ms: neither could the
                # loop, and no lag was measured for it; the thread that held the GIL is the one
                # that just gave it up, so record every other thread's frame now
                self.gaps.append(
                    (round(time.monotonic(), 4), round((time.perf_counter() - slept) * 1000), self._others())
                )

    def dump(self, path: Path) -> None:
        self.stop.set()
        body: dict[str, Any] = {
            "lags_ms": [round(x, 2) for x in self.lags],
            "stalls": self.stalls,
            "leaf": dict(self.leaf.most_common(60)),
            "stacks": dict(self.stacks.most_common(60)),
            "worst": sorted(self.worst, key=lambda w: -w[0])[:30],
            "loop_cpu_s": _cpu_s(f"/proc/self/task/{self.native_id}/stat"),
            "process_cpu_s": _cpu_s("/proc/self/stat"),
            "loop_sched": _sched(f"/proc/self/task/{self.native_id}/schedstat"),
            "cpu_pressure": _pressure(),
            "gaps": self.gaps,
            "gc_ms": self.gc_ms,
            "heap": heap.stats(),
            "health_s": [(round(a, 6), round(b, 6)) for a, b in self.health],
        }
        path.write_text(json.dumps(body, indent=1))


class PathClock:
    """ASGI wrapper (outermost, inside uvicorn's protocol): for each request to `path` records
    `(called, ended)` in `time.monotonic()` seconds (CLOCK_MONOTONIC, comparable across processes
    on one machine): `called` when uvicorn hands the parsed request to the app, `ended` when the
    last body message has been given to the transport."""

    def __init__(self, app: Any, out: list[tuple[float, float]], path: str = "/api/health") -> None:
        self.app = app
        self.out = out
        self.path = path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        called = time.monotonic()

        async def timed_send(message: Any) -> None:
            await send(message)
            if message.get("type") == "http.response.body" and not message.get("more_body"):
                self.out.append((called, time.monotonic()))

        await self.app(scope, receive, timed_send)


def _cpu_s(stat: str) -> float | None:
    """User + system CPU seconds of a thread or process (Linux /proc), or None."""
    try:
        fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sched(path: str) -> dict[str, float] | None:
    """A thread's scheduler figures (Linux schedstat): seconds on a CPU, seconds runnable but
    waiting for one (the run queue), and timeslices; None when the kernel does not keep them."""
    try:
        run_ns, wait_ns, slices = (int(x) for x in Path(path).read_text().split()[:3])
    except (OSError, ValueError):
        return None
    return {"run_s": run_ns / 1e9, "wait_s": wait_ns / 1e9, "slices": slices}


def _pressure() -> str | None:
    """The machine's CPU pressure line (`some avg10 avg60 avg300`: % of time a task waited for a
    CPU), or None."""
    try:
        return Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None


def main() -> int:
    import server.__main__ as entry

    probes: list[LoopProbe] = []
    startup = entry._ReadyServer.startup
    shutdown = entry._ReadyServer.shutdown

    async def probed_startup(self: Any, sockets: Any = None) -> None:
        probe = LoopProbe(asyncio.get_running_loop(), threading.get_ident())
        probes.append(probe)
        self.config.loaded_app = PathClock(self.config.loaded_app, probe.health)
        probe.start()
        await startup(self, sockets=sockets)

    async def probed_shutdown(self: Any, sockets: Any = None) -> None:
        out = os.environ.get("LH_LOOP_PROBE_OUT")
        for probe in probes:
            if out:
                probe.dump(Path(out))
        await shutdown(self, sockets=sockets)

    entry._ReadyServer.startup = probed_startup  # type: ignore[method-assign]
    entry._ReadyServer.shutdown = probed_shutdown  # type: ignore[method-assign]
    return entry.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
