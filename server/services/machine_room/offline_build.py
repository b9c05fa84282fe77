"""The offline model's llama.cpp build, run by the server in the background (issue 29, item 1).

`make run` installs the app without compiling llama.cpp (a cached portable wheel is installed at
once; none cached, none installed), prints the ready line, and the server, started with
`LH_OFFLINE_BUILD=1`, runs the builder as a child process: `scripts/install_llama_cpp.py
--progress` from the source checkout (it compiles the portable wheel into the user's wheel cache
and installs it into this environment), or the command in `$LH_OFFLINE_BUILD_COMMAND` (tests: a
slow stand-in that installs an already built wheel). Its whole output goes to
`<data>/logs/offline-build.log`; its progress (`server.core.machine_room.offline_build`) is logged
to the terminal at each step and every `REPORT_EVERY_S` seconds, and shown in `GET /api/settings`
offline.build for the page's banner. When it ends well, `on_installed` runs on the event loop
(the offline model server looks for llama.cpp again and starts if lessons use it): no restart.

Keys, subscriptions and local model servers never wait on it: nothing here blocks a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from server.core.machine_room.offline_build import BuildProgress, describe, finished, read_line, status
from server.services.machine_room.offline_child import die_with_parent

log = logging.getLogger("lh.offline.build")

BUILD_ENV = "LH_OFFLINE_BUILD"
"""`1`: build llama.cpp in the background when it is not installed (`make run` sets it)."""
BUILD_COMMAND_ENV = "LH_OFFLINE_BUILD_COMMAND"
"""A shell-quoted command replacing the builder (tests inject a slow stand-in); implies building."""
REPORT_EVERY_S = 30.0
"""Seconds between progress lines in the terminal while a step runs (a new step is said at once)."""
SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "install_llama_cpp.py"
"""The builder in a source checkout (absent from an installed wheel and a frozen bundle)."""


def builder_command(environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The builder's argv when a background build is asked for, else None.

    `$LH_OFFLINE_BUILD_COMMAND` (split as a POSIX shell would) when set; else, with
    `LH_OFFLINE_BUILD=1`, this interpreter running the checkout's `scripts/install_llama_cpp.py
    --progress` (None when the script is not there: an installed or frozen app has no checkout).
    """
    env = os.environ if environ is None else environ
    command = env.get(BUILD_COMMAND_ENV, "").strip()
    if command:
        return shlex.split(command)
    if env.get(BUILD_ENV) == "1" and not getattr(sys, "frozen", False) and SCRIPT.is_file():
        return [sys.executable, str(SCRIPT), "--progress"]
    return None


def _lower_priority() -> None:  # pragma: no cover - runs in the child before exec
    """The builder runs at a lower CPU priority (nice 10: the app stays responsive while it
    compiles) and, on Linux, gets SIGTERM when the server dies."""
    with contextlib.suppress(OSError):
        os.nice(10)
    die_with_parent()


class OfflineBuild:
    """One background build: its child process, its progress and its end.

    Args:
        command: the builder's argv (`builder_command()`).
        log_path: where the builder's whole output goes.
        on_installed: called on the event loop once the builder exited 0.
        clock: monotonic seconds (tests may pass their own).
    """

    def __init__(
        self,
        command: list[str],
        log_path: Path,
        on_installed: Callable[[], None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = command
        self.log_path = log_path
        self.on_installed = on_installed
        self.clock = clock
        self.progress: BuildProgress | None = None
        self._process: subprocess.Popen[str] | None = None
        self._last_lines: deque[str] = deque(maxlen=20)
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def running(self) -> bool:
        return self.progress is not None and self.progress.state == "building"

    def status(self) -> dict[str, Any] | None:
        """`GET /api/settings` offline.build (see `core.machine_room.offline_build.status`)."""
        with self._lock:
            progress = self.progress
        return status(progress, self.clock())

    def start(self) -> None:
        """Start the builder (once) and follow it on a thread; returns at once. A builder that
        cannot be started is a failed build (said in the log and the status), never an exception."""
        if self.progress is not None or self._stopped:
            return
        loop = asyncio.get_running_loop()
        self.progress = BuildProgress(started=self.clock())
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log.info(
            "llama.cpp for the offline model is not built yet: building it in the background (%s)",
            self.log_path,
        )
        log.info("meanwhile, lessons run on a key, a subscription or a model server set up in Settings")
        try:
            self._process = subprocess.Popen(
                self.command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                bufsize=1,
                preexec_fn=_lower_priority if sys.platform != "win32" else None,
                start_new_session=sys.platform != "win32",  # `stop` ends its whole group
            )
        except OSError as exc:
            self._finish(127, [f"the builder could not be started: {exc.strerror or exc}"])
            return
        threading.Thread(target=self._follow, args=(loop,), name="offline-build", daemon=True).start()

    def _follow(self, loop: asyncio.AbstractEventLoop) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        reported_step, reported_at = 0, self.clock()
        with open(self.log_path, "a", encoding="utf-8") as out:
            for line in process.stdout:
                out.write(line)
                out.flush()
                stripped = line.rstrip("\n")
                now = self.clock()
                with self._lock:
                    assert self.progress is not None
                    self.progress = read_line(self.progress, stripped, now)
                    progress = self.progress
                if stripped.strip():
                    self._last_lines.append(stripped)
                if progress.step != reported_step or now - reported_at >= REPORT_EVERY_S:
                    reported_step, reported_at = progress.step, now
                    log.info("%s", describe(progress, now))
        returncode = process.wait()
        self._finish(returncode, list(self._last_lines))
        if returncode == 0 and not self._stopped:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone
                loop.call_soon_threadsafe(self._installed)

    def _finish(self, returncode: int, last_lines: list[str]) -> None:
        now = self.clock()
        with self._lock:
            assert self.progress is not None
            self.progress = finished(self.progress, returncode, now, last_lines, str(self.log_path))
            progress = self.progress
        if self._stopped:
            return
        (log.info if returncode == 0 else log.error)("%s", describe(progress, now))

    def _installed(self) -> None:
        try:
            self.on_installed()
        except Exception:  # the build stands; the next start of the app picks the model up
            log.exception("the offline model was built, but picking it up failed")

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop the builder and everything it started if it runs (SIGTERM to its process group,
        SIGKILL after `grace_s` seconds; blocks that long at most). Idempotent."""
        self._stopped = True
        process = self._process
        if process is None or process.poll() is not None:
            return
        self._signal(process, signal.SIGTERM)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            self._signal(process, signal.SIGKILL)
            process.wait()

    @staticmethod
    def _signal(process: subprocess.Popen[str], sig: int) -> None:
        """`sig` to the builder's process group (pip, cmake, the compilers); to it alone on Windows."""
        with contextlib.suppress(ProcessLookupError):
            if sys.platform == "win32":
                process.kill() if sig == signal.SIGKILL else process.terminate()
            else:
                os.killpg(process.pid, sig)
