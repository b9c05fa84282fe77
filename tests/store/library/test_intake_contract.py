"""The IntakeStore contract: the same assertions against `FileIntakeStore` (real files) and
`tests.fakes.intake.FakeIntakeStore`, so the fake cannot drift from the adapter. What only the file
has (torn lines, emptying, a second process reading it) is in test_intake_store.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.contracts.intake import IntakeEntry, IntakeJob
from server.core.ports import IntakeStore
from server.store.library.intake import FileIntakeStore
from tests.fakes import FakeIntakeStore


@pytest.fixture(params=["file", "fake"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> IntakeStore:
    return FileIntakeStore(tmp_path / "intake") if request.param == "file" else FakeIntakeStore()


def entry(n: int, kind: str = "notes", label: str = "Import of vault") -> IntakeEntry:
    return IntakeEntry(
        key=f"ik_{n:016x}",
        kind=kind,  # type: ignore[arg-type]
        source=f"src_{n:016x}",
        label=label,
        title=f"n{n}.md",
        jobs=[IntakeJob(text=f"# Note {n}\n", coverage=[(f"{'f' * 16}:1", "c" * 64)])],
        at="2026-01-01T00:00:00Z",
    )


def test_nothing_is_open_at_first_and_an_empty_batch_records_nothing(store: IntakeStore) -> None:
    assert store.open() == [] and store.compact() == []
    store.accept([])
    store.settle([])
    assert store.open() == []
    assert store.flush(10) is True


def test_batches_read_back_in_the_order_accepted(store: IntakeStore) -> None:
    store.accept([entry(1), entry(2)])
    store.accept([entry(3, "lesson")], durable=False)
    assert store.open() == [entry(1), entry(2), entry(3, "lesson")]
    assert store.flush(10) is True


def test_settled_entries_are_no_longer_open(store: IntakeStore) -> None:
    store.accept([entry(1), entry(2), entry(3)])
    store.settle([entry(2).key])
    assert store.open() == [entry(1), entry(3)]
    store.settle([entry(2).key, "ik_" + "0" * 16])  # settled already, never accepted: no error
    assert store.open() == [entry(1), entry(3)]
    store.settle([entry(1).key, entry(3).key])
    assert store.open() == []
    store.accept([entry(4)])  # the queue goes on after it emptied
    assert store.open() == [entry(4)]


def test_a_key_accepted_again_is_open_once_as_last_accepted(store: IntakeStore) -> None:
    store.accept([entry(1), entry(2)])
    store.accept([entry(1, label="Import again")])
    assert store.open() == [entry(2), entry(1, label="Import again")]


def test_compact_answers_the_open_entries_and_keeps_them(store: IntakeStore) -> None:
    store.accept([entry(1), entry(2), entry(3)])
    store.settle([entry(1).key])
    assert store.compact() == [entry(2), entry(3)]
    assert store.open() == [entry(2), entry(3)]
    store.settle([entry(2).key])
    store.accept([entry(4)])
    assert store.open() == [entry(3), entry(4)]


def test_entries_are_values(store: IntakeStore) -> None:
    given = entry(1)
    store.accept([given])
    given.label = "changed after it was accepted"
    [got] = store.open()
    assert got == entry(1)
    got.label = "changed in the caller's hands"
    assert store.open() == [entry(1)]
