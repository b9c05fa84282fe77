"""FileChatStore's compact files, read cache and session index (issue 15).

Invariants: a record file changed behind the store's back is read again (never served stale); an
unreadable one raises StoreCorrupt (or is skipped by the list) and is left byte for byte; the
index is derived: rebuilt when missing, unreadable or stale, and listing sessions reads no record
that did not change."""

from __future__ import annotations

import itertools
import logging
import os
import time
from pathlib import Path

import orjson
import pytest

import server.store.classroom.chats as chats_module
from server.core.contracts.chat import ChatRecord
from server.core.contracts.models import ModelRef
from server.core.ports import StoreCorrupt
from server.store.atomic import write_json_atomic
from server.store.classroom.chats import INDEX_NAME, FileChatStore, compact_json


def record(
    chat_id: str = "c_1", title: str = "A lesson", updated: str = "2026-01-01T00:00:00.000Z", n: int = 2
):
    return ChatRecord(
        id=chat_id,
        title=title,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at=updated,
        model=ModelRef(provider="local", model="SmolLM2-135M-Instruct"),
        messages=[
            {
                "id": f"m{i}",
                "role": "user" if i % 2 == 0 else "assistant",
                "parts": [{"type": "text", "text": "hi"}],
            }
            for i in range(n)
        ],
    )


class Spy(FileChatStore):
    """Counts record file reads (the index is not a record)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def _read_disk(self, chat_id: str):  # type: ignore[no-untyped-def]
        self.reads.append(chat_id)
        return super()._read_disk(chat_id)


def touch_later(path: Path) -> None:
    """Move the file's mtime on (a coarse clock may give a quick rewrite the same mtime)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000))


# -- compact JSON ---------------------------------------------------------------------------------
def test_records_are_written_compact_and_old_pretty_files_read_back(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    rec = record()
    store.save(rec)
    raw = (tmp_path / "c_1.json").read_bytes()
    # the snapshot's generation (decision 0015) is its last key, not part of the record
    assert raw == orjson.dumps(rec.model_dump(mode="json", by_alias=True))[:-1] + b',"logGeneration":1}\n'
    assert (
        store.record_json("c_1") == compact_json(rec) and "logGeneration" not in store.get("c_1").model_extra
    )
    assert raw.count(b"\n") == 1

    write_json_atomic(
        tmp_path / "c_old.json", record("c_old").model_dump(mode="json", by_alias=True)
    )  # pretty
    pretty = (tmp_path / "c_old.json").read_bytes()
    assert pretty.count(b"\n") > 5
    assert FileChatStore(tmp_path).get("c_old") == record("c_old")
    # a file that is the record as this build writes it is answered as its own bytes
    assert FileChatStore(tmp_path).record_json("c_old") == pretty


def test_record_json_normalizes_a_file_an_older_build_wrote(tmp_path: Path) -> None:
    """A file without `usage` (a default) or with a snake_case key answers what `get` says."""
    data = record().model_dump(mode="json", by_alias=True)
    del data["usage"]
    data["created_at"] = data.pop("createdAt")
    (tmp_path / "c_1.json").write_bytes(orjson.dumps(data))
    body = orjson.loads(FileChatStore(tmp_path).record_json("c_1") or b"")
    assert body == record().model_dump(mode="json", by_alias=True)
    assert body["usage"] == [] and "createdAt" in body and "created_at" not in body


# -- the read cache -------------------------------------------------------------------------------
def test_get_reads_a_file_once_and_again_when_it_changed(tmp_path: Path) -> None:
    store = Spy(tmp_path)
    FileChatStore(tmp_path).save(record(title="first"))
    first = store.get("c_1")
    assert store.get("c_1") is first and store.record_json("c_1") is not None
    assert store.reads == ["c_1"]

    FileChatStore(tmp_path).save(record(title="second"))  # behind the store's back (another writer)
    assert store.get("c_1").title == "second"  # type: ignore[union-attr]
    assert store.reads == ["c_1", "c_1"]

    # an in-place edit of the same size: only the mtime says it changed
    path = tmp_path / "c_1.json"
    path.write_bytes(path.read_bytes().replace(b'"second"', b'"Second"'))
    touch_later(path)
    assert store.get("c_1").title == "Second"  # type: ignore[union-attr]
    assert orjson.loads(store.record_json("c_1") or b"")["title"] == "Second"


def test_a_save_fills_the_cache_with_what_it_wrote(tmp_path: Path) -> None:
    store = Spy(tmp_path)
    rec = record()
    store.save(rec)
    assert store.get("c_1") is rec
    assert store.record_json("c_1") == compact_json(rec)
    assert store.reads == []


def test_a_torn_file_raises_even_when_a_good_copy_was_cached_and_is_left_alone(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    store.save(record())
    assert store.get("c_1") is not None
    path = tmp_path / "c_1.json"
    torn = path.read_bytes()[:40]
    path.write_bytes(torn)
    with pytest.raises(StoreCorrupt, match="c_1"):
        store.get("c_1")
    with pytest.raises(StoreCorrupt, match="c_1"):
        store.record_json("c_1")
    path.write_bytes(b'{"id": "c_1"}')  # whole JSON, not a record
    with pytest.raises(StoreCorrupt, match="not a session record"):
        store.get("c_1")
    assert path.read_bytes() == b'{"id": "c_1"}'


def test_a_file_deleted_behind_the_store_reads_as_absent(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    store.save(record())
    (tmp_path / "c_1.json").unlink()
    assert store.get("c_1") is None and store.record_json("c_1") is None


def test_the_cache_keeps_at_most_cache_size_records(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path, cache_size=3)
    for i in range(5):
        store.save(record(f"c_{i}"))
    assert list(store._cache) == ["c_2", "c_3", "c_4"]
    assert store.get("c_0") == record("c_0")  # read again from its file

    size = (tmp_path / "c_0.json").stat().st_size
    by_bytes = FileChatStore(tmp_path, cache_bytes=2 * size)
    for i in range(5):
        by_bytes.get(f"c_{i}")
    assert list(by_bytes._cache) == ["c_3", "c_4"]
    tiny = FileChatStore(tmp_path, cache_bytes=1)
    tiny.get("c_0")
    assert list(tiny._cache) == ["c_0"]  # the last one used always stays


# -- the session index ----------------------------------------------------------------------------
def summary_titles(store: FileChatStore) -> dict[str, str]:
    return {row.id: row.title for row in store.summaries()}


def test_summaries_match_the_records_and_follow_saves_and_deletes(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    assert store.summaries() == []
    store.save(record("c_a", "Alpha", n=3))
    store.save(record("c_b", "Beta", n=0))
    rows = {row.id: row for row in store.summaries()}
    assert rows["c_a"].message_count == 3 and rows["c_b"].message_count == 0
    assert rows["c_a"].model_dump() == {
        "id": "c_a",
        "title": "Alpha",
        "created_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-01T00:00:00.000Z",
        "model": {"provider": "local", "model": "SmolLM2-135M-Instruct", "base_url": None},
        "message_count": 3,
        "running": False,
    }
    store.save(record("c_a", "Alpha 2", n=4))
    assert store.delete("c_b") is True
    assert summary_titles(store) == {"c_a": "Alpha 2"}
    # the index file is written at most once a second: a fresh process meanwhile refreshes the
    # stale rows from their records (and drops the deleted one)
    assert summary_titles(FileChatStore(tmp_path)) == {"c_a": "Alpha 2"}
    store.flush()  # as at shutdown
    on_disk = orjson.loads((tmp_path / INDEX_NAME).read_bytes())
    assert [row["summary"]["id"] for row in on_disk["sessions"]] == ["c_a"]
    assert on_disk["sessions"][0]["summary"]["messageCount"] == 4
    assert summary_titles(FileChatStore(tmp_path)) == {"c_a": "Alpha 2"}  # a fresh process agrees


def test_the_index_is_not_a_session(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    store.save(record())
    assert (tmp_path / INDEX_NAME).exists()
    assert [r.id for r in store.list()] == ["c_1"]
    assert store.get(".index") is None


@pytest.mark.parametrize("damage", ["missing", "garbage", "torn", "wrong shape", "old version"])
def test_the_index_is_rebuilt_when_missing_or_unreadable(tmp_path: Path, damage: str) -> None:
    first = FileChatStore(tmp_path)
    for i in range(3):
        first.save(record(f"c_{i}", f"Lesson {i}"))
    index = tmp_path / INDEX_NAME
    good = index.read_bytes()
    if damage == "missing":
        index.unlink()
    elif damage == "garbage":
        index.write_bytes(b"\x00\xff not json")
    elif damage == "torn":
        index.write_bytes(good[: len(good) // 2])
    elif damage == "wrong shape":
        index.write_bytes(b'{"version": 1, "sessions": [{"summary": {"id": "c_0"}}]}')
    else:
        index.write_bytes(good.replace(b'"version":2', b'"version":1'))  # rows without the log's state
    store = Spy(tmp_path)
    assert summary_titles(store) == {f"c_{i}": f"Lesson {i}" for i in range(3)}
    assert sorted(store.reads) == ["c_0", "c_1", "c_2"]
    rebuilt = orjson.loads(index.read_bytes())
    assert sorted(row["summary"]["id"] for row in rebuilt["sessions"]) == ["c_0", "c_1", "c_2"]
    again = Spy(tmp_path)
    assert len(again.summaries()) == 3 and again.reads == []


def test_a_stale_row_is_refreshed_from_its_record_alone(tmp_path: Path) -> None:
    FileChatStore(tmp_path).save(record("c_a", "Alpha"))
    FileChatStore(tmp_path).save(record("c_b", "Beta"))
    # an older build (pretty JSON) or a hand edit changes c_a; another file appears; c_b vanishes
    write_json_atomic(
        tmp_path / "c_a.json", record("c_a", "Alpha, edited").model_dump(mode="json", by_alias=True)
    )
    write_json_atomic(tmp_path / "c_new.json", record("c_new", "New").model_dump(mode="json", by_alias=True))
    (tmp_path / "c_b.json").unlink()
    store = Spy(tmp_path)
    assert summary_titles(store) == {"c_a": "Alpha, edited", "c_new": "New"}
    assert sorted(store.reads) == ["c_a", "c_new"]
    store.reads.clear()
    assert len(store.summaries()) == 2 and store.reads == []
    # a same-size in-place edit (the directory does not change) is seen through the mtime when
    # the listing re-stats the files: once its last scan is `rescan_s` old
    path = tmp_path / "c_new.json"
    path.write_bytes(path.read_bytes().replace(b'"New"', b'"Now"'))
    touch_later(path)
    store.rescan_s = 3600
    assert summary_titles(store)["c_new"] == "New"  # the bounded staleness the module states
    store.rescan_s = 0
    assert summary_titles(store)["c_new"] == "Now"


class Scans(Spy):
    """Counts the listings that re-stat every record file."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.scans = 0

    def _record_files(self):  # type: ignore[no-untyped-def]
        self.scans += 1
        return super()._record_files()


def test_a_listing_stats_the_record_files_only_when_the_directory_changed(tmp_path: Path) -> None:
    store = Scans(tmp_path)
    store.rescan_s = 3600
    for i in range(3):
        store.save(record(f"c_{i}", f"Lesson {i}"))
    first = store.summaries()
    assert store.scans == 1 and len(first) == 3
    again = store.summaries()
    assert again is first and store.scans == 1  # nothing changed: the same rows, no stat
    # the store's own writes keep the rows right without a scan: a log append, a full write
    # (a new snapshot renamed into place), a new session, a deletion, the index file's write
    store.save(record("c_0", "Renamed", n=3))
    store.save(record("c_1", "Rewritten", n=200))  # past MAX_TAIL: a full write
    store.save(record("c_3", "New"))
    assert store.delete("c_2") is True
    store.flush()
    assert summary_titles(store) == {"c_0": "Renamed", "c_1": "Rewritten", "c_3": "New"}
    assert store.scans == 1 and store.reads == []
    # another program adds a record (renamed into place) and removes one: the directory changed
    outside = FileChatStore(tmp_path / "elsewhere")
    outside.save(record("c_4", "From outside"))
    os.replace(tmp_path / "elsewhere" / "c_4.json", tmp_path / "c_4.json")
    (tmp_path / "c_3.json").unlink()
    assert summary_titles(store) == {"c_0": "Renamed", "c_1": "Rewritten", "c_4": "From outside"}
    assert store.scans == 2
    # a read that finds a record changed in place behind the store's back makes the next listing scan
    path = tmp_path / "c_0.json"
    assert store.get("c_0") is not None
    write_json_atomic(tmp_path / "elsewhere" / "c_0.json", record("c_0", "Edited").model_dump(by_alias=True))
    path.write_bytes((tmp_path / "elsewhere" / "c_0.json").read_bytes())  # in place: the directory stays
    touch_later(path)
    summary_titles(store)
    assert store.scans == 2  # not seen yet (the bounded staleness)
    assert store.get("c_0").title == "Edited"
    assert summary_titles(store)["c_0"] == "Edited" and store.scans == 3
    # a write of its own that failed may have left files it did not account for: the next scans
    real = chats_module.write_bytes_atomic

    def failing(path: Path, payload: bytes, **kwargs) -> None:  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    chats_module.write_bytes_atomic = failing  # type: ignore[assignment]
    try:
        with pytest.raises(OSError):
            store.save(record("c_5", "Not saved"))
    finally:
        chats_module.write_bytes_atomic = real
    assert "c_5" not in summary_titles(store) and store.scans == 4


def test_an_unreadable_record_is_skipped_logged_and_left_alone(tmp_path: Path, caplog) -> None:
    store = Spy(tmp_path)
    store.save(record("c_good"))
    bad = tmp_path / "c_bad.json"
    bad.write_bytes(b'{"id": "c_bad", "messages": [')
    with caplog.at_level(logging.WARNING, logger="lh.store.chats"):
        assert [row.id for row in store.summaries()] == ["c_good"]
    assert "c_bad" in caplog.text
    assert store.reads == ["c_bad"]
    assert [row.id for row in store.summaries()] == ["c_good"]
    assert store.reads == ["c_bad"]  # not re-read until it changes
    assert bad.read_bytes() == b'{"id": "c_bad", "messages": ['
    FileChatStore(tmp_path / "elsewhere").save(record("c_bad", "Repaired"))
    os.replace(tmp_path / "elsewhere" / "c_bad.json", bad)
    assert summary_titles(store) == {"c_good": "A lesson", "c_bad": "Repaired"}


def test_a_failed_index_write_does_not_fail_the_save(tmp_path: Path, monkeypatch, caplog) -> None:
    store = FileChatStore(tmp_path)
    store.save(record("c_a", "Alpha"))
    real = chats_module.write_bytes_atomic

    def no_index(path: Path, payload: bytes, **kwargs) -> None:
        if path.name == INDEX_NAME:
            raise OSError(28, "No space left on device")
        real(path, payload, **kwargs)

    monkeypatch.setattr(chats_module, "write_bytes_atomic", no_index)
    with caplog.at_level(logging.WARNING, logger="lh.store.chats"):
        store.save(record("c_a", "Alpha 2"))
        store.flush()
    assert "session index" in caplog.text
    monkeypatch.undo()
    assert summary_titles(store) == {"c_a": "Alpha 2"}
    assert summary_titles(FileChatStore(tmp_path)) == {"c_a": "Alpha 2"}  # the stale file is refreshed


def test_the_index_file_is_written_at_most_once_a_second(tmp_path: Path, monkeypatch) -> None:
    writes: list[float] = []
    real = chats_module.write_bytes_atomic

    def counting(path: Path, payload: bytes, **kwargs) -> None:
        if path == tmp_path / INDEX_NAME:  # (other tests' stores may still have a timer running)
            writes.append(time.monotonic())
        real(path, payload, **kwargs)

    monkeypatch.setattr(chats_module, "write_bytes_atomic", counting)
    store = FileChatStore(tmp_path)
    start = time.monotonic()
    for i in range(20):  # a burst: the first save writes the index, the rest wait for the timer
        store.save(record("c_a", f"Alpha {i}"))
    took = time.monotonic() - start
    assert 1 <= len(writes) <= 1 + took / chats_module.INDEX_FLUSH_S  # 1 unless the disk is slow
    time.sleep(chats_module.INDEX_FLUSH_S + 0.5)
    gaps = [b - a for a, b in itertools.pairwise(writes)]
    assert len(writes) >= 2 and all(gap >= chats_module.INDEX_FLUSH_S * 0.99 for gap in gaps)
    rows = orjson.loads((tmp_path / INDEX_NAME).read_bytes())["sessions"]
    assert [row["summary"]["title"] for row in rows] == ["Alpha 19"]
    store.save(record("c_b", "Beta"))
    before = len(writes)
    store.flush()  # at shutdown: what is pending is written at once
    assert len(writes) == before + 1 and store._index_timer is None


def test_a_thousand_sessions_are_listed_without_reading_a_record(tmp_path: Path) -> None:
    for i in range(1000):  # written directly (a thousand fsynced saves would be slow)
        (tmp_path / f"c_{i:04d}.json").write_bytes(compact_json(record(f"c_{i:04d}", f"Lesson {i}", n=i % 7)))
    assert len(FileChatStore(tmp_path).summaries()) == 1000  # builds the index
    store = Spy(tmp_path)  # a fresh process: the index from its file, the records only stat'ed
    rows = store.summaries()
    assert len(rows) == 1000 and store.reads == []
    assert {row.id: row.message_count for row in rows}["c_0013"] == 13 % 7
