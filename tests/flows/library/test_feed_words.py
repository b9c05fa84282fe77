"""Issue 28 item 7: the feed's words are true. A row says it is reading ("extracting") only while
its model call runs, and an import's summary counts a launched file that waits for a model-call
permit or its turn to merge as waiting, not reading; a packed note's row shows its share of the
pack's tokens and calls, never "no model calls" beside its new propositions.

The notes door, the pipeline and the ledgers are real (in-process, a tmp data dir); the model is
the packed-extraction flows' scripted FunctionModel (`PackScript`), here counting its calls in
flight and held at a gate where a test needs a moment to look.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.usage import RunUsage

from server.agent.library.extraction import PackExtractor, run_pack_extractor
from server.core.contracts.graph import PackedFindings
from server.core.library.notes import source_id
from server.services.library import packs
from server.services.library.extraction import BACKGROUND_PERMITS, MAX_ACTIVE_RUNS
from tests.flows.graph_pipeline import Pipeline
from tests.flows.library.test_packed_extraction import NOTES, Door, PackScript, note


class Watched(PackScript):
    """`PackScript`, counting the model calls in flight (`calls`)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        try:
            return await super().model(messages, info)
        finally:
            self.calls -= 1


class WatchedDoor(Door):
    def __init__(self, root: Path) -> None:
        self.watched = Watched()
        Pipeline.__init__(self, root, self.watched, chunk_tokens=2000)


async def until(check: Callable[[], bool], what: str) -> None:
    """Wait (generously, on the condition, never a fixed sleep) until `check()` holds."""
    for _ in range(20_000):
        if check():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never: {what}")


def _summary(door: Door) -> dict[str, object]:
    [row] = [r for r in door.extraction.activity() if r["kind"] == "import"]
    return row


def test_a_row_reads_only_while_its_model_call_runs_and_the_summary_says_so(tmp_path: Path) -> None:
    door = WatchedDoor(tmp_path)
    door.extraction.pack_budget = 0  # each note its own call
    files = [(f"vault/n{i}.md", note(i).encode()) for i in range(MAX_ACTIVE_RUNS + 1)]
    seen: dict[str, object] = {}

    async def scenario() -> None:
        door.watched.gate = asyncio.Event()
        door.library.import_files(files, door.library.begin_import("Import of vault"))
        await until(lambda: door.watched.calls == BACKGROUND_PERMITS, "every permit's call running")
        rows = [r for r in door.extraction.activity() if r["kind"] == "notes"]
        seen["phases"] = sorted(r["phase"] for r in rows)
        seen["counts"] = _summary(door)["counts"]
        door.watched.gate.set()
        await door.extraction.wait_all()

    asyncio.run(scenario())
    # three calls hold the three permits: three rows read; the fourth launched run waits for one
    assert seen["phases"] == ["extracting"] * BACKGROUND_PERMITS + ["queued"]
    counts = seen["counts"]
    assert isinstance(counts, dict)
    assert counts["reading"] == BACKGROUND_PERMITS and counts["merging"] == 0
    assert counts["waiting"] == len(files) - BACKGROUND_PERMITS  # the launched one and the queued one
    assert counts["running"] == BACKGROUND_PERMITS  # reading + merging, not every launched file
    ended = _summary(door)["counts"]
    assert isinstance(ended, dict)
    assert ended["done"] == len(files) and ended["waiting"] == ended["running"] == ended["reading"] == 0
    # the import's row sums all its files' usage and stats, its rows still shown included
    rows = [r for r in door.extraction.activity() if r["kind"] == "notes"]
    summary = _summary(door)
    usage, stats = summary["usage"], summary["stats"]
    assert isinstance(usage, dict) and isinstance(stats, dict)
    assert len(rows) == len(files) and usage["requests"] == sum(r["usage"]["requests"] for r in rows) > 0
    assert usage["inputTokens"] == sum(r["usage"]["inputTokens"] for r in rows)
    assert stats["addedNodes"] == sum(r["stats"]["addedNodes"] for r in rows) == 2 * len(files)


def test_packed_rows_wait_for_their_turn_and_an_aborted_one_never_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    door = WatchedDoor(tmp_path)
    stopped = source_id("vault/note 1.md")
    phases: dict[str, list[str]] = {}
    reading_without_a_call: list[str] = []
    reading_seen: list[str] = []
    in_call: set[str] = set()
    """The notes of the pack whose extractor call (the agent's run: requests, validation,
    retries) runs now."""

    async def counted(extractor: PackExtractor, prompt: str, usage: RunUsage) -> PackedFindings:
        in_call.update(extractor.deps.notes)
        try:
            return await run_pack_extractor(extractor, prompt, usage)
        finally:
            in_call.difference_update(extractor.deps.notes)

    monkeypatch.setattr(packs, "run_pack_extractor", counted)

    def record() -> None:
        for row in door.extraction.rows.values():
            trail = phases.setdefault(row.source, [])
            if not trail or trail[-1] != row.phase:
                trail.append(row.phase)

    async def poll(stop: asyncio.Event) -> None:
        """What a browser polling the feed sees, between the pipeline's steps."""
        while not stop.is_set():
            for row in door.extraction.activity():
                if row["phase"] == "extracting":
                    reading_seen.append(str(row["source"]))
                    if row["source"] not in in_call:
                        reading_without_a_call.append(str(row["source"]))
            await asyncio.sleep(0)

    async def scenario() -> None:
        door.extraction.listeners.append(record)
        permits = door.extraction.permits
        for _ in range(BACKGROUND_PERMITS):  # every permit taken: the pack waits for one
            await permits.acquire()
        door.library.import_files([(n, t.encode()) for n, t in NOTES.items()])
        await until(lambda: stopped in door.extraction.tasks, "the pack launched")
        assert door.extraction.abort(stopped)
        for _ in range(BACKGROUND_PERMITS):
            permits.release()
        stop = asyncio.Event()
        poller = asyncio.ensure_future(poll(stop))
        await door.extraction.wait_all()
        stop.set()
        await poller

    asyncio.run(scenario())
    assert door.watched.packs == 1 and door.watched.alone == 0
    assert phases.pop(stopped) == ["queued", "aborted"]  # stopped while it waited: never "reading"
    assert len(phases) == len(NOTES) - 1
    for trail in phases.values():  # audited together, then each waits for its own merge
        assert trail == ["queued", "extracting", "waiting", "auditing", "waiting", "merging", "done"]
    assert reading_seen and reading_without_a_call == []  # the poll saw rows read, each in its call


def test_a_packed_note_shows_its_share_of_the_packs_calls(tmp_path: Path) -> None:
    door = WatchedDoor(tmp_path)
    asyncio.run(door.imports(NOTES))
    calls = door.watched.packs + door.watched.audits
    assert door.watched.packs == 1 and calls == 2
    rows = [r for r in door.extraction.activity() if r["kind"] == "notes"]
    assert len(rows) == len(NOTES)
    for row in rows:
        usage = row["usage"]
        assert row["stats"]["addedNodes"] == 2
        # its share of the pack's tokens, known even when its share of the 2 calls is 0
        assert usage["inputTokens"] and usage["inputTokens"] > 0 and usage["outputTokens"] is not None
        assert row["pack"] == {"notes": len(NOTES), "requests": calls}
    assert sum(r["usage"]["requests"] for r in rows) == calls
    assert any(r["usage"]["requests"] == 0 for r in rows)  # the case that said "no model calls"
    lines = [json.loads(line) for line in (tmp_path / "usage.jsonl").read_text().splitlines()]
    assert sum(line["inputTokens"] for line in lines) == sum(r["usage"]["inputTokens"] for r in rows)
    assert all(line["inputTokens"] is not None for line in lines)  # none of the pack's tokens lost


def test_a_note_read_alone_has_no_pack(tmp_path: Path) -> None:
    door = WatchedDoor(tmp_path)
    asyncio.run(door.imports({"vault/one.md": note(1)}))
    [row] = [r for r in door.extraction.activity() if r["kind"] == "notes"]
    calls = door.watched.alone + door.watched.audits  # its extractor call and its audit
    assert door.watched.packs == 0 and calls == 2
    assert row["pack"] is None and row["usage"]["requests"] == calls and row["usage"]["inputTokens"]
