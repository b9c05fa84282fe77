"""In-memory indexes of the graph ledgers, current with their files (each read parses only the
new tail, `LedgerTail`): the small ledgers' lines by key (`_Followed`) and where each job's node
and chain lines sit (`_Spans`), so a job reads no whole ledger (issue 16)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Generic, TypeVar

import orjson
from pydantic import BaseModel

from server.store.ledger import (
    LedgerTail,
    model_parser,
    read_ledger,
)

M = TypeVar("M", bound=BaseModel)


class _Followed(Generic[M]):
    """A ledger's valid lines kept in memory in ledger order, grouped by `key`, current with the
    file (`LedgerTail`: a read parses only what was appended since the last one). Thread-safe
    (the import's worker thread appends source lines while the loop reads them). `ordered`:
    keep `lines` too (else only `by`, for memory); `last`: keep only each key's last line."""

    def __init__(
        self, path: Path, model: type[M], key: Callable[[M], str], *, ordered: bool = True, last: bool = False
    ) -> None:
        self._tail: LedgerTail[M] = LedgerTail(path, model_parser(model))
        self._key = key
        self._ordered, self._last = ordered, last
        self._lock = threading.Lock()
        self.lines: list[M] = []
        self.by: dict[str, list[M]] = {}

    def current(self) -> _Followed[M]:
        """Take in the new tail (read-only results by contract). Raises OSError."""
        with self._lock:
            reset, new = self._tail.poll()
            if reset:
                self.lines, self.by = [], {}
            for line, _, _ in new:
                if self._ordered:
                    self.lines.append(line)
                if self._last:
                    self.by[self._key(line)] = [line]  # an existing key keeps its first place
                else:
                    self.by.setdefault(self._key(line), []).append(line)
        return self


def _job_of(raw: bytes) -> str:
    """A node or chain line's job, for the span index (ValueError: not such a line)."""
    try:
        job = orjson.loads(raw)["provenance"]["job"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"no provenance.job: {exc}") from exc
    if not isinstance(job, str):
        raise ValueError("provenance.job is not a string")
    return job


class _Spans:
    """Where each job's lines sit in a ledger (byte offset, length), current with the file, so the
    lines of a few jobs are read without parsing the whole ledger. Thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tail = LedgerTail(path, _job_of)
        self._lock = threading.Lock()
        self._by: dict[str, list[tuple[int, int]]] = {}

    def lines(self, jobs: Collection[str], model: type[M]) -> list[M]:
        """The valid lines of `jobs`, in ledger order. Raises OSError."""
        with self._lock:
            reset, new = self._tail.poll()
            if reset:
                self._by = {}
            for job, offset, length in new:
                self._by.setdefault(job, []).append((offset, length))
            spans = sorted(span for job in jobs for span in self._by.get(job, ()))
            if not spans:
                return []
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                return []
            try:
                if os.fstat(fd).st_ino != self._tail.inode:  # replaced since the poll: read it all
                    return [line for line in read_ledger(self.path, model) if line.provenance.job in jobs]  # type: ignore[attr-defined]
                raws = [os.pread(fd, length, offset) for offset, length in spans]
            finally:
                os.close(fd)
        out = []
        for raw in raws:
            try:
                out.append(model.model_validate_json(raw))
            except ValueError:
                continue  # logged when the file was read
        return out
