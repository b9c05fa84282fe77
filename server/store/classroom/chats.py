"""Session records as JSON files: `data/chats/<id>.json` and its append-only log `<id>.log`
(implements core.ports.ChatStore), with a read cache and the session list's index,
`data/chats/.index.json` (issue 15).

Records are written as compact JSON (orjson, one line); the pretty files older builds wrote read
back unchanged and become compact at their next save.

Append-only log (decision 0015): a save that changes only the record's tail (messages appended,
trailing messages cut or replaced, usage appended, head fields such as `updatedAt` or `title` set)
appends one JSON line to `<id>.log` (`os.write` + `fdatasync`) instead of rewriting the whole
snapshot: `{"cut": n, "put": [message...], "usage": [TurnUsage...], "set": {field: value}}`, every
key optional, applied in that order (`cut` keeps the first n messages, `put` appends). The log's
first line is its header `{"gen": g, "snap": size}`: it applies only to a snapshot whose
`logGeneration` (the snapshot's last key, stripped on read) is g and whose size is `size` bytes,
so a log left behind by a crash after a later full write is ignored. Any other change, and a log
past `COMPACT_ENTRIES` lines or past a quarter of the snapshot (at least `COMPACT_MIN_BYTES`), is a
full atomic write of the snapshot with a new generation, after which the log is removed. A last
line that is torn or unparseable was never acknowledged (a save returns after its fdatasync) and
is dropped on read (and cut off before the next append); an unparseable line before it is
corruption (StoreCorrupt). The snapshot plus its log is the whole record at every moment.

Read cache: `get` and `record_json` re-read a record only when its files changed, judged by
`(st_mtime_ns, st_size, st_ino)` of the snapshot and of the log (an atomic replace gives a new
inode); a save puts what it wrote into the cache. Cached records are shared: callers treat a
`ChatRecord` as an immutable value and derive changed ones with `model_copy(update=...)` (every
caller in `server/` does; nothing mutates `record.messages`, its dicts or its fields in place; the
log's tail diff relies on it). The cache holds at most `cache_size` records and `cache_bytes` of
record files (their in-memory form is several times larger); the least
recently used go first, but the last one used always stays.

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

import contextlib
import itertools
import logging
import operator
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from server.core.contracts.chat import CHAT_ID_PATTERN, ChatRecord, ChatSummary, TurnUsage, summarize
from server.core.ports import StoreCorrupt
from server.store.atomic import write_bytes_atomic

log = logging.getLogger("lh.store.chats")

FileKey = tuple[int, int, int]
"""A file's state: (st_mtime_ns, st_size, st_ino). Equal keys: the same bytes (for our writes)."""
StateKey = tuple[int, ...]
"""A record's state on disk: the snapshot's FileKey then the log's (zeros when there is none)."""
NO_FILE: FileKey = (0, 0, 0)

INDEX_NAME = ".index.json"
"""The session index's file name in the chats directory (not a session id: ids have no dots)."""
INDEX_VERSION = 2
"""2: rows keyed by StateKey (snapshot and log), issue 15's append-only log."""

GEN_KEY = "logGeneration"
"""The snapshot's generation, written as its last key; not part of the record (stripped on read)."""
LOG_SUFFIX = ".log"
COMPACT_ENTRIES = 512
"""A log past this many lines is folded into a new snapshot at the next save."""
COMPACT_FRACTION = 0.25
COMPACT_MIN_BYTES = 64 * 1024
"""A log past max(COMPACT_FRACTION × snapshot size, this) bytes is folded likewise."""
MAX_TAIL = 64
"""A save putting more messages than this is a full write."""
INDEX_FLUSH_S = 1.0
"""The index file is written at most once per this many seconds (it is derived: a write lost to
a crash leaves stale rows, refreshed from their records when next listed)."""
RESCAN_S = 2.0
"""A listing re-stats every record file when its last scan is older than this, in seconds, even
when the chats directory did not change (a record edited in place by another program)."""


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
class _Log:
    """A record's live log as last read or written: its generation, the snapshot size it applies
    to, how many entry lines it holds, and its valid length in bytes (header and whole lines; a
    torn tail beyond it is cut off before the next append)."""

    gen: int
    snap: int
    entries: int
    size: int


@dataclass
class _Entry:
    """A cached record: the files' state it was read from (or written as), the validated record,
    and its JSON body: the snapshot's bytes when they are the record as this build writes it and
    no log applies, else the record serialized (made lazily, once per state). `gen` is the
    snapshot's generation, `snap` its size; `log` the live log (None: none applies)."""

    key: StateKey
    record: ChatRecord
    body: bytes | None
    gen: int = 0
    snap: int = 0
    log: _Log | None = None


@dataclass
class _Disk:
    """A record as read from disk: the replayed JSON object (generation stripped), the snapshot's
    body when it is served as is (no log applied), and what `_Entry` keeps."""

    key: StateKey
    data: dict[str, Any]
    body: bytes | None
    gen: int
    snap: int
    log: _Log | None


def _split_generation(raw: bytes, data: dict[str, Any]) -> tuple[int, bytes | None]:
    """Pop the generation from a parsed snapshot; returns it (0 when absent) and the snapshot's
    bytes without it when it is the last key as written (else None: serialize when asked)."""
    gen = data.pop(GEN_KEY, None)
    if gen is None:
        return 0, raw
    if not isinstance(gen, int) or isinstance(gen, bool):
        raise ValueError(f"{GEN_KEY} is not an integer")
    suffix = b',"%s":%d}\n' % (GEN_KEY.encode(), gen)
    return gen, (raw[: -len(suffix)] + b"}\n") if raw.endswith(suffix) else None


def _replay(data: dict[str, Any], raw: bytes, path: Path) -> tuple[int, int]:
    """Apply the log lines after the header in `raw` to `data` (in place). Returns (entries
    applied, valid length in bytes). A torn or unparseable last line is dropped; an unparseable
    line before it raises StoreCorrupt."""
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise StoreCorrupt(f"{path}: the snapshot has no message list")
    start = raw.index(b"\n") + 1
    entries = 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        last = end < 0 or end == len(raw) - 1
        try:
            if end < 0:
                raise ValueError("torn line")
            op = orjson.loads(raw[start:end])
            if not isinstance(op, dict):
                raise ValueError("not an object")
            if "cut" in op:
                del messages[int(op["cut"]) :]
            messages.extend(op.get("put", ()))
            if op.get("usage"):
                data.setdefault("usage", []).extend(op["usage"])
            data.update(op.get("set", {}))
        except (ValueError, TypeError) as exc:
            if last:  # never acknowledged: the save that wrote it did not return
                log.warning("dropping the torn last line of %s (%s)", path, exc)
                break
            raise StoreCorrupt(f"{path}: log line {entries + 2} is unreadable ({exc})") from exc
        entries += 1
        start = end + 1
    return entries, start


def _log_generation(path: Path) -> int:
    """The generation a log file's header names (0 when absent or unreadable)."""
    try:
        with path.open("rb") as handle:
            head = handle.readline(4096)
        gen = orjson.loads(head).get("gen", 0)
        return gen if isinstance(gen, int) else 0
    except (OSError, ValueError, AttributeError):
        return 0


def _differ(a: Any, b: Any) -> bool:
    return orjson.dumps(a) != orjson.dumps(b)


def read_disk(root: Path, chat_id: str) -> _Disk | None:
    """The record `chat_id` as its files hold it: the snapshot with its log replayed (no cache).
    None when the snapshot is absent. Raises StoreCorrupt (unreadable snapshot or log)."""
    path = root / f"{chat_id}.json"
    try:
        with path.open("rb") as handle:
            snap_key = _key(os.fstat(handle.fileno()))
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreCorrupt(f"{path}: {exc}") from exc
    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        gen, body = _split_generation(raw, data)
    except ValueError as exc:
        raise StoreCorrupt(f"{path}: {exc}") from exc
    log_path = root / f"{chat_id}{LOG_SUFFIX}"
    try:
        with log_path.open("rb") as handle:
            log_key = _key(os.fstat(handle.fileno()))
            log_raw = handle.read()
    except FileNotFoundError:
        return _Disk((*snap_key, *NO_FILE), data, body, gen, len(raw), None)
    except OSError as exc:
        raise StoreCorrupt(f"{log_path}: {exc}") from exc
    live = None
    try:
        header = orjson.loads(log_raw[: log_raw.index(b"\n")])
        if gen and header == {"gen": gen, "snap": len(raw)}:
            live = _Log(gen, len(raw), 0, 0)
    except ValueError:  # a torn header: the log was never used (its first append never returned)
        pass
    if live is not None:
        live.entries, live.size = _replay(data, log_raw, log_path)
        if live.entries:
            body = None
    return _Disk((*snap_key, *log_key), data, body, gen, len(raw), live)


def read_record_data(root: Path, chat_id: str) -> dict[str, Any] | None:
    """The record's JSON object as its files hold it (snapshot + log, generation stripped), for
    tools and tests that inspect the disk. None when absent; raises StoreCorrupt."""
    disk = read_disk(root, chat_id)
    return disk.data if disk is not None else None


def _tail_change(old: ChatRecord, new: ChatRecord) -> dict[str, Any] | None:
    """The log entry turning `old` into `new`, or None when the change is not at the tail (a
    message before the last changed, usage not appended, a head field removed, or more than
    MAX_TAIL messages put). Messages are compared by identity: cached records are immutable and
    derived records share their message objects."""
    om, nm = old.messages, new.messages
    k = min(len(om), len(nm))
    if k > 1 and not all(map(operator.is_, itertools.islice(om, k - 1), itertools.islice(nm, k - 1))):
        return None
    p = k if k == 0 or om[k - 1] is nm[k - 1] else k - 1
    if len(nm) - p > MAX_TAIL:
        return None
    op: dict[str, Any] = {}
    if p < len(om):
        op["cut"] = p
    if p < len(nm):
        op["put"] = nm[p:]
    ou, nu = old.usage, new.usage
    if len(nu) < len(ou) or not all(map(operator.is_, ou, nu)):
        return None
    if not all(isinstance(u, TurnUsage) for u in nu[len(ou) :]):
        return None  # not validated (a caller's dict): the full write's serializer handles it
    if len(nu) > len(ou):
        op["usage"] = [u.model_dump(mode="json", by_alias=True) for u in nu[len(ou) :]]
    exclude = {"messages", "usage"}
    before = old.model_dump(mode="json", by_alias=True, exclude=exclude)
    after = new.model_dump(mode="json", by_alias=True, exclude=exclude)
    if not before.keys() <= after.keys() or GEN_KEY in after:
        return None
    # compared as JSON text, not as Python values: `true == 1` in Python, not in JSON
    changed = {k: v for k, v in after.items() if k not in before or _differ(before[k], v)}
    if changed:
        op["set"] = changed
    return op


@dataclass
class _Row:
    """An index row: the record file's state when summarized, the summary, and the row as it is
    written in the index file (serialized once, so writing the index is a join)."""

    key: StateKey
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
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        self._rows: dict[str, _Row] | None = None
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

    # -- records ----------------------------------------------------------------------------------
    def _path(self, chat_id: str) -> Path:
        if not CHAT_ID_PATTERN.match(chat_id):
            raise ValueError(f"not a session id: {chat_id!r}")
        return self.root / f"{chat_id}.json"

    def _log_path(self, chat_id: str) -> Path:
        return self.root / f"{chat_id}{LOG_SUFFIX}"

    def _state(self, chat_id: str) -> StateKey | None:
        """The record's files' state now (None: no snapshot). Raises OSError."""
        try:
            snap = _key(self._path(chat_id).stat())
        except FileNotFoundError:
            return None
        try:
            return (*snap, *_key(self._log_path(chat_id).stat()))
        except FileNotFoundError:
            return (*snap, *NO_FILE)

    def _read_disk(self, chat_id: str) -> _Disk | None:
        """The record's files read and replayed (see `read_disk`)."""
        return read_disk(self.root, chat_id)

    def _entry(self, chat_id: str) -> _Entry | None:
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
            body = disk.body if disk.body is not None and _as_written(disk.data, record) else None
            entry = _Entry(disk.key, record, body, disk.gen, disk.snap, disk.log)
            self._remember(chat_id, entry)
            return entry

    def _remember(self, chat_id: str, entry: _Entry) -> None:
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
            new: _Entry | None = None
            if entry is not None and entry.gen and self._state(record.id) == entry.key:
                op = _tail_change(entry.record, record)
            if op is not None and entry is not None:
                line = orjson.dumps(op) + b"\n"
                held = entry.log or _Log(entry.gen, entry.snap, 0, 0)
                room = max(COMPACT_FRACTION * entry.snap, COMPACT_MIN_BYTES)
                if held.entries + 1 > COMPACT_ENTRIES or held.size + len(line) > room:
                    op = None  # fold the log into a new snapshot
                elif not op:
                    new = _Entry(entry.key, record, entry.body, entry.gen, entry.snap, entry.log)
                else:
                    new = self._append(record, entry, held, line)
            if op is None or new is None:
                new = self._write_full(path, record, entry)
            self._remember(record.id, new)
            rows = self._index()
            rows[record.id] = _Row(new.key, summarize(record))
            self._listing = None
            self._unreadable.pop(record.id, None)
            self._write_index(rows)

    def _append(self, record: ChatRecord, entry: _Entry, held: _Log, line: bytes) -> _Entry:
        """Append `line` (turning `entry` into `record`) to the record's log (created with its
        header when none applies), then fdatasync. Returns the new cache entry. Raises OSError
        after cutting a partial line off."""
        chat_id = record.id
        path = self._log_path(chat_id)
        fresh = entry.log is None
        if fresh:  # a new log (over a stale one, if any): its header names this snapshot
            header = orjson.dumps({"gen": held.gen, "snap": held.snap}) + b"\n"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            payload, offset = header + line, 0
        else:
            fd = os.open(path, os.O_WRONLY)
            payload, offset = line, held.size
        try:
            try:
                if os.fstat(fd).st_size != offset:  # a torn tail from a crash, never acknowledged
                    os.ftruncate(fd, offset)
                os.lseek(fd, offset, os.SEEK_SET)
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
                os.fdatasync(fd)
            except BaseException:
                self._cache.pop(chat_id, None)
                with contextlib.suppress(OSError):  # else dropped on read, cut off at the next append
                    os.ftruncate(fd, offset)
                raise
            log_key = _key(os.fstat(fd))
        finally:
            os.close(fd)
        if fresh and hasattr(os, "O_DIRECTORY"):  # the new file's name is durable too
            dir_fd = os.open(self.root, os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        live = _Log(held.gen, held.snap, held.entries + 1, offset + len(payload))
        return _Entry((*entry.key[:3], *log_key), record, None, entry.gen, entry.snap, live)

    def _write_full(self, path: Path, record: ChatRecord, entry: _Entry | None) -> _Entry:
        """Replace the snapshot atomically with a generation no log on disk names, then remove
        the log (it is folded in; if the removal is lost to a crash, its generation no longer
        matches). Returns the new cache entry. Raises OSError (the old files are untouched)."""
        log_path = self._log_path(record.id)
        gen = max(entry.gen if entry is not None else 0, _log_generation(log_path)) + 1
        body = compact_json(record)
        payload = body[:-2] + b',"%s":%d}\n' % (GEN_KEY.encode(), gen)
        write_bytes_atomic(path, payload)
        key = _key(path.stat())
        with contextlib.suppress(FileNotFoundError):
            log_path.unlink()
        return _Entry((*key, *NO_FILE), record, body, gen, len(payload), None)

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
            return _key(os.stat(self.root))
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
            if changed or self._listing is None:
                self._listing = [row.summary for row in rows.values()]
            return self._listing

    def _record_files(self) -> dict[str, StateKey]:
        """Session id -> its files' state, for every `<id>.json` in the directory (with its
        `<id>.log`, when there is one)."""
        snaps: dict[str, FileKey] = {}
        logs: dict[str, FileKey] = {}
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return {}
        for item in entries:
            name = item.name
            stem, dot, ext = name.rpartition(".")
            into = snaps if ext == "json" else logs if ext == LOG_SUFFIX[1:] else None
            if into is None or not dot or not CHAT_ID_PATTERN.match(stem):
                continue
            try:
                into[stem] = _key(item.stat(follow_symlinks=True))
            except OSError:  # vanished meanwhile, or a dangling link: not a session
                continue
        return {chat_id: (*snap, *logs.get(chat_id, NO_FILE)) for chat_id, snap in snaps.items()}

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
                key = tuple(int(n) for n in item["file"])
                if len(key) != 6:
                    raise ValueError("a row's file state is not (snapshot, log)")
                rows[summary.id] = _Row(key, summary, orjson.dumps({"file": key, "summary": item["summary"]}))
            return rows
        except (ValueError, TypeError, KeyError) as exc:  # ValidationError is a ValueError
            log.warning("the session index %s is unreadable (%s); rebuilding it from the records", path, exc)
            return None

    def _write_index(self, rows: dict[str, _Row]) -> None:
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
        payload = (
            b'{"version":%d,"sessions":[' % INDEX_VERSION + b",".join(r.blob for r in rows.values()) + b"]}"
        )
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
