"""Benchmark: the chat store's reads and writes for long lessons and many sessions (issue 15).

Run: `.venv/bin/python -m tests.bench.classroom.bench_chat_store`. Figures go to docs/benchmarks.md.

1. The session list at 10 and 1,000 sessions (20 messages each): `ChatService.list` warm (the
   index in memory, record files only stat'ed), in a fresh process (the index file read once),
   and the way it was done before issue 15 (every record read, parsed, validated, summarized);
   and `GET /api/chats` over the in-process app (ASGI, JSON encoding included).
2. One record at 10 / 1,000 / 10,000 messages (learner lines of ~60 characters, teacher replies
   of ~380): `get` and `record_json` cold (the file changed: read, parse, validate) and cached;
   `GET /api/chats/{id}` cold and cached, against the route before issue 15 (parse, validate,
   `model_dump`, FastAPI's `jsonable_encoder`, `json.dumps`).
3. A save at those sizes (compact JSON, fsync, rename, index row), against the pretty write
   before issue 15.

Medians in milliseconds over repeated runs (min-max in brackets where it matters); ratios are of
figures measured in the same run.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from fastapi.encoders import jsonable_encoder
from fastapi.testclient import TestClient

from server.core.contracts.chat import ChatRecord, summarize
from server.core.contracts.models import ModelRef
from server.core.fanout import FanOut
from server.services.chats import ChatService
from server.services.liveness import TurnRegistry
from server.store.atomic import read_json, write_json_atomic
from server.store.classroom.chats import FileChatStore, compact_json
from tests.bench.common import timed
from tests.flows.inprocess import LOOPBACK, scripted_app

LEARNER = "Why does the derivative of x squared equal two x, exactly? "  # 60 chars
TEACHER = (
    "Think of the square's area growing as its side grows by a tiny amount h. The new area is "
    "(x + h)^2 = x^2 + 2xh + h^2, so the area grew by 2xh + h^2. Divide by h to get the rate: "
    "2x + h. As h shrinks toward zero the leftover h vanishes and the rate settles at 2x. Try "
    "it with x = 3: the side grows from 3 to 3.001 and the area from 9 to about 9.006, a rate of "
    "6, which is 2 times 3. "
)  # ~380 chars


def messages(count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(count):
        if i % 2 == 0:
            out.append({"id": f"u{i}", "role": "user", "parts": [{"type": "text", "text": LEARNER}]})
        else:
            out.append(
                {
                    "id": f"a{i}",
                    "role": "assistant",
                    "parts": [{"type": "step-start"}, {"type": "text", "text": TEACHER, "state": "done"}],
                }
            )
    return out


def chat(chat_id: str, count: int, minute: int = 0) -> ChatRecord:
    return ChatRecord(
        id=chat_id,
        title=LEARNER[:40],
        created_at="2026-01-01T00:00:00.000Z",
        updated_at=f"2026-01-01T{minute // 60 % 24:02d}:{minute % 60:02d}:00.000Z",
        model=ModelRef(provider="openrouter", model="anthropic/claude-sonnet-4"),
        messages=messages(count),
    )


def _reader(store: FileChatStore) -> ChatService:
    """A ChatService for reading the list (no model, no fan-out handlers, no workers)."""
    return ChatService(store, None, TurnRegistry(), fanout=FanOut({}), jobs_computing=lambda _: False)  # type: ignore[arg-type]


def med(values: list[float]) -> float:
    return statistics.median(values)


def span(values: list[float]) -> str:
    return f"{med(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def changed(path: Path) -> None:
    """Make the store see the file as changed (its mtime moves on; the bytes stay)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


def old_get_route(root: Path, chat_id: str) -> bytes:
    """`GET /api/chats/{id}` before issue 15: parse, validate, dump, encode (FastAPI's way)."""
    record = ChatRecord.model_validate(read_json(root / f"{chat_id}.json")).model_dump(by_alias=True)
    record["running"] = False
    record["lastFailure"] = None
    return json.dumps(jsonable_encoder(record), ensure_ascii=False, separators=(",", ":")).encode()


def old_list(root: Path) -> list[Any]:
    """`ChatService.list` before issue 15: every record read, parsed, validated."""
    rows = [summarize(r) for r in FileChatStore(root).list()]
    return sorted(rows, key=lambda r: r.updated_at, reverse=True)


def app_client(data: Path) -> TestClient:
    return TestClient(scripted_app(data), base_url=LOOPBACK)


def bench_list() -> None:
    print("Session list (sessions of 20 messages)")
    print(
        f"{'sessions':>8} {'list warm ms':>20} {'list new process':>17} {'before ms':>10} "
        f"{'before/warm':>11} {'GET /api/chats ms':>18} {'index KB':>9}"
    )
    for size in (10, 1_000):
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp)
            root = data / "chats"
            root.mkdir()
            for i in range(size):
                (root / f"c_{i:016x}.json").write_bytes(compact_json(chat(f"c_{i:016x}", 20, minute=i)))
            FileChatStore(root).summaries()  # builds the index file once
            service = _reader(FileChatStore(root))
            service.list()
            warm = timed(service.list, 21)
            fresh = timed(lambda r=root: _reader(FileChatStore(r)).list(), 11)
            before = timed(lambda r=root: old_list(r), 5)
            client = app_client(data)
            assert len(client.get("/api/chats").json()["chats"]) == size
            http = timed(lambda c=client: c.get("/api/chats"), 21)
            index_kb = (root / ".index.json").stat().st_size / 1024
            print(
                f"{size:>8} {span(warm):>20} {med(fresh):>17.2f} {med(before):>10.1f} "
                f"{med(before) / med(warm):>10.0f}x {span(http):>18} {index_kb:>9.0f}"
            )


def bench_record() -> None:
    print()
    print("One record (get / record_json: the store; GET: the route over ASGI)")
    print(
        f"{'messages':>8} {'file KB':>8} {'get cold':>9} {'get cached':>10} {'json cold':>10} "
        f"{'json cached':>11} {'GET cold':>9} {'GET cached':>10} {'GET before':>11} {'before/cached':>13}"
    )
    for size in (10, 1_000, 10_000):
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp)
            root = data / "chats"
            FileChatStore(root).save(chat("c_long", size))
            path = root / "c_long.json"
            repeat = 9 if size >= 10_000 else 21
            store = FileChatStore(root)

            def cold_get(s: FileChatStore = store, p: Path = path) -> None:
                changed(p)
                s.get("c_long")

            def cold_json(s: FileChatStore = store, p: Path = path) -> None:
                changed(p)
                s.record_json("c_long")

            get_cold = timed(cold_get, repeat)
            get_cached = timed(lambda s=store: s.get("c_long"), repeat)
            json_cold = timed(cold_json, repeat)
            json_cached = timed(lambda s=store: s.record_json("c_long"), repeat)

            client = app_client(data)
            answered = client.get("/api/chats/c_long")
            assert answered.status_code == 200 and json.loads(answered.content) == json.loads(
                old_get_route(root, "c_long")
            )

            def cold_http(c: TestClient = client, p: Path = path) -> None:
                changed(p)
                c.get("/api/chats/c_long")

            http_cold = timed(cold_http, repeat)
            http_cached = timed(lambda c=client: c.get("/api/chats/c_long"), repeat)
            before = timed(lambda r=root: old_get_route(r, "c_long"), repeat)
            print(
                f"{size:>8} {path.stat().st_size / 1024:>8.0f} {med(get_cold):>9.2f} "
                f"{med(get_cached):>10.3f} {med(json_cold):>10.2f} {med(json_cached):>11.3f} "
                f"{med(http_cold):>9.2f} "
                f"{med(http_cached):>10.2f} {med(before):>11.1f} {med(before) / med(http_cached):>12.0f}x"
            )


def bench_save() -> None:
    print()
    print("A save (one message appended; compact JSON + fsync + rename + the index row)")
    print(f"{'messages':>8} {'save ms':>20} {'pretty write before ms':>23} {'before/save':>11}")
    for size in (10, 1_000, 10_000):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "chats"
            store = FileChatStore(root)
            base = chat("c_long", size)
            store.save(base)
            for i in range(999):  # the index holds 1,000 sessions
                (root / f"c_{i:016x}.json").write_bytes(compact_json(chat(f"c_{i:016x}", 2)))
            store.summaries()
            repeat = 9 if size >= 10_000 else 21
            extra = [
                *base.messages,
                {"id": "u_new", "role": "user", "parts": [{"type": "text", "text": LEARNER}]},
            ]
            grown = base.model_copy(update={"messages": extra})
            save = timed(lambda s=store, g=grown: s.save(g), repeat)
            pretty = timed(
                lambda r=root, g=grown: write_json_atomic(
                    r / "c_long.json", g.model_dump(mode="json", by_alias=True)
                ),
                repeat,
            )
            print(f"{size:>8} {span(save):>20} {med(pretty):>23.2f} {med(pretty) / med(save):>10.1f}x")


def main() -> None:
    bench_list()
    bench_record()
    bench_save()


if __name__ == "__main__":
    main()
