"""Append-only JSONL ledgers: whole-line appends, tolerant reads, atomic rewrites (seed §6).

A reader skips (and logs) a torn or invalid line instead of guessing. An append first ends a torn
last line (from a crash mid-write), so a new line is never glued onto a fragment.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from server.store.atomic import write_bytes_atomic

log = logging.getLogger("lh.store.ledger")
M = TypeVar("M", bound=BaseModel)


def read_ledger(path: Path, model: type[M]) -> Iterator[M]:
    """Valid lines of `path` as `model` instances, in order; invalid lines are skipped and logged."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            yield model.model_validate_json(raw)
        except ValidationError as exc:
            log.warning("%s line %d skipped: %s", path.name, number, str(exc).splitlines()[0])


def _dump(line: BaseModel) -> bytes:
    return orjson.dumps(line.model_dump(mode="json", by_alias=True, exclude_none=True)) + b"\n"


def append_ledger(path: Path, lines: Iterable[BaseModel]) -> None:
    """Append whole lines with one write, then fsync. Raises OSError loudly."""
    payload = b"".join(_dump(line) for line in lines)
    if not payload:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            payload = b"\n" + payload  # end a torn line left by a crash
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)


def rewrite_ledger(path: Path, lines: Iterable[BaseModel]) -> None:
    """Replace the ledger atomically with exactly `lines` (temp file, fsync, rename)."""
    write_bytes_atomic(path, b"".join(_dump(line) for line in lines))
