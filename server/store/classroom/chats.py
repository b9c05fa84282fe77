"""Session records as JSON files: `data/chats/<id>.json` and its append-only log `<id>.log`
(implements core.ports.ChatStore), with a read cache and the session list's index,
`data/chats/.index.json` (issue 15).

Records are written as compact JSON (orjson, one line); the pretty files older builds wrote read
back unchanged and become compact at their next save.

The record's files, the append-only log of tail changes (decision 0015) and reading them back are
`chat_files`; the session index's file and rows are `chat_index`. This module stays past 400 lines
because the read cache, the saves and the index's upkeep share one lock and one view of the files'
state, so they are one class.

Read cache: `get` and `record_json` re-read a record only when its files changed, judged by
`(st_mtime_ns, st_size, st_ino)` of the snapshot and of the log (an atomic replace gives a new
inode); a save puts what it wrote into the cache. Cached records are shared: callers treat a
`ChatRecord` as an immutable value and derive changed ones with `model_copy(update=...)` (every
caller in `server/` does; nothing mutates `record.messages`, its dicts or its fields in place; the
log's tail diff relies on it). The cache holds at most `cache_size` records and `cache_bytes` of
record files (their in-memory form is several times larger); the least
recently used go first, but the last one used always stays.

Index: kept in memory on save and delete, written at most once per `INDEX_FLUSH_S` (a burst of
saves, such as a turn's write-ahead and reply, writes it once; a timer writes what is pending, and
`flush` at shutdown), and checked against the record files only when the directory changed or the
last scan is `rescan_s` old (`chat_index`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from server.core.contracts.chat import CHAT_ID_PATTERN, ChatRecord, ChatSummary, summarize
from server.core.ports import StoreCorrupt
from server.store.atomic import write_bytes_atomic
from server.store.classroom.chat_files import (
    GEN_KEY,
    LOG_SUFFIX,
    NO_FILE,
    CacheEntry,
    Disk,
    FileKey,
    LogState,
    StateKey,
    append_log,
    as_written,
    compact_json,
    file_key,
    files_state,
    log_generation,
    read_disk,
    tail_change,
)
from server.store.classroom.chat_index import (
    INDEX_FLUSH_S,
    INDEX_NAME,
    RESCAN_S,
    Row,
    index_payload,
    load_index,
    record_files,
    refresh,
)

log = logging.getLogger("lh.store.chats")

COMPACT_ENTRIES = 512
"""A log past this many lines is folded into a new snapshot at the next save."""
COMPACT_FRACTION = 0.25
COMPACT_MIN_BYTES = 64 * 1024
"""A log past max(COMPACT_FRACTION × snapshot size, this) bytes is folded likewise."""


def read_record_data(root: Path, chat_id: str) -> dict[str, Any] | None:
    """The record's JSON object as its files hold it (snapshot + log, generation stripped), for
    tools and tests that inspect the disk. None when absent; raises StoreCorrupt."""
    disk = read_disk(root, chat_id)
    return disk.data if disk is not None else None


class FileChatStore:
    """One JSON file per session under `root`.

    Args:
        root: the chats directory (created on first save).
        cache_size: most records kept in the read cache.
        cache_bytes: most record-file bytes (st_size) kept in the read cache (64 MiB: about twenty
            10,000-message lessons).
        rescan_s: a listing re-stats every record file when the last scan is older than this, in
            seconds (else only when the directory changed; see the module docstring).

    Thread-safe: one lock guards the cache, the index and the writes (a save's stat must describe
    its own write).
    """

    def __init__(
        self, root: Path, *, cache_size: int = 64, cache_bytes: int = 64 * 2**20, rescan_s: float = RESCAN_S
    ) -> None:
        self.root = root
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes
        self.rescan_s = rescan_s
        self._lock = threading.RLock()
        self._cache: OrderedDict[str, CacheEntry] = OrderedDict()
        self._rows: dict[str, Row] | None = None
        """The index in memory (None until first needed in this process)."""
        self._index_dirty = False
        self._index_written = 0.0
        """When the index file was last written (time.monotonic)."""
        self._index_timer: threading.Timer | None = None
        self._unreadable: dict[str, StateKey] = {}
        """Record files the index skipped as unreadable, by the state they were in (not re-read
        until they change)."""
        self._scanned: FileKey | None = None
        """The chats directory's state when the rows were last checked against every record file
        (and kept since by the store's own writes); None: the next listing scans."""
        self._scanned_at = 0.0
        """When that scan ran (time.monotonic)."""
        self._owning = False
        """Inside `_own_change` (its nested uses are judged by the outermost)."""
        self._listing: list[ChatSummary] | None = None
        """The rows as `summaries` last answered them (None: rebuilt at the next listing)."""

    def held(self) -> AbstractContextManager[Any]:
        """The store's lock as a context: while held no lesson is written (a backup opens a
        lesson's snapshot and log together under it)."""
        return self._lock

    # -- records ----------------------------------------------------------------------------------
    def _path(self, chat_id: str) -> Path:
        if not CHAT_ID_PATTERN.match(chat_id):
            raise ValueError(f"not a session id: {chat_id!r}")
        return self.root / f"{chat_id}.json"

    def _log_path(self, chat_id: str) -> Path:
        return self.root / f"{chat_id}{LOG_SUFFIX}"

    def _state(self, chat_id: str) -> StateKey | None:
        """The record's files' state now (`chat_files.files_state`). Raises OSError, ValueError."""
        return files_state(self._path(chat_id), self._log_path(chat_id))

    def _read_disk(self, chat_id: str) -> Disk | None:
        """The record's files read and replayed (see `read_disk`)."""
        return read_disk(self.root, chat_id)

    def _entry(self, chat_id: str) -> CacheEntry | None:
        """The cached entry, re-read when the files changed. None when absent or not an id.
        Raises StoreCorrupt (the files are left untouched, and nothing is cached)."""
        try:
            path = self._path(chat_id)
        except ValueError:
            return None
        with self._lock:
            try:
                key = self._state(chat_id)
            except OSError as exc:
                raise StoreCorrupt(f"{path}: {exc}") from exc
            if key is None:
                self._cache.pop(chat_id, None)
                return None
            hit = self._cache.get(chat_id)
            if hit is not None and hit.key == key:
                self._cache.move_to_end(chat_id)
                return hit
            if hit is not None:  # changed behind the store's back: the next listing re-stats all
                self._scanned = None
            disk = self._read_disk(chat_id)
            if disk is None:
                self._cache.pop(chat_id, None)
                return None
            try:
                record = ChatRecord.model_validate(disk.data)
            except ValidationError as exc:
                raise StoreCorrupt(f"{path}: not a session record ({exc.error_count()} problems)") from exc
            body = disk.body if disk.body is not None and as_written(disk.data, record) else None
            entry = CacheEntry(disk.key, record, body, disk.gen, disk.snap, disk.log)
            self._remember(chat_id, entry)
            return entry

    def _remember(self, chat_id: str, entry: CacheEntry) -> None:
        self._cache[chat_id] = entry
        self._cache.move_to_end(chat_id)
        held = sum(e.key[1] + e.key[4] for e in self._cache.values())
        while len(self._cache) > 1 and (len(self._cache) > self.cache_size or held > self.cache_bytes):
            _, dropped = self._cache.popitem(last=False)
            held -= dropped.key[1] + dropped.key[4]

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

    def update(self, chat_id: str, change: Callable[[ChatRecord], ChatRecord]) -> ChatRecord | None:
        """Read, change and save one record as one step: no other save of this store runs between
        the read and the write, so a change saved from a worker thread (a turn's, issue 26) and one
        from the event loop (a rename) never overwrite each other. `change` gets the stored record
        and returns the record to store (the same object: nothing is written). Returns what is
        stored now, or None when no such session exists. Raises as `get` and `save` do, and what
        `change` raises (then nothing is written)."""
        with self._lock:
            record = self.get(chat_id)
            if record is None:
                return None
            changed = change(record)
            if changed is not record:
                self.save(changed)
            return changed

    def save(self, record: ChatRecord) -> None:
        """Make `record` the stored record, durably, before returning: one line appended to the
        log when only its tail changed since the cached state (which must still be the files'
        state), else a full atomic write of the snapshot (see the module docstring). OSError
        propagates: a canonical write never fails silently (a failed append is cut off again and
        the cache forgets the record, so the next read is the disk's). Then the cache holds
        `record` and the index its row (an index write that fails is logged: the next listing
        finds the row stale and refreshes it)."""
        path = self._path(record.id)
        with self._lock, self._own_change():
            entry = self._cache.get(record.id)
            op: dict[str, Any] | None = None
            new: CacheEntry | None = None
            if entry is not None and entry.gen and self._state(record.id) == entry.key:
                op = tail_change(entry.record, record)
            if op is not None and entry is not None:
                line = orjson.dumps(op) + b"\n"
                held = entry.log or LogState(entry.gen, entry.snap, 0, 0)
                room = max(COMPACT_FRACTION * entry.snap, COMPACT_MIN_BYTES)
                if held.entries + 1 > COMPACT_ENTRIES or held.size + len(line) > room:
                    op = None  # fold the log into a new snapshot
                elif not op:
                    new = CacheEntry(entry.key, record, entry.body, entry.gen, entry.snap, entry.log)
                else:
                    new = self._append(record, entry, held, line)
            if op is None or new is None:
                new = self._write_full(path, record, entry)
            self._remember(record.id, new)
            rows = self._index()
            rows[record.id] = Row(new.key, summarize(record))
            self._listing = None
            self._unreadable.pop(record.id, None)
            self._write_index(rows)

    def _append(self, record: ChatRecord, entry: CacheEntry, held: LogState, line: bytes) -> CacheEntry:
        """`chat_files.append_log`; a failed append forgets the cached record (raises OSError)."""
        try:
            return append_log(self.root, record, entry, held, line)
        except BaseException:
            self._cache.pop(record.id, None)
            raise

    def _write_full(self, path: Path, record: ChatRecord, entry: CacheEntry | None) -> CacheEntry:
        """Replace the snapshot atomically with a generation no log on disk names, then remove
        the log (it is folded in; if the removal is lost to a crash, its generation no longer
        matches). Returns the new cache entry. Raises OSError (the old files are untouched)."""
        log_path = self._log_path(record.id)
        gen = max(entry.gen if entry is not None else 0, log_generation(log_path)) + 1
        body = compact_json(record)
        payload = body[:-2] + b',"%s":%d}\n' % (GEN_KEY.encode(), gen)
        write_bytes_atomic(path, payload)
        key = file_key(path.stat())
        with contextlib.suppress(FileNotFoundError):
            log_path.unlink()
        return CacheEntry((*key, *NO_FILE), record, body, gen, len(payload), None)

    def delete(self, chat_id: str) -> bool:
        """Remove the record's files (snapshot, then log) and its index row; False when absent."""
        try:
            path = self._path(chat_id)
        except ValueError:
            return False
        with self._lock, self._own_change():
            self._cache.pop(chat_id, None)
            try:
                path.unlink()
            except FileNotFoundError:
                return False
            with contextlib.suppress(FileNotFoundError):
                self._log_path(chat_id).unlink()
            rows = self._index()
            rows.pop(chat_id, None)
            self._listing = None
            self._unreadable.pop(chat_id, None)
            self._write_index(rows)
        return True

    # -- the session index ------------------------------------------------------------------------
    def _dir_state(self) -> FileKey | None:
        """The chats directory's state (None when it is absent or unreadable)."""
        try:
            return file_key(os.stat(self.root))
        except OSError:
            return None

    @contextlib.contextmanager
    def _own_change(self) -> Iterator[None]:
        """Around a write of the store's own (call holding the lock): when the directory was as
        the last scan left it, the change it makes there is the store's, whose rows it keeps
        itself, so the scan's state follows it; else (or when the write failed) the next listing
        scans. Nested uses (a save that writes the index) are judged once, by the outermost."""
        if self._owning:
            yield
            return
        self._owning = True
        before = self._dir_state() if self._scanned is not None else None
        try:
            yield
        except BaseException:  # a failed write may have changed files it did not account for
            self._scanned = None
            raise
        finally:
            self._owning = False
        if self._scanned is not None:
            self._scanned = self._dir_state() if before == self._scanned else None

    def summaries(self) -> list[ChatSummary]:
        """One row per readable session (`running` False; the store does not know turns), in no
        particular order. Reads only the records whose files changed since the index saw them;
        unreadable ones are logged (once per file state) and skipped, never touched. Re-stats the
        record files only when the directory changed or the last scan is `rescan_s` old (module
        docstring); while nothing changed, the answer is the same list object (never mutate it)."""
        with self._lock:
            rows = self._index()
            seen = self._dir_state()
            now = time.monotonic()
            if seen is not None and seen == self._scanned and now - self._scanned_at < self.rescan_s:
                if self._listing is None:  # the store's own writes changed the rows
                    self._listing = [row.summary for row in rows.values()]
                return self._listing
            present = self._record_files()
            # stat'ed before the scan: a change made meanwhile by someone else rescans next time;
            # the index written below is the store's own change (`_own_change`)
            self._scanned, self._scanned_at = seen, now
            changed = refresh(rows, present, self._unreadable, self._entry)
            if changed:
                self._write_index(rows)
            if changed or self._listing is None:
                self._listing = [row.summary for row in rows.values()]
            return self._listing

    def _record_files(self) -> dict[str, StateKey]:
        """Every record's files' state (`chat_index.record_files`): the listing's scan."""
        return record_files(self.root)

    def _index(self) -> dict[str, Row]:
        """The index in memory: loaded from its file once, or rebuilt when that is absent or
        unreadable (rows are checked against the record files by `summaries`)."""
        if self._rows is None:
            loaded = load_index(self.root)
            self._rows = loaded if loaded is not None else {}
        return self._rows

    def _write_index(self, rows: dict[str, Row]) -> None:
        """The index changed (`rows` is `self._rows`): written now when the last write is at least
        INDEX_FLUSH_S old, else by a timer when that time is up. Call holding the lock."""
        self._index_dirty = True
        wait = self._index_written + INDEX_FLUSH_S - time.monotonic()
        if wait <= 0:
            self._flush_index()
        elif self._index_timer is None:
            self._index_timer = threading.Timer(wait, self._timed_flush)
            self._index_timer.daemon = True  # a write lost at exit leaves stale rows, refreshed on read
            self._index_timer.start()

    def _timed_flush(self) -> None:
        with self._lock:
            self._index_timer = None
            if self._index_dirty:
                self._flush_index()

    def flush(self) -> None:
        """Write the index now if a change is pending (at shutdown). Failures are logged."""
        with self._lock:
            if self._index_timer is not None:
                self._index_timer.cancel()
                self._index_timer = None
            if self._index_dirty:
                self._flush_index()

    def _flush_index(self) -> None:
        """Replace the index file (atomic, not fsynced: it is derived). A failure is logged; the
        rows stay right in memory and a stale file is refreshed when next read."""
        rows = self._index()
        payload = index_payload(rows)
        self._index_dirty = False
        self._index_written = time.monotonic()
        try:
            with self._own_change():
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
