"""The offline model's child: self-check, reaping, plain-words failures, one restart (issue 9).

Each test runs a real child process (tests/fakes/llama_child.py, a scripted stand-in for llama.cpp's
server) that crashes by a real SIGSEGV, exits, hangs or takes a port, and checks what the server
makes of it: the child reaped (no zombie), `error` in plain words, exactly one restart.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest

from server.services.machine_room import offline_child
from server.services.machine_room.offline_child import check_gguf, describe_exit, environment_for_child
from server.services.machine_room.offline_model import OfflineModelServer

CHILD = Path(__file__).resolve().parents[2] / "fakes" / "llama_child.py"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def gguf_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    return path


class Scripted:
    """Builds `OfflineModelServer`s whose children play a script; records every start."""

    def __init__(
        self, tmp_path: Path, script: str, hold_port_once: bool = False, hold_every_port: bool = False
    ) -> None:
        self.tmp = tmp_path
        self.script = script
        self.starts = tmp_path / "starts.txt"
        self.env_out = tmp_path / "env.json"
        self.hold_port_once = hold_port_once
        self.held: socket.socket | None = None
        self.hold_every_port = hold_every_port
        self.holders: list[socket.socket] = []

    def command(self, gguf: Path, port: int) -> list[str]:
        if (self.hold_port_once and self.held is None) or self.hold_every_port:
            self.held = socket.socket()  # someone else takes the port first
            self.held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.held.bind(("127.0.0.1", port))
            self.held.listen(1)
            self.holders.append(self.held)
        return [
            sys.executable, str(CHILD), "--port", str(port), "--script", self.script,
            "--starts", str(self.starts), "--env-out", str(self.env_out),
        ]  # fmt: skip

    def server(self, gguf: Path | None = None, **kwargs: float) -> OfflineModelServer:
        return OfflineModelServer(
            self.tmp / "logs" / "offline-model.log",
            gguf or gguf_file(self.tmp),
            command=self.command,
            installed=True,
            **kwargs,  # type: ignore[arg-type]
        )

    @property
    def pids(self) -> list[int]:
        return [int(line) for line in self.starts.read_text().split()] if self.starts.exists() else []


def assert_reaped(pid: int) -> None:
    """The pid is no child of ours any more: reaped, not a zombie."""
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():  # reused by an unrelated process at most, never our zombie
        assert ") Z " not in stat.read_text()


async def test_a_healthy_child_passes_its_self_check(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "ok")
    server = scripted.server()
    try:
        url = await server.wait_ready(20)
        assert url == f"http://127.0.0.1:{server.port}/v1" and server.running
        assert server.error is None and server.restarts == 0 and len(scripted.pids) == 1
    finally:
        server.stop()
    assert_reaped(scripted.pids[0])


async def test_a_child_that_dies_mid_request_is_reaped_reported_and_restarted_once(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "crash-chat,crash-chat,ok")
    server = scripted.server()
    try:
        url = await server.wait_ready(20)
        first = scripted.pids[0]
        async with httpx.AsyncClient(timeout=10) as client:
            with pytest.raises(httpx.HTTPError):
                await client.post(f"{url}/chat/completions", json={"messages": []})
        report = await server.failure_report(wait_s=5)
        assert report == "the offline model crashed (signal 11) while answering; it is being restarted"
        assert_reaped(first)
        # the watcher restarts it once, by itself
        url2 = await server.wait_ready(20)
        assert url2 != url and server.restarts == 1 and len(scripted.pids) == 2
        assert server.last_crash == "the offline model crashed (signal 11) while answering"
        assert server.error is None
        # it dies again: one more restart, which works (script: ok)
        since = time.monotonic()
        async with httpx.AsyncClient(timeout=10) as client:
            with pytest.raises(httpx.HTTPError):
                await client.post(f"{url2}/chat/completions", json={"messages": []})
        assert await server.failure_report(since, wait_s=5)
        await server.wait_ready(20)
        assert server.restarts == 2 and len(scripted.pids) == 3
        async with httpx.AsyncClient(timeout=10) as client:
            answered = await client.post(f"{server.base_url}/chat/completions", json={"messages": []})
        assert answered.status_code == 200
        assert_reaped(scripted.pids[1])
    finally:
        server.stop()
    for pid in scripted.pids:
        assert_reaped(pid)


async def test_a_child_that_hangs_mid_request_is_killed_reaped_and_restarted_once(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "hang-chat,ok")
    server = scripted.server()
    try:
        url = await server.wait_ready(20)
        since = time.monotonic()
        async with httpx.AsyncClient(timeout=0.5) as client:
            with pytest.raises(httpx.TimeoutException):
                await client.post(f"{url}/chat/completions", json={"messages": []})
        assert server.running, "a hang is not seen until a request passes its deadline"
        report = await server.report_hang(0.5, since)
        assert report == "the offline model stopped answering (no reply in 0.5 s) and was restarted"
        assert_reaped(scripted.pids[0])
        assert server.last_crash == "the offline model stopped answering (no reply in 0.5 s)"
        # a second turn that met the same hang: the same sentence, nothing more killed
        assert await server.report_hang(0.5, since) == report
        await server.wait_ready(20)
        assert server.restarts == 1 and len(scripted.pids) == 2 and server.error is None
        async with httpx.AsyncClient(timeout=5) as client:
            answered = await client.post(f"{server.base_url}/chat/completions", json={"messages": []})
        assert answered.status_code == 200
    finally:
        server.stop()
    for pid in scripted.pids:
        assert_reaped(pid)


async def test_a_crash_in_the_self_check_is_restarted_once_then_reported(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "crash-check")
    server = scripted.server()
    try:
        with pytest.raises(RuntimeError) as refused:
            await server.wait_ready(30)
        assert len(scripted.pids) == 2, "the first start and exactly one restart"
        message = str(refused.value)
        assert message.startswith(
            "the offline model crashed (signal 11) during its self-check, and again after one restart"
        ), message
        assert server.error == message and not server.running and server.base_url is None
        for pid in scripted.pids:
            assert_reaped(pid)
    finally:
        server.stop()


async def test_one_crash_in_the_self_check_then_a_healthy_restart(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "crash-check,ok")
    server = scripted.server()
    try:
        await server.wait_ready(30)
        assert server.running and server.error is None and server.restarts == 1
        assert_reaped(scripted.pids[0])
    finally:
        server.stop()


async def test_a_child_that_exits_at_once_says_what_it_printed(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "exit1")
    server = scripted.server()
    try:
        expected = "exited with code 1 while starting: error: the scripted child"
        with pytest.raises(RuntimeError, match=expected):
            await server.wait_ready(30)
        assert len(scripted.pids) == 2
    finally:
        server.stop()


async def test_a_hung_child_is_stopped_and_reported(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "hang")
    server = scripted.server(ready_timeout_s=1.0)
    try:
        with pytest.raises(RuntimeError, match=r"did not answer within 1 s and was stopped"):
            await server.wait_ready(30)
        for pid in scripted.pids:
            assert_reaped(pid)
    finally:
        server.stop()


async def test_killing_a_child_that_ignores_sigterm_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """A hung child that ignores SIGTERM is waited for `kill_grace_s` before SIGKILL; that wait runs
    in a thread, so other requests of the server (a ticker here) go on meanwhile."""
    scripted = Scripted(tmp_path, "hang-deaf")
    # Ready within 1.5 s: long enough for the child to start and ignore SIGTERM on a loaded machine
    # (with 0.3 s, a slow start got SIGTERM before it could ignore it and died at once).
    server = scripted.server(ready_timeout_s=1.5, kill_grace_s=1.5)
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.02)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    try:
        began = time.monotonic()
        with pytest.raises(RuntimeError, match=r"did not answer within 1\.5 s and was stopped"):
            await server.wait_ready(30)
        assert time.monotonic() - began >= 3.0, "two children, each given 1.5 s after SIGTERM"
    finally:
        done.set()
        await ticking
        server.stop()
    assert max(gaps) < 0.5, f"the event loop stalled for {max(gaps):.2f} s"
    for pid in scripted.pids:
        assert_reaped(pid)


async def test_a_failed_self_check_answer_is_reported(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "bad-check")
    server = scripted.server()
    try:
        with pytest.raises(RuntimeError, match=r"failed its self-check \(HTTP 500\)"):
            await server.wait_ready(30)
    finally:
        server.stop()


async def test_a_taken_port_is_named_and_the_restart_takes_another(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scripted = Scripted(tmp_path, "ok", hold_port_once=True)
    server = scripted.server()
    try:
        with caplog.at_level("ERROR", logger="lh.offline"):
            await server.wait_ready(30)
        assert server.restarts == 1 and server.running
        assert scripted.held is not None and server.port != scripted.held.getsockname()[1]
        taken = scripted.held.getsockname()[1]
        assert [r.getMessage() for r in caplog.records if r.name == "lh.offline"] == [
            f"offline model: the offline model exited with code 1 while starting (port {taken} was taken)"
        ]
    finally:
        server.stop()
        if scripted.held:
            scripted.held.close()


async def test_ports_taken_at_every_start_are_named_in_the_error(tmp_path: Path) -> None:
    scripted = Scripted(tmp_path, "ok", hold_every_port=True)
    server = scripted.server()
    try:
        with pytest.raises(RuntimeError) as refused:
            await server.wait_ready(30)
        first, second = (holder.getsockname()[1] for holder in scripted.holders)
        assert str(refused.value).startswith(
            f"the offline model exited with code 1 while starting (port {first} was taken); after one "
            f"restart, the offline model exited with code 1 while starting (port {second} was taken)"
        ), refused.value
        assert server.error == str(refused.value)
    finally:
        server.stop()
        for holder in scripted.holders:
            holder.close()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "does not exist"),
        (b"PK\x03\x04 not a model", "is not a GGUF model"),
        ("dir", "is a folder, not a GGUF file"),
    ],
)
async def test_a_missing_or_foreign_gguf_is_refused_without_starting_anything(
    tmp_path: Path, content: bytes | str | None, expected: str
) -> None:
    path = tmp_path / "weights.gguf"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    scripted = Scripted(tmp_path, "ok")
    server = scripted.server(gguf=path)
    try:
        with pytest.raises(RuntimeError, match=expected):
            await server.wait_ready(10)
        assert scripted.pids == [], "nothing was started for a file that cannot work"
        assert expected in (server.error or "")
    finally:
        server.stop()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_gguf_is_named(tmp_path: Path) -> None:
    path = gguf_file(tmp_path)
    path.chmod(0)
    assert "cannot be read (Permission denied)" in (check_gguf(path) or "")


def test_a_gguf_that_open_refuses_is_named_even_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root (CI) a mode-0 file reads fine, so the refusal comes from `open` itself."""
    path = gguf_file(tmp_path)

    def refuse(file: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(offline_child, "open", refuse, raising=False)
    assert check_gguf(path) == f"the offline model file {path} cannot be read (Permission denied)"


@pytest.mark.parametrize("kind", ["socket", "fifo"])
def test_a_gguf_path_that_is_no_regular_file_is_named_without_blocking(tmp_path: Path, kind: str) -> None:
    """A UNIX socket or a named pipe where the GGUF should be: refused before `open` (which fails
    on a socket and blocks forever on a pipe without a writer), whoever runs the tests."""
    path = tmp_path / "weights.gguf"
    if kind == "socket":
        holder = socket.socket(socket.AF_UNIX)
        holder.bind(str(path))
    else:
        os.mkfifo(path)
    try:
        assert check_gguf(path) == (
            f"the offline model file {path} is not a regular file (a socket, pipe or device)"
        )
    finally:
        if kind == "socket":
            holder.close()


def test_the_child_environment_carries_no_key_and_no_token() -> None:
    env = environment_for_child(
        {
            "PATH": "/usr/bin",
            "HOME": "/home/learner",
            "LC_ALL": "C.UTF-8",
            "OMP_NUM_THREADS": "2",
            "LH_API_TOKEN": "desktop-secret",
            "LH_OPENAI_API_KEY": "sk-secret",
            "OPENAI_API_KEY": "sk-other",
            "LH_DATA_DIR": "/data",
            "AWS_SECRET_ACCESS_KEY": "aws",
        }
    )
    assert env == {"PATH": "/usr/bin", "HOME": "/home/learner", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "2"}


async def test_the_real_child_environment_is_filtered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LH_API_TOKEN", "desktop-secret")
    monkeypatch.setenv("LH_OPENROUTER_API_KEY", "sk-secret")
    scripted = Scripted(tmp_path, "ok")
    server = scripted.server()
    try:
        await server.wait_ready(20)
    finally:
        server.stop()
    import json

    names = set(json.loads(scripted.env_out.read_text()))
    assert "PATH" in names and not names & {"LH_API_TOKEN", "LH_OPENROUTER_API_KEY"}


def test_exit_statuses_in_plain_words() -> None:
    assert describe_exit(-signal.SIGSEGV) == "crashed (signal 11)"
    assert describe_exit(1) == "exited with code 1"
