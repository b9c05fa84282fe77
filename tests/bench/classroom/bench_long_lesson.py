"""Benchmark (issue 15): server time per lesson turn at 10 / 1,000 / 10,000 messages, and
`GET /api/chats` at 10 / 1,000 sessions, each as a ratio to the small case measured in the same run.

Run: `.venv/bin/python -m tests.bench.classroom.bench_long_lesson` (`LH_BENCH_ONLY=list`: the session list
alone; `LH_BENCH_HEAP=0`: CPython's collector defaults instead of the server's heap policy,
server/services/machine_room/heap.py, which `python -m server` installs). Figures go to docs/benchmarks.md.
The model is a scripted stub that answers at once (pydantic-ai FunctionModel), so a turn's time is
the server's own: accepting the request, the write-ahead save, building the model's view, the
agent run over it, folding and persisting the reply. Realistic records: ~60-character learner
lines and ~380-character teacher replies, alternating (tests/unit/classroom/test_context.py `lesson`).
The app runs in-process (httpx over ASGI); medians of 7 consecutive turns of one lesson (a lesson
is continued in a running server, as a learner does; the first turn, which reads the record cold,
is not counted). Each figure is wall time, with the process's CPU time beside it (wall minus CPU
is mostly waiting for the disk's fdatasync and for other processes on the shared cores).

Three kinds of turn: a learner's message; an answer to a pending quiz (the teacher asked it in the
turn before, which is not counted); and a learner's message through the real engine path, the
openai SDK over loopback HTTP to a scripted OpenAI-compatible server (tests/stub_openai.py, in a
process of its own: the turn's time includes its answer, not its CPU).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from server.services.machine_room import heap
from tests.bench.loop_probe import PathClock
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT
from tests.flows.workbench.test_workbench import teaching_record
from tests.procs import scripted_slot
from tests.scripts.classroom import TEACH_QUIZ
from tests.unit.classroom.test_context import lesson

RUNS = int(os.environ.get("LH_BENCH_RUNS", "7"))
URL = "http://127.0.0.1:8765"


QUIZ_ME = "Quiz me on that."


async def _instant(messages: list[ModelMessage], __: AgentInfo) -> AsyncIterator[Any]:
    last = messages[-1]
    asked = isinstance(last, ModelRequest) and any(
        isinstance(p, UserPromptPart) and QUIZ_ME in str(p.content) for p in last.parts
    )
    if asked:  # the teacher asks a quiz (a deferred call: the turn ends with the question pending)
        yield {
            0: DeltaToolCall(name="quiz", json_args=json.dumps(TEACH_QUIZ), tool_call_id=_call_id(messages))
        }
        return
    yield "Right: the derivative of x cubed is 3x squared."


def _call_id(messages: list[ModelMessage]) -> str:
    return f"call_quiz_{len(messages)}"


async def _summary(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("We derived the power rule from the difference quotient.")])


def _services(data: Path, stub_url: str | None = None) -> Any:
    """The app's services on `data`: the scripted FunctionModel, or with `stub_url` the real model
    factory (pydantic-ai's OpenAI model, the openai SDK) pointed at the loopback stub."""
    data.mkdir(parents=True, exist_ok=True)
    # the Library's trigger runs every turn (its coverage check is counted), but no extraction
    # starts: its chunk is larger than any lesson here (extraction is the Library's own benchmark)
    strong = scripted_slot(stub_url) if stub_url else COMPATIBLE_SLOT
    settings = {"models": {"strong": strong}, "graph": {"extractionChunkTokens": 100_000_000}}
    (data / "settings.json").write_text(json.dumps(settings))
    if stub_url:
        return build_services(DataPaths(data), offline=False, secrets=FakeSecrets())
    return build_services(
        DataPaths(data),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda resolved, key, url: FunctionModel(function=_summary, stream_function=_instant),
    )


def _said(text: str, mid: str, chat_id: str) -> dict[str, Any]:
    message = {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": chat_id, "trigger": "submit-message", "messages": [message]}


def _answer(stream: str, chat_id: str) -> dict[str, Any]:
    """The browser's answer to the quiz the reply streamed in `stream` (its SSE text)."""
    chunks = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: {")]
    message_id = next(c["messageId"] for c in chunks if c.get("type") == "start")
    call = next(c for c in chunks if c.get("type") == "tool-input-available" and c.get("toolName") == "quiz")
    part = {
        "type": "tool-quiz",
        "toolCallId": call["toolCallId"],
        "state": "output-available",
        "input": call["input"],
        "output": {"kind": "quiz", "chosen": 1},
    }
    return {
        "id": chat_id,
        "trigger": "submit-message",
        "messages": [{"id": message_id, "role": "assistant", "parts": [part]}],
    }


async def turn_times(size: int, root: Path, kind: str = "message") -> list[tuple[float, float, float]]:
    """(wall ms, CPU ms, in-app ms) per turn on a lesson of `size` messages: one lesson, `RUNS` + 1
    timed turns (the first warms the process and the caches, and is not counted). `kind`: "message"
    (a learner's message), "answer" (the answer to a quiz asked in the untimed turn before it), or "engine" (a
    learner's message through the openai SDK to the loopback stub)."""
    if kind == "engine":
        with stub_process() as stub_url:
            return await _turn_times(size, root / f"engine-{size}", kind, stub_url)
    return await _turn_times(size, root / f"{kind}-{size}", kind, None)


@contextlib.contextmanager
def stub_process() -> Iterator[str]:
    """The scripted OpenAI-compatible stub (answers at once) in a process of its own, so neither
    its CPU nor its share of the GIL is counted in the server's turn. Yields its base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = (
        "import uvicorn; from tests.stub_openai import create_stub; "
        f"uvicorn.run(create_stub(delay_s=0), host='127.0.0.1', port={port}, log_level='warning')"
    )
    child = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[3])
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        yield url
    finally:
        child.terminate()
        child.wait(10)


async def _turn_times(
    size: int, data: Path, kind: str, stub_url: str | None
) -> list[tuple[float, float, float]]:
    services = _services(data, stub_url)
    spans: list[tuple[float, float]] = []
    # the server's own time per turn: from the call (the request parsed, as uvicorn would hand it
    # over) to the last body message, without the in-process client building the request and
    # reading the stream; the turn's settled side channels run after that (in the CPU figure only)
    app = PathClock(create_app(services), spans, "/api/chat")
    out = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL, timeout=120) as client:
        chat_id = (await client.post("/api/chats", json={})).json()["id"]
        path = services.paths.chats / f"{chat_id}.json"
        record = json.loads(path.read_text())
        record["messages"] = [*teaching_record(chat_id), *lesson(size)[2:]]  # probed and planned
        path.write_text(json.dumps(record))
        for n in range(RUNS + 1):
            if kind == "answer":  # the teacher asks (not timed), then the learner answers (timed)
                asked = await client.post("/api/chat", json=_said(QUIZ_ME, f"ask{n}", chat_id))
                assert asked.status_code == 200, asked.text
                await _settle(services)
                body = _answer(asked.text, chat_id)
            else:
                body = _said("And x cubed?", f"new{n}", chat_id)
            start, cpu = time.perf_counter(), time.process_time()
            response = await client.post("/api/chat", json=body)
            elapsed, used = (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000
            assert response.status_code == 200 and '"type":"error"' not in response.text, response.text
            if n:
                called, ended = spans[-1]
                out.append((elapsed, used, (ended - called) * 1000))
            await _settle(services)
    await services.shutdown()
    return out


async def _settle(services: Any) -> None:
    """Between turns, the settled turn's background work ends (a learner reads, then types): the
    running summary's steps (instant here) are not counted in the next turn."""
    await asyncio.gather(*services.context.refreshing.values(), return_exceptions=True)
    await asyncio.sleep(0.05)


async def list_times(sessions: int, root: Path, changed: bool = False) -> list[tuple[float, float]]:
    """(wall ms, CPU ms) of `GET /api/chats` over `sessions` sessions, `RUNS` times; with
    `changed`, each after a rename of one session (not timed), so the listing is made again."""
    services = _services(root / f"list-{sessions}-{changed}")
    app = create_app(services)
    out = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as client:
        ids = [(await client.post("/api/chats", json={})).json()["id"] for _ in range(sessions)]
        await client.get("/api/chats")  # the first listing of a process scans the record files
        for n in range(RUNS):
            if changed:
                renamed = await client.patch(f"/api/chats/{ids[n % sessions]}", json={"title": f"Lesson {n}"})
                assert renamed.status_code == 200, renamed.text
            start, cpu = time.perf_counter(), time.process_time()
            response = await client.get("/api/chats")
            out.append(((time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000))
            assert response.status_code == 200 and len(response.json()["chats"]) >= sessions
    await services.shutdown()
    return out


async def main_async() -> None:
    with tempfile.TemporaryDirectory(prefix="lh-bench-") as tmp:
        root = Path(tmp)
        print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
        if os.environ.get("LH_BENCH_HEAP", "1") == "1":  # as `python -m server` runs (0: CPython's defaults)
            heap.install()
        print(f"heap policy (server/services/machine_room/heap.py): {'on' if heap.installed() else 'off'}")
        titles = {
            "message": "a learner's message (scripted model, answers at once)",
            "answer": "an answer to a pending quiz (scripted model)",
            "engine": "a learner's message via the openai SDK to a loopback stub",
        }
        only = os.environ.get("LH_BENCH_ONLY")  # "list": the session list alone
        for kind, title in titles.items():
            if only == "list":
                break
            print(f"server time per turn, median of {RUNS}: {title}; wall ms (CPU ms) [in the app ms]")
            base = None
            for size in (10, 1_000, 10_000):
                times = await turn_times(size, root, kind)
                wall = statistics.median(t[0] for t in times)
                cpu = statistics.median(t[1] for t in times)
                in_app = statistics.median(t[2] for t in times)
                base = base or wall
                print(
                    f"  {size:>6} messages: {wall:8.1f} ms ({cpu:6.1f}) [{in_app:6.1f}]"
                    f"   x{wall / base:5.2f} of 10 messages"
                )
        for changed in (False, True):
            after = ", each right after a rename (the list made again)" if changed else ""
            print(f"GET /api/chats, median of {RUNS}{after}; wall ms (CPU ms)")
            base = None
            for sessions in (10, 1_000):
                times = await list_times(sessions, root, changed)
                wall = statistics.median(t[0] for t in times)
                cpu = statistics.median(t[1] for t in times)
                base = base or wall
                print(f"  {sessions:>6} sessions: {wall:8.1f} ms ({cpu:6.1f})   x{wall / base:5.2f} of 10")


if __name__ == "__main__":
    asyncio.run(main_async())
