"""Benchmark (issue 31, item 1): `GET /api/chats/{id}/export.md` of a 10,000-message lesson, time
and peak memory, beside the record's size on disk and the document's size.

Run: `.venv/bin/python -m tests.bench.classroom.bench_export`. Figures go to docs/benchmarks.md.

The app runs in this process behind a real uvicorn server on loopback (tests/livehttp.py); the
client streams the answer and drops each block as it arrives, so what is measured is the
server's side. The lesson is tests/unit/classroom/test_context.py's `lesson(10_000)` (~60-character
learner lines, ~380-character teacher replies) with a quiz every 20th teacher message and a
usage row per teacher message.

- cold: the first export after the server starts (measured: the server's start already reads
  every record, the session index's scan, so the record is cached by then; its read is the
  start's peak, not the export's);
- warm: the record is in the store's read cache (what a learner exporting an open lesson gets);
- memory: tracemalloc (Python allocations, all threads), in a run apart from the timed ones
  (tracing slows the export): the cold peak counted from before the server is built (its start,
  the record read into the cache, one export), what stays held after it (the cached record, the
  server), and the peak of a warm export above that. "Held once": the warm export's peak is a
  small fraction of the document (one 64 KiB block and one message's text at a time), and the
  cold peak exceeds what stays held by about as much, never by a second copy of the lesson.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models.function import FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT
from tests.livehttp import serve
from tests.scripts.classroom import TEACH_QUIZ
from tests.unit.classroom.test_context import lesson

RUNS = int(os.environ.get("LH_BENCH_RUNS", "5"))
MESSAGES = 10_000


def long_lesson() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, usage) of the benchmark's lesson."""
    messages = lesson(MESSAGES)
    usage = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        if i % 40 == 1 and i > 1:
            quiz = {
                "type": "tool-quiz",
                "toolCallId": f"call_quiz_{i}",
                "state": "output-available",
                "input": TEACH_QUIZ,
                "output": {"kind": "quiz", "chosen": 1, "correct": True},
            }
            message["parts"] = [*message["parts"], quiz]
        usage.append(
            {
                "messageId": message["id"],
                "role": "teacher",
                "provider": "openai-compatible",
                "model": "scripted",
                "inputTokens": 12_000,
                "outputTokens": 120,
                "requests": 1,
                "costUsd": None,
                "at": "2026-12-01T00:00:00Z",
            }
        )
    return messages, usage


def never_called(*_: object) -> ModelResponse:
    raise AssertionError("an export calls no model")


def export(client: httpx.Client, chat_id: str) -> int:
    """One export, streamed and dropped; returns its size in bytes."""
    size = 0
    with client.stream("GET", f"/api/chats/{chat_id}/export.md") as response:
        assert response.status_code == 200, response.read()
        for block in response.iter_raw():
            size += len(block)
    return size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        (data / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))

        def app() -> Any:
            services = build_services(
                DataPaths(data),
                offline=False,
                secrets=FakeSecrets(),
                model_factory=lambda *_: FunctionModel(never_called),
            )
            return create_app(services)

        first = app()
        with serve(first) as url, httpx.Client(base_url=url, timeout=120) as client:
            chat_id = client.post("/api/chats", json={}).json()["id"]
        path = data / "chats" / f"{chat_id}.json"
        record = json.loads(path.read_text())
        record["messages"], record["usage"] = long_lesson()
        record.pop("logGeneration", None)
        path.write_text(json.dumps(record))
        record_bytes = path.stat().st_size

        cold, warm = [], []
        size = 0
        for _ in range(RUNS):
            with serve(app()) as url, httpx.Client(base_url=url, timeout=120) as client:
                start = time.perf_counter()
                size = export(client, chat_id)
                cold.append(time.perf_counter() - start)
                for _ in range(2):
                    start = time.perf_counter()
                    export(client, chat_id)
                    warm.append(time.perf_counter() - start)

        # cold: traced from before the app is built (a server start may read the record into its
        # cache before any request); warm: a second export, traced alone
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        with serve(app()) as url, httpx.Client(base_url=url, timeout=120) as client:
            started, start_peak = tracemalloc.get_traced_memory()
            export(client, chat_id)
            held, cold_peak = tracemalloc.get_traced_memory()
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            export(client, chat_id)
            warm_peak = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
        peaks = {
            "started": started - base,
            "start_peak": start_peak - base,
            "cold": cold_peak - base,
            "held": held,
            "warm": warm_peak,
        }

    mib = 2**20
    print(f"lesson: {MESSAGES:,} messages, record {record_bytes / mib:.1f} MiB, export {size / mib:.1f} MiB")
    for name, times in (("cold", cold), ("warm", warm)):
        runs = ", ".join(f"{t * 1000:.0f}" for t in times)
        print(f"{name} export: median {statistics.median(times) * 1000:.0f} ms (runs: {runs})")
    print(
        f"memory from before the server was built: started {peaks['started'] / mib:.1f} MiB held "
        f"(peak {peaks['start_peak'] / mib:.1f} MiB while reading the record); first export peak "
        f"{peaks['cold'] / mib:.1f} MiB, {peaks['held'] / mib:.1f} MiB held after it"
    )
    print(f"second export: peak {peaks['warm'] / mib:.2f} MiB above what was held before it")


if __name__ == "__main__":
    main()
