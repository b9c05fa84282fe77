"""The chat store's append-only log (issue 15, decision 0015).

Invariants: the snapshot plus its log is always the whole record: any sequence of saves reads
back (in a fresh process, from the files alone) as the last record saved, served as the same JSON
bytes a plain full write would give; a torn last line (never acknowledged) is dropped and cut off
before the next append; a log whose generation or snapshot size does not match is ignored; a
kill -9 at any moment of a save loses no save that returned and leaves a readable record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import server.store.classroom.chats as chats_module
from server.core.contracts.chat import ChatRecord, TurnUsage
from server.core.contracts.models import ModelRef
from server.core.ports import StoreCorrupt
from server.store.classroom.chats import FileChatStore, compact_json, read_record_data

ROOT = str(Path(__file__).resolve().parents[3])


def base(chat_id: str = "c_1", n: int = 3) -> ChatRecord:
    return ChatRecord(
        id=chat_id,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
        model=ModelRef(provider="local", model="SmolLM2-135M-Instruct"),
        messages=[message(i) for i in range(n)],
    )


def message(i: int, text: str = "hi") -> dict:
    return {
        "id": f"m{i}",
        "role": "user" if i % 2 == 0 else "assistant",
        "parts": [{"type": "text", "text": text}],
    }


def usage(i: int) -> TurnUsage:
    return TurnUsage(
        message_id=f"m{i}",
        role="teacher",
        provider="openai",
        model="gpt",
        requests=1,
        at="2026-01-02T00:00:00Z",
    )


def fresh(root: Path, chat_id: str = "c_1") -> ChatRecord | None:
    """The record as a new process reads it from the files alone."""
    return FileChatStore(root).get(chat_id)


def assert_stored(root: Path, rec: ChatRecord) -> None:
    store = FileChatStore(root)
    assert store.get(rec.id) == rec
    assert store.record_json(rec.id) == compact_json(rec)  # the same bytes a full write serves
    assert read_record_data(root, rec.id) == rec.model_dump(mode="json", by_alias=True)


# -- what a save does to the files ----------------------------------------------------------------
def test_a_tail_change_appends_a_line_and_other_changes_rewrite(tmp_path: Path) -> None:
    store = FileChatStore(tmp_path)
    rec = base()
    store.save(rec)
    snapshot = (tmp_path / "c_1.json").read_bytes()
    rec = rec.model_copy(
        update={"messages": [*rec.messages, message(3)], "updated_at": "2026-01-02T00:00:00.000Z"}
    )
    store.save(rec)
    rec = rec.model_copy(update={"messages": [*rec.messages[:-1], message(3, "edited")], "usage": [usage(3)]})
    store.save(rec)
    rec = rec.model_copy(update={"title": "Renamed", "messages": rec.messages[:2]})
    store.save(rec)
    assert (tmp_path / "c_1.json").read_bytes() == snapshot  # only the log grew
    lines = (tmp_path / "c_1.log").read_bytes().splitlines()
    assert orjson.loads(lines[0]) == {"gen": 1, "snap": len(snapshot)}
    assert orjson.loads(lines[1]) == {"put": [message(3)], "set": {"updatedAt": "2026-01-02T00:00:00.000Z"}}
    assert orjson.loads(lines[2])["cut"] == 3 and orjson.loads(lines[2])["put"] == [message(3, "edited")]
    assert orjson.loads(lines[2])["usage"][0]["messageId"] == "m3"
    assert orjson.loads(lines[3]) == {"cut": 2, "set": {"title": "Renamed"}}
    assert_stored(tmp_path, rec)

    # a message before the last changed: a full write, the log folded in and removed
    rec = rec.model_copy(update={"messages": [message(0, "changed"), rec.messages[1]]})
    store.save(rec)
    assert not (tmp_path / "c_1.log").exists()
    assert orjson.loads((tmp_path / "c_1.json").read_bytes())["logGeneration"] == 2
    assert_stored(tmp_path, rec)


def test_the_log_is_compacted_past_its_entry_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(chats_module, "COMPACT_ENTRIES", 4)
    store = FileChatStore(tmp_path)
    rec = base()
    store.save(rec)
    seen = []
    for i in range(3, 13):
        rec = rec.model_copy(update={"messages": [*rec.messages, message(i)]})
        store.save(rec)
        log = tmp_path / "c_1.log"
        seen.append(len(log.read_bytes().splitlines()) - 1 if log.exists() else 0)
        assert_stored(tmp_path, rec)
    assert seen == [1, 2, 3, 4, 0, 1, 2, 3, 4, 0]
    assert orjson.loads((tmp_path / "c_1.json").read_bytes())["logGeneration"] == 3


def test_the_log_is_compacted_past_a_quarter_of_the_snapshot(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(chats_module, "COMPACT_MIN_BYTES", 0)
    store = FileChatStore(tmp_path)
    rec = base(n=40)
    store.save(rec)
    snap = (tmp_path / "c_1.json").stat().st_size
    for i in range(40, 60):
        rec = rec.model_copy(update={"messages": [*rec.messages, message(i)]})
        store.save(rec)
        log = tmp_path / "c_1.log"
        assert not log.exists() or log.stat().st_size <= snap * chats_module.COMPACT_FRACTION
        snap = (tmp_path / "c_1.json").stat().st_size
    assert_stored(tmp_path, rec)
    assert orjson.loads((tmp_path / "c_1.json").read_bytes())["logGeneration"] > 1


# -- replay equivalence ---------------------------------------------------------------------------
EDITS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 3)),
        st.tuples(st.just("replace_last"), st.text(max_size=5)),
        st.tuples(st.just("cut"), st.integers(0, 3)),
        st.tuples(st.just("edit_middle"), st.text(max_size=5)),
        st.tuples(st.just("usage"), st.integers(1, 2)),
        st.tuples(st.just("title"), st.text(min_size=1, max_size=8)),
        st.tuples(st.just("extra"), st.integers(0, 9)),
        st.tuples(st.just("reopen"), st.none()),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS, entries=st.integers(1, 6))
def test_any_sequence_of_saves_reads_back_as_a_full_write_store_would(
    tmp_path_factory, edits, entries
) -> None:
    root = tmp_path_factory.mktemp("log")
    plain = tmp_path_factory.mktemp("plain")
    old = chats_module.COMPACT_ENTRIES
    chats_module.COMPACT_ENTRIES = entries
    try:
        store = FileChatStore(root)
        rec = base()
        store.save(rec)
        counter = 100
        for kind, arg in edits:
            msgs = list(rec.messages)
            if kind == "append":
                msgs += [message(counter + j) for j in range(arg)]
                counter += arg
            elif kind == "replace_last" and msgs:
                msgs[-1] = message(counter, arg)
                counter += 1
            elif kind == "cut":
                msgs = msgs[: max(0, len(msgs) - arg)]
            elif kind == "edit_middle" and len(msgs) > 1:
                msgs[0] = message(counter, arg)
                counter += 1
            elif kind == "reopen":  # a new process continues the lesson from the files
                store = FileChatStore(root)
                rec = store.get("c_1")  # type: ignore[assignment]
                continue
            update: dict = {"messages": msgs, "updated_at": f"2026-01-01T00:00:{counter % 60:02d}.000Z"}
            if kind == "usage":
                update["usage"] = [*rec.usage, *(usage(counter + j) for j in range(arg))]
            if kind == "title":
                update["title"] = arg
            rec = rec.model_copy(update=update)
            if kind == "extra":  # an unknown field (records allow them): set, or changed
                rec = ChatRecord.model_validate(
                    {**rec.model_dump(by_alias=True), "note": arg} | {"messages": msgs}
                )
            store.save(rec)
            FileChatStore(plain).save(rec)
            assert FileChatStore(root).record_json("c_1") == FileChatStore(plain).record_json("c_1")
        assert fresh(root) == rec
        assert_stored(root, rec)
    finally:
        chats_module.COMPACT_ENTRIES = old


# -- damage ---------------------------------------------------------------------------------------
def grown(tmp_path: Path, appends: int = 3) -> ChatRecord:
    store = FileChatStore(tmp_path)
    rec = base()
    store.save(rec)
    for i in range(3, 3 + appends):
        rec = rec.model_copy(update={"messages": [*rec.messages, message(i)]})
        store.save(rec)
    return rec


@pytest.mark.parametrize("tail", [b'{"put":[{"id":"m9","ro', b"\x00\x00\x00\x00", b'{"put": [}\n'])
def test_a_torn_last_line_is_dropped_and_cut_off_before_the_next_append(tmp_path: Path, tail: bytes) -> None:
    rec = grown(tmp_path)
    log = tmp_path / "c_1.log"
    with log.open("ab") as handle:
        handle.write(tail)
    assert fresh(tmp_path) == rec  # the last acknowledged save
    store = FileChatStore(tmp_path)
    rec = store.get("c_1")  # type: ignore[assignment]
    rec = rec.model_copy(update={"messages": [*rec.messages, message(50)]})
    store.save(rec)
    assert log.exists() and tail not in log.read_bytes()
    assert_stored(tmp_path, rec)


def test_a_damaged_line_before_the_last_is_corruption_and_left_alone(tmp_path: Path) -> None:
    grown(tmp_path)
    log = tmp_path / "c_1.log"
    lines = log.read_bytes().splitlines(keepends=True)
    damaged = b"".join([lines[0], b"{nope\n", *lines[2:]])
    log.write_bytes(damaged)
    with pytest.raises(StoreCorrupt, match=r"c_1\.log"):
        FileChatStore(tmp_path).get("c_1")
    assert log.read_bytes() == damaged


def test_a_log_for_another_snapshot_is_ignored(tmp_path: Path) -> None:
    """A crash after a full write but before the log's removal leaves a stale log: its header
    names an older generation (or another snapshot size), so it is not replayed."""
    rec = grown(tmp_path)
    stale = (tmp_path / "c_1.log").read_bytes()
    store = FileChatStore(tmp_path)
    store.get("c_1")
    rec = rec.model_copy(update={"messages": [message(0, "changed"), *rec.messages[1:]]})
    store.save(rec)  # a full write
    (tmp_path / "c_1.log").write_bytes(stale)  # as if its removal was lost
    assert fresh(tmp_path) == rec
    # a hand edit that keeps the generation but not the size: the log is not applied either
    snap = tmp_path / "c_1.json"
    snap.write_bytes(snap.read_bytes().replace(b'"title":"New lesson"', b'"title":"Hand edited lesson"'))
    assert fresh(tmp_path).title == "Hand edited lesson"  # type: ignore[union-attr]
    assert len(fresh(tmp_path).messages) == len(rec.messages)  # type: ignore[union-attr]
    # the next full write takes a generation above the stale log's
    store = FileChatStore(tmp_path)
    store.save(base())
    assert orjson.loads(snap.read_bytes())["logGeneration"] > orjson.loads(stale.splitlines()[0])["gen"]


def test_delete_removes_the_log_too(tmp_path: Path) -> None:
    grown(tmp_path)
    assert FileChatStore(tmp_path).delete("c_1")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == []


def test_the_index_follows_the_log(tmp_path: Path) -> None:
    rec = grown(tmp_path)
    rows = {r.id: r.message_count for r in FileChatStore(tmp_path).summaries()}
    assert rows == {"c_1": len(rec.messages)}
    FileChatStore(tmp_path).save(rec.model_copy(update={"messages": [*rec.messages, message(77)]}))
    assert {r.id: r.message_count for r in FileChatStore(tmp_path).summaries()} == {
        "c_1": len(rec.messages) + 1
    }


# -- kill -9 --------------------------------------------------------------------------------------
def saver(root: Path, hang_at: int | None) -> subprocess.Popen:
    """A child that saves a growing lesson, printing `acked N` after each save returns (N messages
    stored). With `hang_at`, the append of that message writes half its line and hangs."""
    script = textwrap.dedent(
        f"""
        import os, sys, time
        sys.path.insert(0, {ROOT!r})
        from pathlib import Path
        import server.store.classroom.chats as chats
        from tests.store.classroom.test_chats_log import base, message
        hang_at = {hang_at!r}
        real_write = os.write
        state = {{"n": 0}}
        def write(fd, data):
            if state["n"] == hang_at:
                real_write(fd, bytes(data[: len(data) // 2]))
                print("torn", flush=True)
                time.sleep(60)
            return real_write(fd, data)
        chats.os.write = write
        store = chats.FileChatStore(Path({str(root)!r}))
        rec = base()
        store.save(rec)
        for i in range(3, 100000):
            state["n"] = i
            rec = rec.model_copy(update={{"messages": [*rec.messages, message(i)]}})
            store.save(rec)
            print("acked", len(rec.messages), flush=True)
        """
    )
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def test_kill_9_mid_append_tears_nothing_acknowledged(tmp_path: Path) -> None:
    child = saver(tmp_path, hang_at=7)
    assert child.stdout is not None
    out = [child.stdout.readline().strip() for _ in range(5)]
    assert out == ["acked 4", "acked 5", "acked 6", "acked 7", "torn"]
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    assert not (tmp_path / "c_1.log").read_bytes().endswith(b"\n")  # a half line on disk
    got = fresh(tmp_path)
    assert got is not None and [m["id"] for m in got.messages] == [f"m{i}" for i in range(7)]
    store = FileChatStore(tmp_path)
    rec = store.get("c_1")
    rec = rec.model_copy(update={"messages": [*rec.messages, message(7)]})  # type: ignore[union-attr]
    store.save(rec)
    assert_stored(tmp_path, rec)


@pytest.mark.parametrize("delay", [0.15, 0.3, 0.45])
def test_kill_9_at_a_random_moment_loses_no_acknowledged_save(tmp_path: Path, delay: float) -> None:
    child = saver(tmp_path, hang_at=None)
    assert child.stdout is not None
    assert child.stdout.readline().startswith("acked")  # saving has begun
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    rest = child.stdout.read()
    child.wait(10)
    *complete, tail = rest.split("\n")  # `tail` is "" unless the kill cut the last line short
    acked = [int(line.split()[1]) for line in complete if line.startswith("acked")]
    if tail.startswith("acked"):  # printed after its save returned, cut short by the kill (CI saw
        acked.append((acked[-1] if acked else 4) + 1)  # "acked" alone): that save is acknowledged
    got = fresh(tmp_path)
    assert got is not None
    assert [m["id"] for m in got.messages] == [f"m{i}" for i in range(len(got.messages))]
    assert len(got.messages) >= (acked[-1] if acked else 4)
    assert len(got.messages) <= (acked[-1] if acked else 4) + 1  # at most the one in flight
