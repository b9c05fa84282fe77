"""A session record's files (implements the disk side of `chats.FileChatStore`): the snapshot
`data/chats/<id>.json`, compact JSON, and its append-only log `<id>.log`; reading them into one
record, the log entry a tail change makes, and appending it.

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
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from server.core.contracts.chat import ChatRecord, TurnUsage
from server.core.ports import StoreCorrupt

log = logging.getLogger("lh.store.chats")

FileKey = tuple[int, int, int]
"""A file's state: (st_mtime_ns, st_size, st_ino). Equal keys: the same bytes (for our writes)."""
StateKey = tuple[int, ...]
"""A record's state on disk: the snapshot's FileKey then the log's (zeros when there is none)."""
NO_FILE: FileKey = (0, 0, 0)

GEN_KEY = "logGeneration"
"""The snapshot's generation, written as its last key; not part of the record (stripped on read)."""
LOG_SUFFIX = ".log"
MAX_TAIL = 64
"""A save putting more messages than this is a full write."""


def file_key(stat: os.stat_result) -> FileKey:
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def files_state(snapshot: Path, log_path: Path) -> StateKey | None:
    """A record's files' state now: the snapshot's FileKey then its log's (NO_FILE when there is
    none); None when there is no snapshot. Raises OSError."""
    try:
        snap = file_key(snapshot.stat())
    except FileNotFoundError:
        return None
    try:
        return (*snap, *file_key(log_path.stat()))
    except FileNotFoundError:
        return (*snap, *NO_FILE)


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
class LogState:
    """A record's live log as last read or written: its generation, the snapshot size it applies
    to, how many entry lines it holds, and its valid length in bytes (header and whole lines; a
    torn tail beyond it is cut off before the next append)."""

    gen: int
    snap: int
    entries: int
    size: int


@dataclass
class CacheEntry:
    """A cached record: the files' state it was read from (or written as), the validated record,
    and its JSON body: the snapshot's bytes when they are the record as this build writes it and
    no log applies, else the record serialized (made lazily, once per state). `gen` is the
    snapshot's generation, `snap` its size; `log` the live log (None: none applies)."""

    key: StateKey
    record: ChatRecord
    body: bytes | None
    gen: int = 0
    snap: int = 0
    log: LogState | None = None


@dataclass
class Disk:
    """A record as read from disk: the replayed JSON object (generation stripped), the snapshot's
    body when it is served as is (no log applied), and what `CacheEntry` keeps."""

    key: StateKey
    data: dict[str, Any]
    body: bytes | None
    gen: int
    snap: int
    log: LogState | None


def split_generation(raw: bytes, data: dict[str, Any]) -> tuple[int, bytes | None]:
    """Pop the generation from a parsed snapshot; returns it (0 when absent) and the snapshot's
    bytes without it when it is the last key as written (else None: serialize when asked)."""
    gen = data.pop(GEN_KEY, None)
    if gen is None:
        return 0, raw
    if not isinstance(gen, int) or isinstance(gen, bool):
        raise ValueError(f"{GEN_KEY} is not an integer")
    suffix = b',"%s":%d}\n' % (GEN_KEY.encode(), gen)
    return gen, (raw[: -len(suffix)] + b"}\n") if raw.endswith(suffix) else None


def replay(data: dict[str, Any], raw: bytes, path: Path) -> tuple[int, int]:
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


def log_generation(path: Path) -> int:
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


def read_disk(root: Path, chat_id: str) -> Disk | None:
    """The record `chat_id` as its files hold it: the snapshot with its log replayed (no cache).
    None when the snapshot is absent. Raises StoreCorrupt (unreadable snapshot or log)."""
    path = root / f"{chat_id}.json"
    try:
        with path.open("rb") as handle:
            snap_key = file_key(os.fstat(handle.fileno()))
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreCorrupt(f"{path}: {exc}") from exc
    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        gen, body = split_generation(raw, data)
    except ValueError as exc:
        raise StoreCorrupt(f"{path}: {exc}") from exc
    log_path = root / f"{chat_id}{LOG_SUFFIX}"
    try:
        with log_path.open("rb") as handle:
            log_key = file_key(os.fstat(handle.fileno()))
            log_raw = handle.read()
    except FileNotFoundError:
        return Disk((*snap_key, *NO_FILE), data, body, gen, len(raw), None)
    except OSError as exc:
        raise StoreCorrupt(f"{log_path}: {exc}") from exc
    live = None
    try:
        header = orjson.loads(log_raw[: log_raw.index(b"\n")])
        if gen and header == {"gen": gen, "snap": len(raw)}:
            live = LogState(gen, len(raw), 0, 0)
    except ValueError:  # a torn header: the log was never used (its first append never returned)
        pass
    if live is not None:
        live.entries, live.size = replay(data, log_raw, log_path)
        if live.entries:
            body = None
    return Disk((*snap_key, *log_key), data, body, gen, len(raw), live)


def tail_change(old: ChatRecord, new: ChatRecord) -> dict[str, Any] | None:
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


def append_log(root: Path, record: ChatRecord, entry: CacheEntry, held: LogState, line: bytes) -> CacheEntry:
    """Append `line` (turning `entry` into `record`) to the record's log in `root` (created with
    its header when none applies), then fdatasync (and the directory's entry of a new log).
    Returns the new cache entry. Raises OSError after cutting a partial line off (the caller
    forgets its cached record: the next read is the disk's)."""
    chat_id = record.id
    path = root / f"{chat_id}{LOG_SUFFIX}"
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
            with contextlib.suppress(OSError):  # else dropped on read, cut off at the next append
                os.ftruncate(fd, offset)
            raise
        log_key = file_key(os.fstat(fd))
    finally:
        os.close(fd)
    if fresh and hasattr(os, "O_DIRECTORY"):  # the new file's name is durable too
        dir_fd = os.open(root, os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    live = LogState(held.gen, held.snap, held.entries + 1, offset + len(payload))
    return CacheEntry((*entry.key[:3], *log_key), record, None, entry.gen, entry.snap, live)


def as_written(data: Any, record: ChatRecord) -> bool:
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
