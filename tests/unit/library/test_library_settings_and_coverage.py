"""Issue 11: the Library's settings are floored, never fatal; a lesson's coverage summary; source
ids from paths."""

from __future__ import annotations

import json
from pathlib import Path

from server.core.contracts.models import Settings
from server.core.library.coverage import message_views, summarize
from server.core.library.notes import source_id
from server.store.machine_room.settings import FileSettingsStore

HANDOVER = {"type": "tool-probe_done", "toolCallId": "c", "state": "output-available", "input": {}}


def test_a_chunk_budget_under_the_floor_is_raised_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "models": {"strong": {"provider": "openai", "model": "gpt-5-mini"}},
                "graph": {"extractionChunkTokens": 100, "lessonIdleSeconds": 1},
            }
        )
    )
    settings = FileSettingsStore(path).load()  # no StoreCorrupt: the rest of the file still applies
    assert settings.graph.extraction_chunk_tokens == 500
    assert settings.graph.lesson_idle_seconds == 30.0
    assert settings.models.strong is not None and settings.models.strong.model == "gpt-5-mini"
    big = Settings.model_validate({"graph": {"extractionChunkTokens": 9000}})
    assert big.graph.extraction_chunk_tokens == 9000
    assert Settings().graph.lesson_idle_seconds == 300.0


def test_the_coverage_summary_counts_teacher_prose_only() -> None:
    messages = [
        {"id": "u", "role": "user", "parts": [{"type": "text", "text": "x" * 400}]},
        {"id": "p", "role": "assistant", "parts": [{"type": "text", "text": "prober words"}, HANDOVER]},
        {"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "a" * 40}]},
        {"id": "b", "role": "assistant", "parts": [{"type": "text", "text": "b" * 80}]},
    ]
    views = message_views(messages)
    assert summarize(views, {}).view() == {
        "coveredTokens": 0,
        "uncoveredTokens": 30,
        "coveredMessages": 0,
        "uncoveredMessages": 2,
        "totalTokens": 30,
    }
    fp = {v.message_id: v.fingerprint for v in views}
    half = summarize(views, {"a": {fp["a"]}, "b": {"stale"}})
    assert (half.covered_tokens, half.uncovered_tokens, half.covered_messages) == (10, 20, 1)
    assert summarize([], {}).total_tokens == 0


def test_a_source_is_its_path_as_the_import_names_it() -> None:
    assert source_id("school/notes.md") != source_id("work/notes.md") != source_id("notes.md")
    assert source_id("notes.md") == source_id("notes.md"), "an edited single file replaces itself"
    assert source_id("C:\\notes\\a.md") != source_id("D:\\notes\\a.md")
