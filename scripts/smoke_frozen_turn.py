"""Smoke test of a server build: one scripted lesson turn through it, as the desktop app runs it.

Usage (from the repo root, after `build/freeze.py`):

    python scripts/smoke_frozen_turn.py                       # dist/learning-harness-server/...
    python scripts/smoke_frozen_turn.py --python              # `python -m server` instead

Starts the scripted OpenAI-compatible model (tests/stub_openai.py) on loopback, writes a fresh data
dir whose strong slot points at it, spawns the server as Electron main does (env only:
LH_DATA_DIR, LH_API_TOKEN, LH_EXIT_ON_STDIN_EOF; argv `--host 127.0.0.1 --port 0`; stdin an open
pipe), reads its `LH_READY {"port", "pid"}` line, and with the token header:

1. `GET /api/health` is 200, names the data dir (and, with `--expect-version V`, reports V); the
   same request without the token is 403;
2. `POST /api/chats` then `POST /api/chat` with one learner message streams the model's reply to
   `data: [DONE]`, and `GET /api/chats/{id}` holds it as the last message (the record was saved);
3. the scripted model received the teacher's system prompt and the learner's text;
4. `POST /api/shutdown` (202) stops the server with exit status 0 within 20 s, on every OS.

Prints one line per check and exits 0, or prints what failed (with the server's stderr tail) and
exits 1. Runs on Linux, macOS and Windows (a reader thread, not select(), waits for the ready line).
Nothing reaches the internet: the only model is the loopback stub.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "learning-harness-server"
FROZEN = ROOT / "dist" / NAME / (NAME + (".exe" if sys.platform == "win32" else ""))
LESSON = "derivatives"
EXPECTED_REPLY = f"You asked: *{LESSON}*. The derivative of $x^2$ is $2x$."  # tests/stub_openai.default_reply


class SmokeFailure(RuntimeError):
    """A check failed (message: which, and what was seen)."""


def smoke(
    command: list[str], timeout: float = 60.0, say: object = print, expect_version: str | None = None
) -> None:
    """Run the checks against the server started by `command` (+ `--host 127.0.0.1 --port 0`);
    with `expect_version`, `/api/health` must report it (the tag's version reached the build).
    Raises SmokeFailure with the server's stderr tail."""
    import httpx

    from tests.livehttp import serve
    from tests.procs import NotReady, read_ready_line
    from tests.stub_openai import create_stub

    report = say if callable(say) else print
    stub = create_stub(delay_s=0)
    token = secrets.token_hex(32)
    with serve(stub) as stub_url, tempfile.TemporaryDirectory(prefix="lh-smoke-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        slot = {"provider": "openai-compatible", "model": "scripted", "baseUrl": f"{stub_url}/v1"}
        (data / "settings.json").write_text(json.dumps({"models": {"strong": slot}}), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(
            {
                "LH_DATA_DIR": str(data),
                "LH_API_TOKEN": token,
                "LH_EXIT_ON_STDIN_EOF": "1",
                "LH_LOG_LEVEL": "warning",
                "LH_KEYRING": "off",
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
                "PYTHONPATH": str(ROOT),
            }
        )
        stderr_path = Path(tmp) / "stderr.log"
        with stderr_path.open("w", encoding="utf-8") as stderr:
            process = subprocess.Popen(
                [*command, "--host", "127.0.0.1", "--port", "0"],
                cwd=ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        try:
            assert process.stdout is not None
            try:
                port = int(read_ready_line(process.stdout, timeout)["port"])
            except NotReady as error:
                raise SmokeFailure(str(error)) from error
            report(f"ok ready on port {port} (pid {process.pid})")
            url = f"http://127.0.0.1:{port}"
            headers = {"x-lh-token": token}
            with httpx.Client(base_url=url, headers=headers, timeout=timeout) as client:
                health = client.get("/api/health")
                if health.status_code != 200 or Path(health.json()["dataDir"]) != data.resolve():
                    raise SmokeFailure(f"health: {health.status_code} {health.text[:300]}")
                reported = health.json()["version"]
                if expect_version is not None and reported != expect_version:
                    raise SmokeFailure(f"health reports version {reported!r}, not {expect_version!r}")
                if httpx.get(f"{url}/api/health", timeout=10).status_code != 403:
                    raise SmokeFailure("health answered without the token")
                report(f"ok health {health.json()['version']}, token required")
                chat_id = client.post("/api/chats", json={"demo": True}).json()["id"]
                message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": LESSON}]}
                turn = client.post("/api/chat", json={"id": chat_id, "messages": [message]})
                if turn.status_code != 200 or not turn.text.endswith("data: [DONE]\n\n"):
                    raise SmokeFailure(f"turn: {turn.status_code} {turn.text[-500:]}")
                last = client.get(f"/api/chats/{chat_id}").json()["messages"][-1]
                text = last["parts"][-1].get("text") if last.get("parts") else None
                if last.get("role") != "assistant" or text != EXPECTED_REPLY:
                    raise SmokeFailure(f"the saved reply is {json.dumps(last)[:500]}")
                report("ok one lesson turn streamed and saved")
                # The teacher's request (a lesson-naming request may come later).
                if not any(
                    body.get("messages")
                    and body["messages"][0].get("role") == "system"
                    and body["messages"][-1].get("content") == LESSON
                    for body in stub.state.requests
                ):
                    raise SmokeFailure(f"the model was sent {json.dumps(stub.state.requests)[:500]}")
                report("ok the model got the teacher's system prompt and the learner's text")
                stop = client.post("/api/shutdown")
                if stop.status_code != 202:
                    raise SmokeFailure(f"shutdown: {stop.status_code} {stop.text[:300]}")
            code = process.wait(20)
            if code != 0:
                raise SmokeFailure(f"the server exited {code} after /api/shutdown")
            report("ok graceful shutdown, exit 0")
        except (SmokeFailure, subprocess.TimeoutExpired, httpx.HTTPError, KeyError, ValueError) as error:
            tail = stderr_path.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise SmokeFailure(f"{error}\n--- server stderr (tail) ---\n{tail}") from error
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
            for stream in (process.stdin, process.stdout):
                if stream:
                    stream.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exe", type=Path, default=FROZEN, help="the frozen server executable")
    parser.add_argument("--python", action="store_true", help="smoke-test `python -m server` instead")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds for the ready line and each call"
    )
    parser.add_argument("--expect-version", help="the version /api/health must report (PEP 440 spelling)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.python:
        command = [sys.executable, "-m", "server"]
    else:
        if not args.exe.is_file():
            print(f"smoke: {args.exe} does not exist: run build/freeze.py first", file=sys.stderr)
            return 1
        command = [str(args.exe)]
    print(f"smoke: {' '.join(command)}")
    try:
        smoke(command, args.timeout, expect_version=args.expect_version)
    except SmokeFailure as error:
        print(f"smoke: FAILED: {error}", file=sys.stderr)
        return 1
    print("smoke: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
