"""The trash's files (decision 0043): moves are renames inside the data dir, only from and to the
live stores' folders; a restore never overwrites a file that exists again."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.trash import TrashEntry, due, purge_time
from server.store.trash import FileTrash


def entry(record_id: str, files: list[str], deleted_at: str = "2026-03-01T00:00:00.000Z") -> TrashEntry:
    return TrashEntry(
        id=record_id,
        kind="lesson",
        title="Heaps",
        deleted_at=deleted_at,
        purge_at=purge_time(deleted_at),
        files=files,
    )


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def test_put_moves_what_exists_and_take_puts_it_back(tmp_path: Path) -> None:
    write(tmp_path, "chats/c_1.json", "record")
    write(tmp_path, "jobs/job_1.json", "job")
    trash = FileTrash(tmp_path)
    kept = trash.put(entry("c_1", ["jobs/job_1.json", "chats/c_1.log", "chats/c_1.json"]))
    assert kept.files == ["jobs/job_1.json", "chats/c_1.json"]  # the absent log is left out
    assert not (tmp_path / "chats" / "c_1.json").exists()
    assert [e.id for e in trash.list()] == ["c_1"]
    taken = trash.take("c_1")
    assert taken is not None and taken.id == "c_1"
    assert (tmp_path / "chats" / "c_1.json").read_text() == "record"
    assert (tmp_path / "jobs" / "job_1.json").read_text() == "job"
    assert trash.list() == [] and not (tmp_path / "trash" / "c_1").exists()
    assert trash.take("c_1") is None and trash.remove("c_1") is False


def test_take_refuses_to_overwrite_and_moves_nothing(tmp_path: Path) -> None:
    write(tmp_path, "chats/c_1.json", "old")
    write(tmp_path, "jobs/job_1.json", "job")
    trash = FileTrash(tmp_path)
    trash.put(entry("c_1", ["jobs/job_1.json", "chats/c_1.json"]))
    write(tmp_path, "chats/c_1.json", "new")
    with pytest.raises(FileExistsError):
        trash.take("c_1")
    assert (tmp_path / "chats" / "c_1.json").read_text() == "new"
    assert not (tmp_path / "jobs" / "job_1.json").exists()  # its job stayed in the trash too
    assert [e.id for e in trash.list()] == ["c_1"]


BAD_FILES = ["../settings.json", "/etc/passwd", "graph/nodes.jsonl", "chats/../../x", "chats", "chats/a/b"]


@pytest.mark.parametrize("bad", BAD_FILES)
def test_only_the_live_stores_files_are_moved(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="not a trashable file"):
        FileTrash(tmp_path).put(entry("c_1", [bad]))
    assert not (tmp_path / "trash").exists()


@pytest.mark.parametrize("bad", ["..", "../x", "a/b", ""])
def test_an_entry_id_is_never_a_path(tmp_path: Path, bad: str) -> None:
    trash = FileTrash(tmp_path)
    assert trash.get(bad) is None and trash.remove(bad) is False


def test_due_keeps_unreadable_times_and_counts_30_days() -> None:
    fresh = entry("c_new", [], "2026-03-02T00:00:00.000Z")
    old = entry("c_old", [], "2026-01-01T00:00:00.000Z")
    odd = old.model_copy(update={"id": "c_odd", "purge_at": "someday"})
    assert due([fresh, old, odd], "2026-03-03T00:00:00.000Z") == ["c_old"]
    assert purge_time("2026-01-31T12:00:00.000Z") == "2026-03-02T12:00:00.000Z"
