"""Backup archives on real files (issue 31 item 4): what an archive holds and leaves out, every
refusal of the issue's "Bad input" paragraph (not ours, cut short, newer version, `../`, absolute,
a link, a ledger that does not parse, an id twice) changing nothing, and a staged restore applied
at start, finished after a crash between its renames."""

from __future__ import annotations

import hashlib
import io
import os
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from server.core.machine_room.backup import MANIFEST, ArchiveRefused
from server.store.machine_room.backup import BackupFiles, apply_pending_restore
from tests.bench.library.bench_graph_read import write_graph

CHAT = {
    "id": "c1",
    "title": "Derivatives",
    "titleBy": "auto",
    "createdAt": "2026-12-01T00:00:00.000Z",
    "updatedAt": "2026-12-01T00:00:00.000Z",
    "model": {"provider": "openai", "model": "gpt"},
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes (what "changes nothing" compares)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    write_graph(root / "graph", 200)
    (root / "graph" / "positions.json").write_text('{"n_0000000000000000": [1.0, 2.0]}')
    (root / "graph" / "view.snapshot").write_text("derived")
    (root / "graph" / "usage.jsonl").write_bytes(b'{"a": 1}\n{"torn')  # a torn last line
    (root / "chats").mkdir()
    (root / "chats" / "c1.json").write_bytes(orjson.dumps(CHAT))
    (root / "chats" / "c1.log").write_bytes(b'{"gen": 1, "snap": 1}\n{"put": []}\n')
    (root / "chats" / "bad.json").write_text("{not json")
    (root / "chats" / ".index.json").write_text("{}")
    (root / "settings.json").write_text('{"agent": {"contextTokens": 9000}, "extra": {"apiKey": "sk-x"}}')
    (root / "secrets.json").write_text('{"openai": "sk-secret"}')
    (root / "subscriptions").mkdir()
    (root / "subscriptions" / "chatgpt.json").write_text('{"accessToken": "t"}')
    (root / "logs").mkdir()
    (root / "logs" / "offline-model.log").write_text("log")
    return root


def files(root: Path) -> BackupFiles:
    lock = threading.RLock()
    return BackupFiles(root, lambda: lock, "0.1.0")


def backup(root: Path, target: Path) -> Path:
    store = files(root)
    store.write(target, store.open_graph(), "2026-12-06T10:00:00.000Z")
    return target


def test_archive_holds_the_records_and_never_secrets_logs_or_derived_files(
    data: Path, tmp_path: Path
) -> None:
    archive = backup(data, tmp_path / "b.zip")
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        manifest = orjson.loads(zf.read(MANIFEST))
        settings = orjson.loads(zf.read("settings.json"))
        usage = zf.read("graph/usage.jsonl")
    assert {
        "settings.json",
        "chats/c1.json",
        "chats/c1.log",
        "graph/nodes.jsonl",
        "graph/positions.json",
    } <= names
    for never in (
        "secrets.json",
        "subscriptions/chatgpt.json",
        "logs/offline-model.log",
        "chats/.index.json",
    ):
        assert never not in names
    assert "graph/view.snapshot" not in names and "chats/bad.json" not in names
    assert settings == {"agent": {"contextTokens": 9000}, "extra": {}}  # the key left out, the count kept
    assert usage == b'{"a": 1}\n'  # whole lines only
    assert manifest["counts"] == {
        "lessons": 1,
        "propositions": 200,
        "practiceSets": 0,
        "jobs": 0,
        "settings": True,
    }
    reasons = {s["path"]: s["reason"] for s in manifest["skipped"]}
    assert "chats/bad.json" in reasons and "untouched" in reasons["chats/bad.json"]
    assert (data / "chats" / "bad.json").read_text() == "{not json"  # left where it was


def test_a_checked_archive_restores_at_start_and_the_replaced_data_is_kept(
    data: Path, tmp_path: Path
) -> None:
    archive = backup(data, tmp_path / "b.zip")
    before = tree(data)
    fresh = tmp_path / "fresh"
    (fresh / "chats").mkdir(parents=True)
    (fresh / "chats" / "other.json").write_bytes(orjson.dumps({**CHAT, "id": "other"}))
    store = files(fresh)
    manifest, _ = store.check(archive)
    assert manifest.counts.lessons == 1
    assert store.inventory().lessons == 1
    store.stage(archive)
    assert (fresh / "chats" / "other.json").exists()  # nothing moves until the next start
    aside = apply_pending_restore(fresh, "t1")
    assert aside is not None and (aside / "chats" / "other.json").exists()
    restored = tree(fresh)
    for name in (
        "chats/c1.json",
        "chats/c1.log",
        "graph/nodes.jsonl",
        "graph/chains.jsonl",
        "graph/positions.json",
    ):
        assert restored[name] == before[name], name
    assert "chats/other.json" not in restored
    assert apply_pending_restore(fresh, "t2") is None  # applied once


def test_a_crash_between_the_renames_is_finished_at_the_next_start(data: Path, tmp_path: Path) -> None:
    archive = backup(data, tmp_path / "b.zip")
    fresh = tmp_path / "fresh"
    (fresh / "practice").mkdir(parents=True)
    (fresh / "practice" / "note.txt").write_text("mine")
    files(fresh).stage(archive)
    pending = fresh / "restore" / "pending"
    # the first start moved the old areas aside and only the graph in, then died
    (pending / "aside").write_text("replaced-t1")
    aside = fresh / "restore" / "replaced-t1"
    aside.mkdir()
    os.replace(fresh / "practice", aside / "practice")
    (aside / ".moved").write_text("")
    os.replace(pending / "graph", fresh / "graph")
    assert apply_pending_restore(fresh, "t2") == aside
    assert (fresh / "chats" / "c1.json").exists() and (fresh / "graph" / "nodes.jsonl").exists()
    assert (aside / "practice" / "note.txt").read_text() == "mine"
    assert not pending.exists()


def rezip(archive: Path, target: Path, change: dict[str, bytes | None], *, manifest_too: bool = True) -> Path:
    """A copy of `archive` with entries replaced (None: removed), the manifest updated to match
    (so only the check under test can refuse it)."""
    with zipfile.ZipFile(archive) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    manifest = orjson.loads(entries.pop(MANIFEST))
    for name, payload in change.items():
        if payload is None:
            entries.pop(name, None)
        else:
            entries[name] = payload
    if manifest_too:
        manifest["files"] = [
            {"path": n, "size": len(p), "sha256": hashlib.sha256(p).hexdigest()} for n, p in entries.items()
        ]
    with zipfile.ZipFile(target, "w") as zf:
        for name, payload in entries.items():
            zf.writestr(name, payload)
        zf.writestr(MANIFEST, orjson.dumps(manifest))
    return target


def link_zip(archive: Path, target: Path) -> Path:
    with zipfile.ZipFile(archive) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    with zipfile.ZipFile(target, "w") as zf:
        for name, payload in entries.items():
            zf.writestr(name, payload)
        info = zipfile.ZipInfo("chats/c2.json")
        info.external_attr = 0o120777 << 16  # a symbolic link to ../../etc/passwd
        zf.writestr(info, "../../etc/passwd")
    return target


def newer(archive: Path, target: Path) -> Path:
    with zipfile.ZipFile(archive) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    manifest = orjson.loads(entries.pop(MANIFEST))
    manifest["version"] = 2
    with zipfile.ZipFile(target, "w") as zf:
        for name, payload in entries.items():
            zf.writestr(name, payload)
        zf.writestr(MANIFEST, orjson.dumps(manifest))
    return target


def written(target: Path, payload: bytes) -> Path:
    target.write_bytes(payload)
    return target


def other_zip(target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as zf:
        zf.writestr("notes/a.md", "# a")
    return target


BAD: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "truncated": (lambda a, t: written(t, a.read_bytes()[: a.stat().st_size // 2]), "cut short"),
    "not a zip": (lambda a, t: written(t, b"hello, this is a text file"), "not a Learning Harness backup"),
    "a zip of something else": (lambda a, t: other_zip(t), "not a Learning Harness backup"),
    "newer version": (newer, "newer version"),
    "dot-dot": (lambda a, t: rezip(a, t, {"chats/../../evil.json": b"{}"}), "leaves the data dir"),
    "absolute": (lambda a, t: rezip(a, t, {"/etc/evil.json": b"{}"}), "absolute path"),
    "link": (link_zip, "is a link"),
    "a ledger line that does not parse": (
        lambda a, t: rezip(a, t, {"graph/sessions.jsonl": b'{"source": 1}\n'}),
        "does not parse",
    ),
    "an id twice": (
        lambda a, t: rezip(a, t, {"chats/c2.json": orjson.dumps(CHAT)}),
        "must match its file name",
    ),
    "a file changed after the backup": (
        lambda a, t: rezip(a, t, {"graph/usage.jsonl": b'{"b": 2}\n'}, manifest_too=False),
        "not the file its manifest lists",
    ),
    "a file missing": (
        lambda a, t: rezip(a, t, {"chats/c1.log": None}, manifest_too=False),
        "incomplete",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_archive_is_refused_with_its_reason_and_changes_nothing(
    data: Path, tmp_path: Path, case: str
) -> None:
    archive = backup(data, tmp_path / "b.zip")
    make, reason = BAD[case]
    bad = make(archive, tmp_path / "bad.zip")
    target = tmp_path / "target"
    (target / "chats").mkdir(parents=True)
    (target / "chats" / "mine.json").write_bytes(orjson.dumps({**CHAT, "id": "mine"}))
    before = tree(target)
    store = files(target)
    with pytest.raises(ArchiveRefused, match=reason):
        store.check(bad)
    with pytest.raises(ArchiveRefused, match=reason):
        store.stage(bad)
    assert apply_pending_restore(target, "t") is None
    assert tree(target) == before
    assert not (tmp_path / "evil.json").exists()


def test_an_upload_over_the_limit_is_refused_and_removed(tmp_path: Path) -> None:
    store = files(tmp_path)
    with pytest.raises(ArchiveRefused, match="larger than"):
        store.receive(io.BytesIO(b"x" * (3 << 20)), "upload-1", 2 << 20)
    assert list((tmp_path / "restore").iterdir()) == []


def test_a_commit_appended_during_the_backup_is_not_half_in_it(data: Path, tmp_path: Path) -> None:
    store = files(data)
    graph = store.open_graph()  # opened: the ledgers' sizes are fixed now
    with (data / "graph" / "nodes.jsonl").open("ab") as ledger:
        ledger.write(b'{"id": "n_ffffffffffffffff", "name": "late"')  # an append in flight
    store.write(tmp_path / "b.zip", graph, "2026-12-06T10:00:00.000Z")
    with zipfile.ZipFile(tmp_path / "b.zip") as zf:
        nodes = zf.read("graph/nodes.jsonl")
    assert b"late" not in nodes and nodes.endswith(b"\n")
    files(tmp_path / "fresh").check(tmp_path / "b.zip")


def test_leftovers_of_a_stopped_server_are_removed_at_start(data: Path, tmp_path: Path) -> None:
    restore = data / "restore"
    (restore / "pending.part" / "chats").mkdir(parents=True)
    for name in ("upload-bk_1.zip", "outgoing-abc.zip", "outgoing-abc.zip.part"):
        (restore / name).write_bytes(b"partial")
    aside = restore / "replaced-old"
    aside.mkdir()
    assert apply_pending_restore(data, "t") is None
    assert sorted(p.name for p in restore.iterdir()) == ["replaced-old"]  # kept: the learner's data
