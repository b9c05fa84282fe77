"""The session list's index, `data/chats/.index.json` (issue 15): one row per session with the
state of the record files it summarizes, so listing sessions reads no record that did not change.
`chats.FileChatStore` keeps it in memory and writes it (`INDEX_FLUSH_S`); this module is its file
format, its rows, and the scan of the record files it is checked against.

Index: one row per session, `{"file": StateKey, "summary": ChatSummary}`, kept in memory on save
and delete and written at most once per `INDEX_FLUSH_S` (a burst of saves, such as a turn's
write-ahead and reply, writes it once; a timer writes what is pending, and `flush` at shutdown).
It is a derived file: written atomically but not fsynced, and rebuilt from the
records when it is absent or unreadable; a row whose record file no longer matches the state it
saw (written by an older build, by hand, or after a crash lost an index write) is refreshed from
that record alone. Listing sessions therefore reads the index once per process; it reads no
record that did not change.

Listing without a scan (issue 15): stat'ing every record file costs ~3 µs each (3 ms at 1,000
sessions), so a listing re-stats them only when the chats directory itself changed since the last
scan (a file created, removed or renamed into place by someone else: its st_mtime_ns / st_ino), or
when that scan is older than `rescan_s` (2 s): the store's own saves and deletes keep the rows
right themselves. A record changed in place by another program (not through a rename, which
changes the directory) is therefore listed with its new summary within `rescan_s`; one added or
removed at once, unless the directory's timestamp did not move (a change within the filesystem's
timestamp granularity of the scan), then within `rescan_s` too. A read that finds a cached record's
files changed behind the store's back makes the next listing scan. While nothing changed,
`summaries` answers the same list object.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from server.core.contracts.chat import CHAT_ID_PATTERN, ChatSummary, summarize
from server.core.ports import StoreCorrupt
from server.store.classroom.chat_files import LOG_SUFFIX, NO_FILE, CacheEntry, FileKey, StateKey, file_key

log = logging.getLogger("lh.store.chats")

INDEX_NAME = ".index.json"
"""The session index's file name in the chats directory (not a session id: ids have no dots)."""
INDEX_VERSION = 2
"""2: rows keyed by StateKey (snapshot and log), issue 15's append-only log."""
INDEX_FLUSH_S = 1.0
"""The index file is written at most once per this many seconds (it is derived: a write lost to
a crash leaves stale rows, refreshed from their records when next listed)."""
RESCAN_S = 2.0
"""A listing re-stats every record file when its last scan is older than this, in seconds, even
when the chats directory did not change (a record edited in place by another program)."""


@dataclass
class Row:
    """An index row: the record file's state when summarized, the summary, and the row as it is
    written in the index file (serialized once, so writing the index is a join)."""

    key: StateKey
    summary: ChatSummary
    blob: bytes = b""

    def __post_init__(self) -> None:
        if not self.blob:
            summary = self.summary.model_dump(mode="json", by_alias=True, exclude={"running"})
            self.blob = orjson.dumps({"file": list(self.key), "summary": summary})


def index_payload(rows: dict[str, Row]) -> bytes:
    """The index file's bytes for `rows` (each row serialized once, when made: a join)."""
    return b'{"version":%d,"sessions":[' % INDEX_VERSION + b",".join(r.blob for r in rows.values()) + b"]}"


def record_files(root: Path) -> dict[str, StateKey]:
    """Session id -> its files' state, for every `<id>.json` in the chats directory `root`
    (with its `<id>.log`, when there is one); {} when `root` is absent."""
    snaps: dict[str, FileKey] = {}
    logs: dict[str, FileKey] = {}
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return {}
    for item in entries:
        name = item.name
        stem, dot, ext = name.rpartition(".")
        into = snaps if ext == "json" else logs if ext == LOG_SUFFIX[1:] else None
        if into is None or not dot or not CHAT_ID_PATTERN.match(stem):
            continue
        try:
            into[stem] = file_key(item.stat(follow_symlinks=True))
        except OSError:  # vanished meanwhile, or a dangling link: not a session
            continue
    return {chat_id: (*snap, *logs.get(chat_id, NO_FILE)) for chat_id, snap in snaps.items()}


def load_index(root: Path) -> dict[str, Row] | None:
    """The index file's rows in the chats directory `root`, by session id; None when the file
    is absent or unreadable (logged): the caller rebuilds it from the records."""
    path = root / INDEX_NAME
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("the session index %s is unreadable (%s); rebuilding it from the records", path, exc)
        return None
    try:
        if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
            raise ValueError(f"not a version {INDEX_VERSION} index")
        rows: dict[str, Row] = {}
        for item in data["sessions"]:
            summary = ChatSummary.model_validate(item["summary"])
            key = tuple(int(n) for n in item["file"])
            if len(key) != 6:
                raise ValueError("a row's file state is not (snapshot, log)")
            rows[summary.id] = Row(key, summary, orjson.dumps({"file": key, "summary": item["summary"]}))
        return rows
    except (ValueError, TypeError, KeyError) as exc:  # ValidationError is a ValueError
        log.warning("the session index %s is unreadable (%s); rebuilding it from the records", path, exc)
        return None


def refresh(
    rows: dict[str, Row],
    present: dict[str, StateKey],
    unreadable: dict[str, StateKey],
    read: Callable[[str], CacheEntry | None],
) -> bool:
    """Bring `rows` (in place) to the record files `present` (`record_files`): a row whose record
    is gone is dropped, one whose files changed is made anew from the record `read` gives (None:
    gone meanwhile). A record `read` finds unreadable (StoreCorrupt) is logged and kept in
    `unreadable` by its state, not read again until it changes. Returns whether a row changed."""
    changed = False
    for chat_id in [c for c in rows if c not in present]:
        del rows[chat_id]  # removed behind the store's back
        changed = True
    for chat_id, key in present.items():
        row = rows.get(chat_id)
        if (row is not None and row.key == key) or unreadable.get(chat_id) == key:
            continue
        changed = True
        rows.pop(chat_id, None)
        try:
            entry = read(chat_id)
        except StoreCorrupt as exc:
            log.warning("skipping unreadable session record %s", exc)
            unreadable[chat_id] = key
            continue
        if entry is not None:
            rows[chat_id] = Row(entry.key, summarize(entry.record))
    return changed
