"""The accepted queue's file (`server/store/library/intake.py`, issue 26): batches and settlements read
back from the file alone, a torn line is skipped (never fatal) and later appends stay whole, the
file is emptied once nothing is open, and `compact` keeps only the open entries."""

from __future__ import annotations

from pathlib import Path

from server.core.contracts.intake import IntakeEntry, IntakeJob
from server.store.library.intake import FileIntakeStore


def entry(n: int, kind: str = "notes") -> IntakeEntry:
    return IntakeEntry(
        key=f"ik_{n:016x}",
        kind=kind,  # type: ignore[arg-type]
        source=f"src_{n:016x}",
        label="Import of vault",
        import_id="imp_0123456789ab",
        title=f"n{n}.md",
        path=f"vault/n{n}.md",
        fingerprint="f" * 64,
        version={f"{'f' * 16}:1": "c" * 64},
        jobs=[IntakeJob(text=f"# Note {n}\n", coverage=[(f"{'f' * 16}:1", "c" * 64)])],
        at="2026-01-01T00:00:00Z",
    )


def test_open_entries_read_back_from_the_file_alone(tmp_path: Path) -> None:
    store = FileIntakeStore(tmp_path / "intake")
    store.accept([entry(1), entry(2), entry(3)])
    store.accept([entry(4, "lesson")], durable=False)
    store.settle([entry(2).key])
    assert FileIntakeStore(tmp_path / "intake").open() == [entry(1), entry(3), entry(4, "lesson")]
    assert store.flush(10)


def test_a_torn_line_is_skipped_and_the_next_append_is_whole(tmp_path: Path) -> None:
    store = FileIntakeStore(tmp_path / "intake")
    store.accept([entry(1)])
    whole = store.path.read_bytes()
    store.path.write_bytes(whole + whole[: len(whole) // 2])  # a kill -9 mid-append: never answered
    fresh = FileIntakeStore(tmp_path / "intake")
    assert fresh.open() == [entry(1)]
    fresh.accept([entry(2)])
    assert FileIntakeStore(tmp_path / "intake").open() == [entry(1), entry(2)]
    assert fresh.path.read_bytes().count(b"\n") == 3  # the torn line was ended, not glued onto


def test_the_file_is_emptied_when_nothing_is_open_and_compacted_at_start(tmp_path: Path) -> None:
    store = FileIntakeStore(tmp_path / "intake")
    store.accept([entry(1), entry(2)])
    store.settle([entry(1).key, entry(9).key])  # an unknown key is ignored
    assert store.open() == [entry(2)]
    store.settle([entry(2).key])
    assert store.path.read_bytes() == b""  # no batch of texts kept for nothing
    store.accept([entry(3), entry(4)])
    store.settle([entry(3).key])
    restarted = FileIntakeStore(tmp_path / "intake")
    assert restarted.compact() == [entry(4)]
    assert store.path.read_bytes().count(b"\n") == 1  # one accepted line: the open entry alone
    assert FileIntakeStore(tmp_path / "intake").open() == [entry(4)]
    restarted.settle([entry(4).key])
    assert FileIntakeStore(tmp_path / "intake").compact() == []
    assert not store.path.exists()
