"""`LedgerSyncer` (issue 16): the usage and source appends made on the event loop are written at
once, in order, and fsynced by a worker thread, never by the appending thread; `flush` waits for
every fsync requested so far; a failed fsync is logged, never raised, and later appends still sync."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from server.core.contracts.graph import SourceLine
from server.store import ledger
from server.store.ledger import LedgerSyncer, read_ledger
from server.store.library.graph import FileGraphStore


def source(i: int) -> SourceLine:
    return SourceLine(id=f"src_{i}", kind="notes", title=f"Note {i}.md", path=f"Note {i}.md", at="t")


def test_an_append_is_read_at_once_and_fsynced_later_by_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()
    synced: list[tuple[int, int]] = []  # (fsyncing thread, file size when fsynced)
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        gate.wait(10)  # a busy disk: the fsync takes as long as the test holds it
        synced.append((threading.get_ident(), os.fstat(fd).st_size))
        real_fsync(fd)

    monkeypatch.setattr(ledger.os, "fsync", slow_fsync)
    syncer = LedgerSyncer()
    path = tmp_path / "sources.jsonl"
    for i in range(3):
        syncer.append(path, [source(i)])  # returns while the fsync is held
    assert [line.id for line in read_ledger(path, SourceLine)] == ["src_0", "src_1", "src_2"]
    assert synced == []
    assert syncer.flush(timeout=0.05) is False  # the fsync is still held
    gate.set()
    assert syncer.flush(timeout=10) is True
    assert synced, "the file was never fsynced"
    assert all(thread != threading.get_ident() for thread, _ in synced)
    assert synced[-1][1] == path.stat().st_size  # the last fsync covered every line written


def test_a_failed_fsync_is_logged_and_later_appends_still_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[int] = []
    real_fsync = os.fsync

    def failing_once(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(ledger.os, "fsync", failing_once)
    syncer = LedgerSyncer()
    path = tmp_path / "usage.jsonl"
    syncer.append(path, [source(1)])
    assert syncer.flush(timeout=10)
    syncer.append(path, [source(2)])
    assert syncer.flush(timeout=10)
    assert len(calls) == 2
    assert "fsync of usage.jsonl failed" in caplog.text
    assert [line.id for line in read_ledger(path, SourceLine)] == ["src_1", "src_2"]


def test_the_graph_store_reads_a_source_line_at_once_and_flush_syncs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[int] = []
    real_fsync = os.fsync

    def tracked(fd: int) -> None:
        threads.append(threading.get_ident())
        real_fsync(fd)

    monkeypatch.setattr(ledger.os, "fsync", tracked)
    store = FileGraphStore(tmp_path / "graph")
    store.record_source(source(7))
    store.record_usage({"job": "job_1", "source": "src_7", "phase": "done", "at": "t"})
    assert store.sources()["src_7"].title == "Note 7.md"  # read-your-write, before any fsync
    assert store.flush(timeout=10)
    assert len(threads) >= 1 and threading.get_ident() not in threads
