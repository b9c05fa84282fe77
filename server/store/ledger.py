"""Append-only JSONL ledgers: whole-line appends, tolerant reads, atomic rewrites (seed §6).

A reader skips (and logs) a torn or invalid line instead of guessing. An append first ends a torn
last line (from a crash mid-write), so a new line is never glued onto a fragment.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Generic, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

log = logging.getLogger("lh.store.ledger")
M = TypeVar("M", bound=BaseModel)


def read_ledger(path: Path, model: type[M]) -> Iterator[M]:
    """Valid lines of `path` as `model` instances, in order; invalid lines are skipped and logged."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    start, number = 0, 0  # one line at a time: no list of every line's bytes (issue 28 item 3)
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        number += 1
        raw = data[start:end]
        start = end + 1
        if not raw.strip():
            continue
        try:
            yield model.model_validate_json(raw)
        except ValidationError as exc:
            log.warning("%s line %d skipped: %s", path.name, number, str(exc).splitlines()[0])


def _dump(line: BaseModel) -> bytes:
    return orjson.dumps(line.model_dump(mode="json", by_alias=True, exclude_none=True)) + b"\n"


def append_ledger(path: Path, lines: Iterable[BaseModel], *, sync: bool = True) -> bool:
    """Append whole lines with one write, then fsync (`sync=False`: no fsync, the caller has it
    done, see `LedgerSyncer`). Returns whether anything was written. Raises OSError loudly."""
    payload = b"".join(_dump(line) for line in lines)
    if not payload:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            payload = b"\n" + payload  # end a torn line left by a crash
        os.write(fd, payload)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return True


class LedgerSyncer:
    """Appends written at once, fsynced by one worker thread (issue 16: an fsync on the event loop
    stalled it 10-100 ms per append on a busy disk; the usage and source-stamp appends, one each
    per extraction run, were most of the loop's stalls during a vault import).

    `append` writes the lines with one `write` in the caller's thread, so every reader sees them at
    once and appends keep their call order; the file's fsync follows in the worker thread, the
    oldest requested file first (an fsync covers every write to the file before it). A process
    that dies meanwhile loses nothing (the lines are in the kernel's page cache); only a machine
    crash in the few milliseconds before the fsync can lose the last lines. `flush` waits for
    every requested fsync (shutdown, tests). A failed fsync is logged, never raised.
    """

    def __init__(self) -> None:
        self._pending: dict[Path, None] = {}  # ordered set: files written and not yet fsynced
        self._busy = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def append(self, path: Path, lines: Iterable[BaseModel]) -> None:
        """`append_ledger(path, lines)` with its fsync left to the worker. Raises OSError when the
        write fails."""
        if not append_ledger(path, lines, sync=False):
            return
        with self._cond:
            self._pending[path] = None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ledger-fsync", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every file written so far is fsynced; False when `timeout` (s) ran out."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending))
                path = next(iter(self._pending))
                del self._pending[path]
                self._busy = True
            try:
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError:
                log.exception("fsync of %s failed", path.name)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


def split_ledger(path: Path, ids: Collection[str], model: type[M]) -> tuple[bytes, list[M]]:
    """The ledger's bytes without the lines whose `"id"` is in `ids`, and those lines as `model`
    (in order), for a rewrite that drops a few lines of a large ledger: each line is parsed by
    orjson for its id only and kept as its own bytes (no model validation, no re-serialisation:
    at 100k chain lines this is ~10x cheaper than validating every line and writing it again,
    issue 17). The caller writes the kept bytes (`write_bytes_atomic`: temp file, fsync, rename).
    A line that is not JSON is dropped, as `read_ledger` skips it; a JSON line that `model` would
    refuse is kept (readers skip it). Raises OSError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return b"", []
    kept: list[bytes] = []
    taken: list[M] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        line_id = value.get("id") if isinstance(value, dict) else None
        if isinstance(line_id, str) and line_id in ids:
            with contextlib.suppress(ValidationError):  # a line no reader counts: dropped too
                taken.append(model.model_validate_json(raw))
            continue
        kept.append(raw + b"\n")
    return b"".join(kept), taken


P = TypeVar("P")


class LedgerTail(Generic[P]):
    """Follows one append-only ledger: each `poll` parses only the whole lines appended since the
    last one (the store's in-memory indexes stay current without re-reading the file).

    Args:
        path: the ledger.
        parse: one line's bytes -> its value; raises ValueError (pydantic's ValidationError,
            orjson's JSONDecodeError) for a line to skip, which is logged once.

    A replaced file (another inode, as an atomic rewrite leaves), a shorter one, or one whose bytes
    before the last read position changed is read again from its start (`poll` then says
    `reset`). A last line without its newline is taken only when it parses (a torn one waits: the
    next append ends it, and it is then skipped as an invalid line, as `read_ledger` does). Not
    thread-safe: its owner serializes polls."""

    CHECK_BYTES = 64

    def __init__(self, path: Path, parse: Callable[[bytes], P]) -> None:
        self.path = path
        self.parse = parse
        self.inode = -1
        self.offset = 0
        self._check = b""
        self._number = 0
        self._open_end = False
        """The last line taken had no newline: what follows it must start with one."""

    def poll(self) -> tuple[bool, list[tuple[P, int, int]]]:
        """(reset, new lines as (value, byte offset, byte length)). `reset`: the earlier lines are
        void and the new ones are the whole file. Raises OSError other than a missing file."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            reset = self.inode != -1
            self.inode, self.offset, self._check, self._number = -1, 0, b"", 0
            self._open_end = False
            return reset, []
        try:
            stat = os.fstat(fd)
            reset = stat.st_ino != self.inode or stat.st_size < self.offset
            if not reset and self._check:
                at = self.offset - len(self._check)
                reset = os.pread(fd, len(self._check), at) != self._check
            if not reset and self._open_end and stat.st_size > self.offset:
                reset = os.pread(fd, 1, self.offset) != b"\n"  # glued onto: read it all again
            start = 0 if reset else self.offset
            chunks, at = [], start
            while at < stat.st_size:
                got = os.pread(fd, stat.st_size - at, at)
                if not got:
                    break
                chunks.append(got)
                at += len(got)
            data = b"".join(chunks)
        finally:
            os.close(fd)
        if reset:
            self.inode, self._check, self._number = stat.st_ino, b"", 0
        if data:
            self._open_end = False
        out: list[tuple[P, int, int]] = []
        position = 0
        while position < len(data):
            end = data.find(b"\n", position)
            whole = end != -1
            raw = data[position:end] if whole else data[position:]
            if not whole:  # a last line without its newline: taken only once it parses
                try:
                    value = self.parse(raw)
                except ValueError:
                    break
                out.append((value, start + position, len(raw)))
                position = len(data)
                self._open_end = True
                self._number += 1
                break
            self._number += 1
            if raw.strip():
                try:
                    out.append((self.parse(raw), start + position, len(raw)))
                except ValueError as exc:
                    log.warning(
                        "%s line %d skipped: %s", self.path.name, self._number, str(exc).splitlines()[0]
                    )
            position = end + 1
        self.offset = start + position
        self._check = (self._check + data[:position])[-self.CHECK_BYTES :]
        return reset, out


def model_parser(model: type[M]) -> Callable[[bytes], M]:
    """A `LedgerTail` parse for a pydantic line model."""
    return model.model_validate_json
