"""`python -m server [--host 127.0.0.1] [--port N|0] [--data-dir DIR]` (seed §8, machine room).

Binds loopback by default, takes an exclusive lock on the data dir (a second server on the same
dir exits with status 3 and a clear message), and prints one line
`LH_READY {"port": N, "pid": P}` on stdout once it accepts connections. SIGTERM and SIGINT shut
it down cleanly: running turns persist what streamed and the offline model child is stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import socket
import sys
import threading
from collections.abc import Iterator, Sequence

import uvicorn

from server.config import (
    DEFAULT_HOST,
    ORIGINS_ENV,
    READY_PREFIX,
    STDIN_EOF_ENV,
    TOKEN_ENV,
    DataPaths,
    resolve_data_dir,
)

EXIT_LOCKED = 3
EXIT_BIND = 4
LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m server", description="Learning Harness server")
    parser.add_argument("--host", default=DEFAULT_HOST, help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port; 0 picks a free one (default 8765)")
    parser.add_argument(
        "--data-dir", default=None, help="data directory (default: $LH_DATA_DIR, else ./data)"
    )
    parser.add_argument("--log-level", default=os.environ.get("LH_LOG_LEVEL", "info"))
    return parser.parse_args(argv)


class _ReadyServer(uvicorn.Server):
    """A uvicorn server that prints the ready line once its socket accepts connections."""

    def __init__(self, config: uvicorn.Config, port: int) -> None:
        super().__init__(config)
        self.ready_port = port

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Like uvicorn's, but a requested stop (SIGTERM/SIGINT) ends with status 0 after the
        graceful shutdown instead of re-raising the signal (a supervisor reads 0 as "clean")."""
        with super().capture_signals():
            yield
            if self._captured_signals:
                logging.getLogger("lh.main").info("stopped by signal %s", self._captured_signals[-1])
            self._captured_signals.clear()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        from server.api.app import close_streams

        close_streams(self.config.app)  # open event streams end first, or the shutdown waits
        await super().shutdown(sockets=sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.should_exit:  # startup failed (lifespan error)
            return
        await start_worker_threads()
        prepare_routes(self.config.app)
        line = f"{READY_PREFIX} {json.dumps({'port': self.ready_port, 'pid': os.getpid()})}"
        if sys.stdout is not None:  # a frozen, console-less build has no stdout
            print(line, flush=True)
        if sys.stderr is not None:
            print(
                f"Learning Harness is running: open http://127.0.0.1:{self.ready_port}/",
                file=sys.stderr,
                flush=True,
            )


DEFAULT_EXECUTOR_THREADS = min(32, (os.cpu_count() or 1) + 4)
"""The size of asyncio's default executor (`asyncio.to_thread`: a turn's record writes, model
clients being built): ThreadPoolExecutor's default for a pool made without `max_workers`."""
ANYIO_THREADS = 4
"""anyio worker threads started ahead (Starlette's `run_in_threadpool`: a notes import's multipart
spooling and folder walk); anyio adds more on demand, up to its 40."""


async def start_worker_threads(timeout_s: float = 30.0) -> None:
    """Start the worker threads of asyncio's default executor and some of anyio's now, while the
    server is idle. Both pools start a thread on first need, from the event loop, and
    `Thread.start` blocks until the new thread has run: on a loaded machine a burst of 20 turns
    and 5 imports stalled the loop 165 ms in `_adjust_thread_count` (issue 26). Each pool gets
    tasks that wait for one another (a barrier), so each needs a thread of its own. Importing
    anyio's thread backend (on first use otherwise) happens here too. Never raises: a pool that
    does not fill within `timeout_s` is logged and grows on demand as before."""
    import asyncio

    import anyio.to_thread

    log = logging.getLogger("lh.main")
    loop = asyncio.get_running_loop()
    default = threading.Barrier(DEFAULT_EXECUTOR_THREADS)
    anyio_barrier = threading.Barrier(ANYIO_THREADS)
    try:
        await asyncio.gather(
            *(loop.run_in_executor(None, default.wait, timeout_s) for _ in range(DEFAULT_EXECUTOR_THREADS)),
            *(anyio.to_thread.run_sync(anyio_barrier.wait, timeout_s) for _ in range(ANYIO_THREADS)),
        )
    except threading.BrokenBarrierError:
        log.warning("worker threads were not all started ahead; they start when first needed")


def prepare_routes(app: object) -> int:
    """Do now what FastAPI does on the first request each route gets: build every included
    router's effective routes (a pydantic field per parameter and response) and each endpoint's
    error context (`inspect.getsourcelines`, which tokenizes the route's module). Lazily, both ran
    on the event loop inside a burst's first requests (`/api/chat`, `/api/graph/import`): a 170 ms
    stall under load (issue 26). Uses FastAPI's internals (0.16x), so any failure is logged and
    the routes are prepared on first use as before. Returns the endpoints prepared."""
    log = logging.getLogger("lh.main")
    try:
        from fastapi.routing import APIRoute, _extract_endpoint_context, _IncludedRouter

        def prepare(routes: Sequence[object]) -> int:
            done = 0
            for route in routes:
                if isinstance(route, _IncludedRouter):
                    route.effective_candidates()
                    route.effective_low_priority_routes()
                    done += prepare(route.original_router.routes)
                elif isinstance(route, APIRoute):
                    _extract_endpoint_context(route.endpoint)
                    done += 1
            return done

        return prepare(getattr(getattr(app, "router", None), "routes", []))
    except Exception:
        log.warning("routes are prepared on their first request", exc_info=True)
        return 0


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket. Its protocol is named (`IPPROTO_TCP`, not 0): asyncio turns Nagle's
    algorithm off (`TCP_NODELAY`) only on accepted sockets whose protocol says TCP, and a
    response's headers and body are two writes, so with Nagle on the body waited for the client's
    delayed ACK of the headers, 40-200 ms a request under a steady poll (issue 26,
    `/api/health` p50 42 ms on an idle server polled every 10 ms)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _stop(servers: list[_ReadyServer]) -> None:
    """A graceful stop requested over HTTP (desktop mode): the same path as SIGTERM."""
    for server in servers:
        server.should_exit = True


def _stop_on_stdin_eof(server: _ReadyServer) -> None:
    """With LH_EXIT_ON_STDIN_EOF=1 (Electron sets it), stop when stdin closes: if the desktop
    shell dies, its end of the pipe closes and the server does not outlive it."""

    def watch() -> None:
        stream = sys.stdin
        if stream is None:
            return
        with contextlib.suppress(OSError, ValueError):
            while stream.buffer.read(4096):
                pass
        logging.getLogger("lh.main").info("stdin closed; stopping")
        server.should_exit = True

    threading.Thread(target=watch, name="stdin-eof", daemon=True).start()


GIL_SWITCH_S = 0.0005
"""How long a thread that wants the GIL waits before the holder is asked to drop it (Python's
default is 5 ms). The event loop gives the GIL up around every `select`, even a non-blocking
one, and then waits that long to get it back while a library worker thread computes (candidates,
merge plans, the layout settle): a request spanning ~30 loop iterations paid up to 150 ms while
the loop's own lag stayed at p99 5 ms (issue 16, `/api/health` p99 during a vault import)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGTERM/SIGINT. Returns the process exit status."""
    # Imported here so `--help` and the lock refusal stay fast and nothing is built at import time.
    from server.api.app import create_app
    from server.services.bootstrap import build_services
    from server.services.library.memory import cap_malloc_arenas
    from server.services.machine_room import heap
    from server.services.stores import DataDirLocked, data_dir_lock

    cap_malloc_arenas()  # before any thread: worker threads' arenas kept freed heap mapped (issue 16)
    sys.setswitchinterval(GIL_SWITCH_S)
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    log = logging.getLogger("lh.main")
    paths = DataPaths(resolve_data_dir(args.data_dir))
    if args.host not in LOOPBACK_HOSTS:
        log.warning("binding %s: the app is reachable beyond this machine", args.host)

    lock = data_dir_lock(paths)
    try:
        lock.acquire()
    except DataDirLocked as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_LOCKED
    try:
        try:
            sock = _bind(args.host, args.port)
        except OSError as exc:
            print(
                f"error: cannot listen on {args.host}:{args.port} ({exc.strerror}); "
                "pick another --port, or --port 0 for a free one",
                file=sys.stderr,
            )
            return EXIT_BIND
        port = sock.getsockname()[1]
        lock.describe({"pid": os.getpid(), "port": port})
        services = build_services(paths)
        stop_requested: list[_ReadyServer] = []
        app = create_app(
            services,
            token=os.environ.get(TOKEN_ENV) or None,
            allowed_origins=frozenset(
                o.strip() for o in os.environ.get(ORIGINS_ENV, "").split(",") if o.strip()
            ),
            request_stop=lambda: _stop(stop_requested),
        )
        config = uvicorn.Config(
            app,
            log_level=args.log_level.lower(),
            access_log=False,
            timeout_graceful_shutdown=5,
            lifespan="on",
            use_colors=False,  # uvicorn would probe sys.stdout.isatty(); a console-less build has none
        )
        server = _ReadyServer(config, port)
        stop_requested.append(server)
        heap.install()  # start-up's objects frozen, gen-0 threshold raised (issues 15-17)
        if os.environ.get(STDIN_EOF_ENV) == "1":
            _stop_on_stdin_eof(server)
        log.info("data dir %s", paths.root)
        server.run(sockets=[sock])
        return 0 if server.started else 1
    finally:
        lock.release()


if __name__ == "__main__":
    sys.exit(main())
