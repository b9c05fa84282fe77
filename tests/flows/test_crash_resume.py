"""Work the app accepted survives kill -9 (issue 26, item 4), over a real `python -m server`.

A scripted OpenAI-compatible model on loopback plays the extractor, auditor, partitioner,
generator and grader (`tests/scripts/practice.py`); a switch holds its answers of one kind, so the
work is in flight when the server is killed. After the restart, with the switch released:
- a notes import's files run again in their import's summary row, labelled "(resumed after a
  restart)" under the import's own id, and each note reaches the graph once;
- a lesson whose "Add to my graph now" was answered is extracted at once (its idle flush is an
  hour away);
- a practice set killed while its problems were being written ends `ready`.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from server.core.contracts.chat import ChatRecord
from server.core.contracts.models import ModelRef
from server.store.classroom.chats import FileChatStore
from server.store.library.graph import FileGraphStore
from tests.flows.classroom.test_lesson_extraction import PROBE_DONE
from tests.livehttp import serve
from tests.procs import ServerProcess, scripted_slot, start_server
from tests.scripts.practice import practice_reply
from tests.stub_openai import Reply, create_stub, last_user_text

WAIT_S = 120.0


class Held:
    """The stub's switch: while `kind` is set, requests of that kind ("extract": extractor and
    auditor; "generate": the practice generator) wait; `seen` counts requests by kind."""

    def __init__(self) -> None:
        self.kind: str | None = None
        self.seen: Counter[str] = Counter()

    async def reply(self, body: dict[str, Any]) -> Reply:
        kind = _kind(body)
        self.seen[kind] += 1
        while self.kind == kind:
            await asyncio.sleep(0.02)
        return practice_reply(body)


def _kind(body: dict[str, Any]) -> str:
    text = last_user_text(body)
    if text.startswith("THE LEVELS OF THIS SET:"):
        return "generate" if "YOUR TARGET" in text else "partition"
    if text.startswith("THE PROBLEM:"):
        return "grade"
    return "extract"


@contextmanager
def stubbed(data: Path) -> Iterator[tuple[Held, str]]:
    held = Held()
    with serve(create_stub(held.reply)) as stub_url:
        data.mkdir(parents=True, exist_ok=True)
        settings = {"models": {"strong": scripted_slot(stub_url)}, "graph": {"lessonIdleSeconds": 3600}}
        (data / "settings.json").write_text(json.dumps(settings))
        yield held, stub_url


def until(what: str, check: Callable[[], Any], timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def feed(proc: ServerProcess) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = httpx.get(f"{proc.url}/api/activity", timeout=30).json()["rows"]
    return rows


def quiet(proc: ServerProcess) -> bool:
    return all(r["phase"] in ("done", "error", "aborted") for r in feed(proc))


def kill(proc: ServerProcess) -> None:
    proc.process.send_signal(signal.SIGKILL)
    proc.process.wait(30)


def test_an_import_killed_in_flight_resumes_in_its_summary_row(data_dir: Path) -> None:
    notes = [(f"vault/n{i}.md", f"# Idea {i} alpha\nClaim {i} beta holds.\n") for i in range(5)]
    with stubbed(data_dir) as (held, _):
        held.kind = "extract"
        proc = start_server(data_dir)
        files = [("files", (name, text.encode(), "text/markdown")) for name, text in notes]
        answer = httpx.post(f"{proc.url}/api/graph/import", files=files, timeout=60)
        assert answer.status_code == 202, answer.text
        import_id = answer.json()["importId"]
        queued = {f["sourceId"] for f in answer.json()["files"] if f["status"] == "queued"}
        assert len(queued) == 5
        until("the extractor to be asked", lambda: held.seen["extract"])
        kill(proc)
        held.kind = None
        proc = start_server(data_dir)
        try:
            [row] = [r for r in feed(proc) if r["kind"] == "import"]
            assert row["importId"] == import_id
            assert row["label"] == "Notes you picked (resumed after a restart) · 5 files"
            until("the resumed import to end", lambda: quiet(proc))
            rows = feed(proc)
            [row] = [r for r in rows if r["kind"] == "import"]
            assert row["phase"] == "done" and row["counts"]["done"] == 5, row
            assert {r["source"] for r in rows if r["kind"] == "notes"} == queued  # the resumed rows
            assert all(r["phase"] == "done" for r in rows if r["kind"] == "notes")
        finally:
            assert proc.stop() == 0
    names = Counter(n.name for n in FileGraphStore(data_dir / "graph").nodes().values())
    for i in range(5):
        assert names[f"Idea {i} alpha"] == 1 and names[f"Claim {i} beta holds."] == 1, names


def test_a_lesson_flushed_before_the_crash_is_extracted_after_it(data_dir: Path) -> None:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    chat_id = "c_0123456789abcdef"
    prose = "Heap order keeps the minimum at the root.\nSift-down restores it after a removal.\n"
    FileChatStore(data_dir / "chats").save(
        ChatRecord(
            id=chat_id,
            title="Heaps",
            created_at=now,
            updated_at=now,  # its idle flush is an hour away (lessonIdleSeconds)
            model=ModelRef(provider="openai-compatible", model="scripted"),
            messages=[
                {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Teach me heaps"}]},
                {"id": "a0", "role": "assistant", "parts": [PROBE_DONE]},
                {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": prose}]},
            ],
        )
    )
    with stubbed(data_dir) as (held, _):
        held.kind = "extract"
        proc = start_server(data_dir)
        flushed = httpx.post(f"{proc.url}/api/chats/{chat_id}/graph", json={}, timeout=30)
        assert flushed.status_code == 202 and flushed.json()["status"] == "started", flushed.text
        until("the extractor to be asked", lambda: held.seen["extract"])
        kill(proc)
        held.kind = None
        proc = start_server(data_dir)
        try:
            rows = [r for r in feed(proc) if r["source"] == chat_id]
            assert rows, "the lesson's run shows in the feed at once"
            until("the lesson's run to end", lambda: quiet(proc))
            coverage = httpx.get(f"{proc.url}/api/chats/{chat_id}/coverage", timeout=30).json()
            assert coverage["pending"] is None and not coverage["running"], coverage
        finally:
            assert proc.stop() == 0
    graph = FileGraphStore(data_dir / "graph")
    names = Counter(n.name for n in graph.nodes().values() if chat_id in n.sources)
    assert names == {
        "Heap order keeps the minimum at the root.": 1,
        "Sift-down restores it after a removal.": 1,
    }
    assert graph.covered(chat_id)  # its prose is covered: nothing waits for a trigger


def test_a_practice_set_killed_while_generating_ends_ready(data_dir: Path) -> None:
    with stubbed(data_dir) as (held, _):
        proc = start_server(data_dir)
        note = [
            ("files", ("heap.md", b"# Binary heap\n# Heap order\n# Root is the minimum\n", "text/markdown"))
        ]
        assert httpx.post(f"{proc.url}/api/graph/import", files=note, timeout=60).status_code == 202
        until("the note to merge", lambda: quiet(proc) and FileGraphStore(data_dir / "graph").nodes())
        nodes = list(FileGraphStore(data_dir / "graph").nodes())
        held.kind = "generate"
        created = httpx.post(f"{proc.url}/api/practice/sets", json={"nodeIds": nodes}, timeout=30)
        assert created.status_code == 202, created.text
        set_id = created.json()["id"]

        def status() -> str:
            return str(httpx.get(f"{proc.url}/api/practice/sets/{set_id}", timeout=30).json()["status"])

        until("the generator to be asked", lambda: held.seen["generate"] and status() == "generating")
        kill(proc)
        held.kind = None
        proc = start_server(data_dir)
        try:
            until("the set to end", lambda: status() in ("ready", "error"))
            done = httpx.get(f"{proc.url}/api/practice/sets/{set_id}", timeout=30).json()
            assert done["status"] == "ready", done
            assert all(p["status"] == "ready" and p["statement"] for p in done["problems"])
            assert any(r["id"].startswith(f"{set_id}:gen:") for r in feed(proc))  # its resumed rows
        finally:
            assert proc.stop() == 0
