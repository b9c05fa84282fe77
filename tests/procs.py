"""Start `python -m server` as a real child process and read its ready line."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent


LOG_LINES = 400
"""Lines of a spawned server's output kept for a failing test's report (tests/conftest.py)."""


@dataclass
class ServerProcess:
    process: subprocess.Popen[str]
    port: int
    data_dir: Path
    log: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    """The last lines the server wrote after its ready line (stdout and stderr, as read)."""

    def drain(self) -> ServerProcess:
        """Read the server's stdout and stderr into `log` on daemon threads from now on: an unread
        pipe fills at 64 KB and then blocks the server on its next log write."""
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                threading.Thread(target=_pump_into, args=(stream, self.log), daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
        return self.process.returncode


def _pump_into(stream: IO[str], log: deque[str]) -> None:
    try:
        for line in stream:
            log.append(line.rstrip("\n"))
    except (OSError, ValueError):  # closed under us: the process is gone
        return


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "LH_KEYRING": "off",
            "LH_LOG_LEVEL": "warning",
        }
    )
    env.update(extra or {})
    return env


class NotReady(RuntimeError):
    """A spawned server wrote no `LH_READY` line (message: it exited first, or the time ran out)."""


def read_ready_line(stdout: IO[str], timeout: float) -> dict[str, Any]:
    """The JSON object of the first `LH_READY {...}` line on a spawned server's stdout
    (`{"port": int, "pid": int}`), read on a thread, not with select(): Windows cannot select() on
    pipes (the release workflow runs tests/desktop and scripts/smoke_frozen_turn.py there). The
    thread stops reading right after the ready line; the rest of stdout stays unread.
    Raises NotReady on EOF ("the server exited before its ready line") or after `timeout` seconds."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stdout:
            lines.put(line)
            if line.startswith("LH_READY "):
                return
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NotReady(f"no LH_READY line within {timeout:.0f} s")
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if line.startswith("LH_READY "):
            info: dict[str, Any] = json.loads(line[len("LH_READY ") :])
            return info
        if line == "":
            raise NotReady("the server exited before its ready line")


def wait_ready(process: subprocess.Popen[str], timeout: float = 30, what: str = "server") -> int:
    """Read `LH_READY {...}` from a spawned server's stdout; returns its port. On exit or timeout,
    kills it and raises RuntimeError with the tail of its stderr."""
    assert process.stdout is not None
    try:
        info = read_ready_line(process.stdout, timeout)
    except NotReady:
        process.kill()
        _, err = process.communicate()
        raise RuntimeError(f"{what} did not become ready: {err[-2000:]}") from None
    assert info["pid"] == process.pid, "the spawned process is the server"
    return int(info["port"])


def start_server(
    data_dir: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 30,
    module: str = "server",
    cwd: Path = ROOT,
) -> ServerProcess:
    """Spawn the server on a free port and wait for `LH_READY {...}`. Raises with its stderr if it
    fails. `module`: what `python -m` runs (a bench's wrapper of `server.__main__`); `cwd`: the
    checkout whose server (and built bundle) runs (a bench's before/after)."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--port", "0", "--data-dir", str(data_dir), *args],
        cwd=cwd,
        env=server_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return ServerProcess(process, wait_ready(process, timeout), data_dir).drain()


def children_of(pid: int) -> list[int]:
    """Direct child pids (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def scripted_slot(stub_url: str) -> dict[str, str]:
    """The strong slot pointing at a scripted OpenAI-compatible stub (tests/stub_openai.py)."""
    return {"provider": "openai-compatible", "model": "scripted", "baseUrl": f"{stub_url}/v1"}


def write_settings(data_dir: Path, strong: dict[str, str]) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"models": {"strong": strong}}))


def start_on_stub(data_dir: Path, stub_url: str) -> ServerProcess:
    """`python -m server` on a fresh data dir whose strong slot is the scripted stub."""
    write_settings(data_dir, scripted_slot(stub_url))
    return start_server(data_dir)


@contextmanager
def server_on_stub(
    data_dir: Path, reply: Any = None, delay_s: float = 0.0, env: dict[str, str] | None = None
) -> Iterator[ServerProcess]:
    """`python -m server` (extra `env`) on `data_dir` whose strong slot is the scripted model
    `create_stub(reply, delay_s)` (tests/stub_openai.py; `reply` None: its default reply), served
    on loopback for the block; afterwards the server is stopped and must exit 0."""
    # Imported here: the frozen-server smoke script imports this module for its ready-line reader.
    from tests.livehttp import serve
    from tests.stub_openai import create_stub

    stub = create_stub(delay_s=delay_s) if reply is None else create_stub(reply, delay_s=delay_s)
    with serve(stub) as stub_url:
        write_settings(data_dir, scripted_slot(stub_url))
        proc = start_server(data_dir, env=env)
        try:
            yield proc
        finally:
            assert proc.stop() == 0


def learner_turn(chat_id: str, text: str, message_id: str = "u1") -> dict:
    """A `POST /api/chat` body carrying one new learner message."""
    return {
        "id": chat_id,
        "messages": [{"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}],
    }
