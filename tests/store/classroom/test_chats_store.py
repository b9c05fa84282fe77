"""FileChatStore on real files. Invariant: a record on disk is always a whole, valid JSON document;
an unreadable one is reported, never overwritten or deleted by a read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from server.core.contracts.chat import ChatRecord
from server.core.contracts.models import ModelRef
from server.core.ports import StoreCorrupt
from server.store.atomic import write_json_atomic
from server.store.classroom.chats import FileChatStore


def record(chat_id: str = "c_1", **extra) -> ChatRecord:
    return ChatRecord(
        id=chat_id,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
        model=ModelRef(provider="local", model="SmolLM2-135M-Instruct"),
        **extra,
    )


def test_round_trip_uses_camel_case_on_disk(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path / "chats")
    store.save(record(messages=[{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]))
    raw = json.loads((tmp_path / "chats" / "c_1.json").read_text())
    assert raw["createdAt"] and raw["messages"][0]["parts"][0]["text"] == "hi"
    assert store.get("c_1") == store.list()[0]


def test_unknown_and_path_like_ids_read_as_absent(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path / "chats")
    assert store.get("nope") is None
    assert store.get("../../etc/passwd") is None
    assert store.delete("nope") is False


def test_corrupt_record_raises_and_is_left_alone(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path / "chats")
    store.save(record("c_good"))
    bad = tmp_path / "chats" / "c_bad.json"
    bad.write_text('{"id": "c_bad", "messages": [')
    with pytest.raises(StoreCorrupt, match="c_bad"):
        store.get("c_bad")
    assert [r.id for r in store.list()] == ["c_good"]
    assert bad.read_text() == '{"id": "c_bad", "messages": ['


def test_failed_atomic_write_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    store = FileChatStore(tmp_path / "chats")
    store.save(record(title="old"))

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    monkeypatch.setattr(os, "fdatasync", broken_fsync)  # the log's append (decision 0015)
    with pytest.raises(OSError, match="No space"):
        store.save(record(title="new"))
    monkeypatch.undo()
    assert store.get("c_1").title == "old"  # type: ignore[union-attr]
    assert list((tmp_path / "chats").glob("*.tmp")) == []


def test_atomic_write_sets_mode(tmp_path: Path) -> None:
    write_json_atomic(tmp_path / "s.json", {"k": "v"}, mode=0o600)
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o600
