"""Benchmark (issue 15): server time per lesson turn at 10 / 1,000 / 10,000 messages, and
`GET /api/chats` at 10 / 1,000 sessions, each as a ratio to the small case measured in the same run.

Run: `.venv/bin/python -m tests.bench.bench_long_lesson`. Figures go to docs/benchmarks.md.
The model is a scripted stub that answers at once (pydantic-ai FunctionModel), so a turn's time is
the server's own: accepting the request, the write-ahead save, building the model's view, the
agent run over it, folding and persisting the reply. Realistic records: ~60-character learner
lines and ~380-character teacher replies, alternating (tests/unit/test_context.py `lesson`).
The app runs in-process (httpx over ASGI); medians of 7 consecutive turns of one lesson (a lesson
is continued in a running server, as a learner does; the first turn, which reads the record cold,
is not counted).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.services.container import build_services
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT
from tests.flows.test_workbench import teaching_record
from tests.unit.test_context import lesson

RUNS = 7
URL = "http://127.0.0.1:8765"


async def _instant(_: list[ModelMessage], __: AgentInfo) -> AsyncIterator[Any]:
    yield "Right: the derivative of x cubed is 3x squared."


async def _summary(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("We derived the power rule from the difference quotient.")])


def _services(data: Path) -> Any:
    data.mkdir(parents=True, exist_ok=True)
    # the Library's trigger runs every turn (its coverage check is counted), but no extraction
    # starts: its chunk is larger than any lesson here (extraction is the Library's own benchmark)
    settings = {"models": {"strong": COMPATIBLE_SLOT}, "graph": {"extractionChunkTokens": 100_000_000}}
    (data / "settings.json").write_text(json.dumps(settings))
    return build_services(
        DataPaths(data),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda resolved, key, url: FunctionModel(function=_summary, stream_function=_instant),
    )


async def turn_times(size: int, root: Path) -> list[float]:
    """Milliseconds per turn on a lesson of `size` messages: one lesson, `RUNS` + 1 turns in a row
    (the first warms the process and the caches, and is not counted; each turn adds two messages)."""
    services = _services(root / f"turns-{size}")
    app = create_app(services)
    out = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as client:
        chat_id = (await client.post("/api/chats", json={})).json()["id"]
        path = services.paths.chats / f"{chat_id}.json"
        record = json.loads(path.read_text())
        record["messages"] = [*teaching_record(chat_id), *lesson(size)[2:]]  # probed and planned
        path.write_text(json.dumps(record))
        for n in range(RUNS + 1):
            body = {
                "id": chat_id,
                "trigger": "submit-message",
                "messages": [
                    {"id": f"new{n}", "role": "user", "parts": [{"type": "text", "text": "And x cubed?"}]}
                ],
            }
            start = time.perf_counter()
            response = await client.post("/api/chat", json=body)
            assert response.status_code == 200, response.text
            elapsed = (time.perf_counter() - start) * 1000
            if n:
                out.append(elapsed)
            # between turns, the settled turn's background work ends (a learner reads, then types):
            # the running summary's steps (instant here) are not counted in the next turn
            await asyncio.gather(*services.context.refreshing.values(), return_exceptions=True)
            await asyncio.sleep(0.05)
    await services.shutdown()
    return out


async def list_times(sessions: int, root: Path) -> list[float]:
    services = _services(root / f"list-{sessions}")
    app = create_app(services)
    out = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as client:
        for _ in range(sessions):
            await client.post("/api/chats", json={})
        for _ in range(RUNS):
            start = time.perf_counter()
            response = await client.get("/api/chats")
            out.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200 and len(response.json()["chats"]) >= sessions
    await services.shutdown()
    return out


async def main_async() -> None:
    with tempfile.TemporaryDirectory(prefix="lh-bench-") as tmp:
        root = Path(tmp)
        print(f"server time per turn, median of {RUNS} (model excluded: it answers at once)")
        base = None
        for size in (10, 1_000, 10_000):
            median = statistics.median(await turn_times(size, root))
            base = base or median
            print(f"  {size:>6} messages: {median:8.1f} ms   x{median / base:5.2f} of 10 messages")
        print(f"GET /api/chats, median of {RUNS}")
        base = None
        for sessions in (10, 1_000):
            median = statistics.median(await list_times(sessions, root))
            base = base or median
            print(f"  {sessions:>6} sessions: {median:8.1f} ms   x{median / base:5.2f} of 10 sessions")


if __name__ == "__main__":
    asyncio.run(main_async())
