"""Atomic JSON files: write a temp file beside the target, fsync, rename (seed: canonical writes)."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger("lh.store")

TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")
"""The name `write_bytes_atomic` gives its temp file: `.<target name>.<8 random chars>.tmp`."""


def write_json_atomic(path: Path, data: Any, *, mode: int | None = None) -> None:
    """Replace `path` with `data` as pretty JSON, atomically (see `write_bytes_atomic`).

    Args:
        path: target file.
        data: JSON-serializable value (orjson).
        mode: optional permission bits for the new file (e.g. 0o600 for secrets).
    """
    write_bytes_atomic(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n", mode=mode)


def write_bytes_atomic(path: Path, payload: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` with `payload`, atomically: a temp file beside it, fsync, rename, fsync dir.

    A reader sees either the old file or the new one, never a half-written one. The directory is
    created when missing. Raises OSError (disk full, permissions) after removing the temp file;
    the old file is untouched. `durable=False` skips both fsyncs: only for derived files that are
    rebuilt when found missing, torn or stale after a crash (e.g. the session index).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable and hasattr(os, "O_DIRECTORY"):
        dir_fd = os.open(path.parent, os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def read_json(path: Path) -> Any:
    """Parse a JSON file. Raises FileNotFoundError, or ValueError (orjson.JSONDecodeError)."""
    return orjson.loads(path.read_bytes())


def sweep_temp_files(root: Path) -> list[Path]:
    """Remove the temp files a crashed atomic write left under `root` (call at start, holding the
    data-dir lock, so no write is in flight). Only names of `write_bytes_atomic`'s pattern are
    removed; links are not followed. Returns the removed paths."""
    removed: list[Path] = []
    for dirpath, _, filenames in os.walk(root, followlinks=False):
        for name in filenames:
            path = Path(dirpath) / name
            if TEMP_NAME.match(name) and not path.is_symlink():
                try:
                    path.unlink()
                except OSError as exc:
                    log.warning("could not remove the leftover temp file %s: %s", path, exc)
                    continue
                removed.append(path)
    if removed:
        log.info("removed %d temp file(s) left by an interrupted write: %s", len(removed), removed)
    return sorted(removed)
