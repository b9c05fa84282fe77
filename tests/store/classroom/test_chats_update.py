"""`FileChatStore.update` (issue 26, item 6): a record's read, change and save are one step.

A lesson turn saves from a worker thread while a rename saves from the event loop; each reads the
record, derives a new one and saves it. Were another save to come between one's read and its
write, the later write would drop the earlier one's change (the learner's message, or the title).
"""

from __future__ import annotations

import threading
from pathlib import Path

from server.core.contracts.chat import ChatRecord
from server.store.classroom.chats import FileChatStore
from tests.store.classroom.test_chats_store import record


def test_a_save_from_another_thread_waits_for_an_update_under_way(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    store.save(record())
    read, release = threading.Event(), threading.Event()
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}

    def write_ahead(stored: ChatRecord) -> ChatRecord:
        read.set()
        assert release.wait(30)
        return stored.model_copy(update={"messages": [*stored.messages, message]})

    turn = threading.Thread(target=store.update, args=("c_1", write_ahead))
    turn.start()
    assert read.wait(30)
    rename = threading.Thread(
        target=store.update, args=("c_1", lambda r: r.model_copy(update={"title": "Renamed"}))
    )
    rename.start()
    rename.join(0.3)
    blocked = rename.is_alive()
    release.set()
    turn.join(30)
    rename.join(30)
    assert blocked, "the rename ran between the turn's read and its write"
    for stored in (store.get("c_1"), FileChatStore(tmp_path).get("c_1")):
        assert stored is not None
        assert stored.title == "Renamed" and stored.messages == [message]


def test_update_of_an_absent_record_writes_nothing(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    assert store.update("c_9", lambda r: r.model_copy(update={"title": "x"})) is None
    assert store.get("c_9") is None


def test_an_unchanged_record_is_not_written(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    store.save(record())
    before = sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.glob("c_1.*"))
    assert store.update("c_1", lambda r: r) == store.get("c_1")
    assert sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.glob("c_1.*")) == before
