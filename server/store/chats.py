"""Session records as JSON files: `data/chats/<id>.json` (implements core.ports.ChatStore), with a
read cache and the session list's index, `data/chats/.index.json` (issue 15).

Records are written as compact JSON (orjson, one line); the pretty files older builds wrote read
back unchanged and become compact at their next save.

Read cache: `get` and `record_json` re-read a record only when its file changed, judged by
`(st_mtime_ns, st_size, st_ino)` (an atomic replace gives a new inode); a save puts what it wrote
into the cache. Cached records are shared: callers treat a `ChatRecord` as an immutable value and
derive changed ones with `model_copy(update=...)` (every caller in `server/` does; nothing mutates
`record.messages`, its dicts or its fields in place). The cache holds at most `cache_size` records
and `cache_bytes` of record files (their in-memory form is several times larger); the least
recently used go first, but the last one used always stays.

Index: one row per session, `{"file": [mtime_ns, size, ino], "summary": ChatSummary}`, kept on
save and delete. It is a derived file: written atomically but not fsynced, and rebuilt from the
records when it is absent or unreadable; a row whose record file no longer matches the state it
saw (written by an older build, by hand, or after a crash lost an index write) is refreshed from
that record alone. Listing sessions therefore reads the index once per process and stats the
record files; it reads no record that did not change.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from server.core.contracts.chat import CHAT_ID_PATTERN, ChatRecord, ChatSummary, summarize
from server.core.ports import StoreCorrupt
from server.store.atomic import write_bytes_atomic

log = logging.getLogger("lh.store.chats")

FileKey = tuple[int, int, int]
"""A file's state: (st_mtime_ns, st_size, st_ino). Equal keys: the same bytes (for our writes)."""

INDEX_NAME = ".index.json"
"""The session index's file name in the chats directory (not a session id: ids have no dots)."""
INDEX_VERSION = 1


def _key(stat: os.stat_result) -> FileKey:
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def compact_json(record: ChatRecord) -> bytes:
    """The record as written to its file: compact JSON (camelCase keys), one line, `\\n`-ended."""
    # The messages are JSON already (UIMessages as parsed): orjson writes them directly, which is
    # ~10x faster than pydantic's serializer walking 10,000 dicts; the rest keeps the field order.
    head = record.model_dump(mode="json", by_alias=True, exclude={"messages"})
    ordered: dict[str, object] = {}
    for key, value in head.items():
        if key == "usage":
            ordered["messages"] = record.messages
        ordered[key] = value
    ordered.setdefault("messages", record.messages)
    return orjson.dumps(ordered) + b"\n"


@dataclass
class _Entry:
    """A cached record: the file state it was read from (or written as), the validated record,
    and its JSON body: the file's bytes when they are the record as this build writes it, else
    the record re-serialized (made lazily, once per file state)."""

    key: FileKey
    record: ChatRecord
    body: bytes | None


@dataclass
class _Row:
    """An index row: the record file's state when summarized, the summary, and the row as it is
    written in the index file (serialized once, so writing the index is a join)."""

    key: FileKey
    summary: ChatSummary
    blob: bytes = b""

    def __post_init__(self) -> None:
        if not self.blob:
            summary = self.summary.model_dump(mode="json", by_alias=True, exclude={"running"})
            self.blob = orjson.dumps({"file": list(self.key), "summary": summary})


class FileChatStore:
    """One JSON file per session under `root`.

    Args:
        root: the chats directory (created on first save).
        cache_size: most records kept in the read cache.
        cache_bytes: most record-file bytes (st_size) kept in the read cache (64 MiB: about twenty
            10,000-message lessons).

    Thread-safe: one lock guards the cache, the index and the writes (a save's stat must describe
    its own write).
    """

    def __init__(self, root: Path, *, cache_size: int = 64, cache_bytes: int = 64 * 2**20) -> None:
        self.root = root
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes
        self._lock = threading.RLock()
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        self._rows: dict[str, _Row] | None = None
        """The index in memory (None until first needed in this process)."""
        self._unreadable: dict[str, FileKey] = {}
        """Record files the index skipped as unreadable, by the state they were in (not re-read
        until they change)."""

    # -- records ----------------------------------------------------------------------------------
    def _path(self, chat_id: str) -> Path:
        if not CHAT_ID_PATTERN.match(chat_id):
            raise ValueError(f"not a session id: {chat_id!r}")
        return self.root / f"{chat_id}.json"

    def _read_record(self, path: Path) -> tuple[FileKey, bytes]:
        """The file's state and bytes, from one open file (consistent even if it is replaced
        meanwhile). Raises FileNotFoundError, OSError."""
        with path.open("rb") as handle:
            key = _key(os.fstat(handle.fileno()))
            return key, handle.read()

    def _entry(self, chat_id: str) -> _Entry | None:
        """The cached entry, re-read when the file changed. None when absent or not an id.
        Raises StoreCorrupt (the file is left untouched, and nothing is cached)."""
        try:
            path = self._path(chat_id)
        except ValueError:
            return None
        with self._lock:
            try:
                key = _key(path.stat())
            except FileNotFoundError:
                self._cache.pop(chat_id, None)
                return None
            except OSError as exc:
                raise StoreCorrupt(f"{path}: {exc}") from exc
            hit = self._cache.get(chat_id)
            if hit is not None and hit.key == key:
                self._cache.move_to_end(chat_id)
                return hit
            try:
                key, raw = self._read_record(path)
            except FileNotFoundError:
                self._cache.pop(chat_id, None)
                return None
            except OSError as exc:
                raise StoreCorrupt(f"{path}: {exc}") from exc
            try:
                data = orjson.loads(raw)
            except ValueError as exc:
                raise StoreCorrupt(f"{path}: {exc}") from exc
            try:
                record = ChatRecord.model_validate(data)
            except ValidationError as exc:
                raise StoreCorrupt(f"{path}: not a session record ({exc.error_count()} problems)") from exc
            entry = _Entry(key, record, raw if _as_written(data, record) else None)
            self._remember(chat_id, entry)
            return entry

    def _remember(self, chat_id: str, entry: _Entry) -> None:
        self._cache[chat_id] = entry
        self._cache.move_to_end(chat_id)
        held = sum(e.key[1] for e in self._cache.values())
        while len(self._cache) > 1 and (len(self._cache) > self.cache_size or held > self.cache_bytes):
            _, dropped = self._cache.popitem(last=False)
            held -= dropped.key[1]

    def get(self, chat_id: str) -> ChatRecord | None:
        """The record, or None. Raises StoreCorrupt when the file is unreadable (left untouched).

        The record may be the cached object shared with other callers: never mutate it."""
        entry = self._entry(chat_id)
        return entry.record if entry is not None else None

    def record_json(self, chat_id: str) -> bytes | None:
        """The record as a JSON object's bytes (what `get` returns, dumped by alias), or None.

        Usually the file's own bytes: no re-serialization. A file whose JSON is not the record as
        this build writes it (a default missing, a snake_case key) is answered re-serialized, once
        per file state. Raises StoreCorrupt as `get` does."""
        with self._lock:
            entry = self._entry(chat_id)
            if entry is None:
                return None
            if entry.body is None:
                entry.body = compact_json(entry.record)
            return entry.body

    def save(self, record: ChatRecord) -> None:
        """Replace the record atomically (compact JSON). OSError propagates: a canonical write never
        fails silently. Then the cache holds `record` and the index its row (an index write that
        fails is logged: the next listing finds the row stale and refreshes it)."""
        path = self._path(record.id)
        payload = compact_json(record)
        with self._lock:
            write_bytes_atomic(path, payload)
            key = _key(path.stat())
            self._remember(record.id, _Entry(key, record, payload))
            rows = self._index()
            rows[record.id] = _Row(key, summarize(record))
            self._unreadable.pop(record.id, None)
            self._write_index(rows)

    def delete(self, chat_id: str) -> bool:
        """Remove the record file and its index row; False when absent."""
        try:
            path = self._path(chat_id)
        except ValueError:
            return False
        with self._lock:
            self._cache.pop(chat_id, None)
            try:
                path.unlink()
            except FileNotFoundError:
                return False
            rows = self._index()
            rows.pop(chat_id, None)
            self._unreadable.pop(chat_id, None)
            self._write_index(rows)
        return True

    # -- the session index ------------------------------------------------------------------------
    def summaries(self) -> list[ChatSummary]:
        """One row per readable session (`running` False; the store does not know turns), in no
        particular order. Reads only the records whose files changed since the index saw them;
        unreadable ones are logged (once per file state) and skipped, never touched."""
        with self._lock:
            rows = self._index()
            present = self._record_files()
            changed = False
            for chat_id in [c for c in rows if c not in present]:
                del rows[chat_id]  # removed behind the store's back
                changed = True
            for chat_id, key in present.items():
                row = rows.get(chat_id)
                if (row is not None and row.key == key) or self._unreadable.get(chat_id) == key:
                    continue
                changed = True
                rows.pop(chat_id, None)
                try:
                    entry = self._entry(chat_id)
                except StoreCorrupt as exc:
                    log.warning("skipping unreadable session record %s", exc)
                    self._unreadable[chat_id] = key
                    continue
                if entry is not None:
                    rows[chat_id] = _Row(entry.key, summarize(entry.record))
            if changed:
                self._write_index(rows)
            return [row.summary for row in rows.values()]

    def _record_files(self) -> dict[str, FileKey]:
        """Session id -> file state, for every `<id>.json` in the directory."""
        out: dict[str, FileKey] = {}
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return out
        for item in entries:
            name = item.name
            if not name.endswith(".json") or not CHAT_ID_PATTERN.match(name[:-5]):
                continue
            try:
                out[name[:-5]] = _key(item.stat(follow_symlinks=True))
            except OSError:  # vanished meanwhile, or a dangling link: not a session
                continue
        return out

    def _index(self) -> dict[str, _Row]:
        """The index in memory: loaded from its file once, or rebuilt when that is absent or
        unreadable (rows are checked against the record files by `summaries`)."""
        if self._rows is None:
            loaded = self._load_index()
            self._rows = loaded if loaded is not None else {}
        return self._rows

    def _load_index(self) -> dict[str, _Row] | None:
        path = self.root / INDEX_NAME
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
            rows: dict[str, _Row] = {}
            for item in data["sessions"]:
                summary = ChatSummary.model_validate(item["summary"])
                mtime, size, ino = item["file"]
                key = (int(mtime), int(size), int(ino))
                rows[summary.id] = _Row(key, summary, orjson.dumps({"file": key, "summary": item["summary"]}))
            return rows
        except (ValueError, TypeError, KeyError) as exc:  # ValidationError is a ValueError
            log.warning("the session index %s is unreadable (%s); rebuilding it from the records", path, exc)
            return None

    def _write_index(self, rows: dict[str, _Row]) -> None:
        """Replace the index file (atomic, not fsynced: it is derived). A failure is logged; the
        rows stay right in memory and a stale file is refreshed when next read."""
        payload = (
            b'{"version":%d,"sessions":[' % INDEX_VERSION + b",".join(r.blob for r in rows.values()) + b"]}"
        )
        try:
            write_bytes_atomic(self.root / INDEX_NAME, payload, durable=False)
        except OSError as exc:
            log.warning("could not write the session index in %s: %s", self.root, exc)

    def list(self) -> list[ChatRecord]:
        """Every readable record (unreadable files are logged and skipped, never deleted).

        Reads every record that is not cached: for the session list use `summaries`."""
        if not self.root.is_dir():
            return []
        records = []
        for path in sorted(self.root.glob("*.json")):
            if not CHAT_ID_PATTERN.match(path.stem):
                continue
            try:
                record = self.get(path.stem)
            except StoreCorrupt as exc:
                log.warning("skipping unreadable session record %s", exc)
                continue
            if record is not None:
                records.append(record)
        return records


def _as_written(data: Any, record: ChatRecord) -> bool:
    """Whether parsed file JSON `data` is `record` as this build dumps it, so the file's bytes can
    be answered as they are. Messages are free-form JSON kept verbatim by validation, so only the
    rest is compared (cheap at any transcript length)."""
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return False
    rest = {k: v for k, v in data.items() if k != "messages"}
    dumped = record.model_dump(mode="json", by_alias=True, exclude={"messages"})
    # compared as bytes, not as dicts: `true == 1` and `0 == 0.0` in Python, not in JSON text
    return orjson.dumps(rest, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        dumped, option=orjson.OPT_SORT_KEYS
    )
