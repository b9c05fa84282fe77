"""`python -m server` as a real process: ready line, lock, signals, children, unreachable models."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from server.services.machine_room.offline_child import free_loopback_port as free_port
from server.services.machine_room.offline_child import offline_installed
from tests.livehttp import serve
from tests.procs import (
    ROOT,
    children_of,
    learner_turn,
    scripted_slot,
    server_env,
    start_server,
    write_settings,
)
from tests.stub_openai import create_stub


def unreachable_slot() -> dict:
    return {"provider": "openai-compatible", "model": "nothing", "baseUrl": "http://127.0.0.1:9/v1"}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_ready_line_health_and_clean_shutdown(data_dir: Path, sig: int) -> None:
    write_settings(data_dir, unreachable_slot())
    server = start_server(data_dir)
    try:
        health = httpx.get(f"{server.url}/api/health").json()
        assert health["status"] == "ok" and health["pid"] == server.process.pid
        assert health["dataDir"] == str(data_dir.resolve())
    finally:
        assert server.stop(sig) == 0


def test_second_server_on_the_same_data_dir_refuses(data_dir: Path) -> None:
    write_settings(data_dir, unreachable_slot())
    first = start_server(data_dir)
    try:
        second = subprocess.run(
            [sys.executable, "-m", "server", "--port", "0", "--data-dir", str(data_dir)],
            cwd=ROOT,
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert second.returncode == 3
        assert "already using the data dir" in second.stderr and str(data_dir.resolve()) in second.stderr
        assert f"pid {first.process.pid}, port {first.port}" in second.stderr
        assert "LH_READY" not in second.stdout
        assert httpx.get(f"{first.url}/api/health").status_code == 200
    finally:
        first.stop()


def test_data_dir_from_environment(tmp_path: Path) -> None:
    data = tmp_path / "from-env"
    write_settings(data, unreachable_slot())
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", "0"],
        cwd=ROOT,
        env=server_env({"LH_DATA_DIR": str(data)}),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        port = json.loads(line.split(" ", 1)[1])["port"]
        assert httpx.get(f"http://127.0.0.1:{port}/api/health").json()["dataDir"] == str(data.resolve())
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0


def test_port_in_use_exits_with_a_clear_message(data_dir: Path) -> None:
    write_settings(data_dir, unreachable_slot())
    first = start_server(data_dir)
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "server",
                "--port",
                str(first.port),
                "--data-dir",
                str(data_dir / "other"),
            ],
            cwd=ROOT,
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 4 and "--port 0" in result.stderr
    finally:
        first.stop()


def test_unreachable_model_server_is_503_and_keeps_the_learner_message(data_dir: Path) -> None:
    write_settings(data_dir, unreachable_slot())
    server = start_server(data_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            chat_id = client.post("/api/chats", json={}).json()["id"]
            response = client.post("/api/chat", json=learner_turn(chat_id, "hello?"))
            assert response.status_code == 503
            assert response.json()["error"] == "model_unreachable"
            assert "Settings" in response.json()["detail"]
            record = client.get(f"/api/chats/{chat_id}").json()
            assert [m["id"] for m in record["messages"]] == ["u1"]
            assert client.get("/api/health").status_code == 200
    finally:
        assert server.stop() == 0


def test_a_turn_through_the_openai_sdk_against_a_scripted_compatible_server(data_dir: Path) -> None:
    stub = create_stub(delay_s=0)
    with serve(stub) as stub_url:
        write_settings(data_dir, scripted_slot(stub_url))
        server = start_server(data_dir)
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                chat_id = client.post("/api/chats", json={}).json()["id"]
                response = client.post("/api/chat", json=learner_turn(chat_id, "derivatives"))
                assert response.status_code == 200 and response.text.endswith("data: [DONE]\n\n")
                reply = client.get(f"/api/chats/{chat_id}").json()["messages"][-1]
                assert (
                    reply["parts"][-1]["text"] == "You asked: *derivatives*. The derivative of $x^2$ is $2x$."
                )
            sent = stub.state.requests[-1]
            assert (
                sent["messages"][0]["role"] == "system" and sent["messages"][-1]["content"] == "derivatives"
            )
        finally:
            server.stop()


@pytest.mark.skipif(not offline_installed(), reason="the 'local' extra is not installed")
def test_offline_model_child_is_started_and_stopped_with_the_server(data_dir: Path) -> None:
    server = start_server(data_dir)  # fresh settings: strong resolves to the offline model
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = httpx.get(f"{server.url}/api/settings").json()
            if status["offline"]["running"]:
                break
            time.sleep(0.2)
        assert status["resolved"]["strong"]["offline"] is True and status["offline"]["running"]
        children = children_of(server.process.pid)
        assert children, "the llama.cpp server should be a child of the app"
    finally:
        assert server.stop() == 0
    time.sleep(0.5)
    for pid in children:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], (
            pid
        )
    assert os.path.exists(data_dir / "logs" / "offline-model.log")


def test_desktop_token_and_foreign_requests_are_refused_over_http(data_dir: Path) -> None:
    write_settings(data_dir, unreachable_slot())
    server = start_server(data_dir, env={"LH_API_TOKEN": "launch-token-123"})
    try:
        url = f"{server.url}/api/health"
        missing = httpx.get(url)
        assert missing.status_code == 403 and missing.json()["error"] == "forbidden"
        assert httpx.get(url, headers={"x-lh-token": "nope"}).status_code == 403
        assert httpx.get(url, headers={"x-lh-token": "launch-token-123"}).status_code == 200
        assert (
            httpx.get(url, headers={"x-lh-token": "launch-token-123", "host": "evil.example"}).status_code
            == 403
        )
        foreign = httpx.get(url, headers={"x-lh-token": "launch-token-123", "origin": "https://evil.example"})
        assert foreign.status_code == 403 and "other sites" in foreign.json()["detail"]
    finally:
        assert server.stop() == 0


def test_desktop_shutdown_and_stdin_eof(data_dir: Path) -> None:
    write_settings(data_dir, unreachable_slot())
    server = start_server(data_dir, env={"LH_API_TOKEN": "tok-0123456789"})
    stop = httpx.post(f"{server.url}/api/shutdown", headers={"x-lh-token": "tok-0123456789"})
    assert stop.status_code == 202
    assert server.process.wait(20) == 0
    web = start_server(data_dir)  # web mode: no shutdown route
    try:
        assert httpx.post(f"{web.url}/api/shutdown").status_code in (404, 405)
    finally:
        assert web.stop() == 0
    eof = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", "0", "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=server_env({"LH_EXIT_ON_STDIN_EOF": "1"}),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert eof.stdout is not None and eof.stdout.readline().startswith("LH_READY")
    assert eof.stdin is not None
    eof.stdin.close()  # the desktop shell died
    assert eof.wait(20) == 0


def test_no_stdout_at_all(data_dir: Path) -> None:
    write_settings(data_dir, unreachable_slot())
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; sys.stdout.close(); sys.stdout = None; "
            "from server.__main__ import main; sys.exit(main())",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
        ],
        cwd=ROOT,
        env=server_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(200):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise AssertionError(process.stderr.read() if process.stderr else "not ready")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
