"""Atomic JSON files: write a temp file beside the target, fsync, rename (seed: canonical writes)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson


def write_json_atomic(path: Path, data: Any, *, mode: int | None = None) -> None:
    """Replace `path` with `data` as pretty JSON, atomically (see `write_bytes_atomic`).

    Args:
        path: target file.
        data: JSON-serializable value (orjson).
        mode: optional permission bits for the new file (e.g. 0o600 for secrets).
    """
    write_bytes_atomic(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n", mode=mode)


def write_bytes_atomic(path: Path, payload: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `payload`, atomically: a temp file beside it, fsync, rename, fsync dir.

    A reader sees either the old file or the new one, never a half-written one. The directory is
    created when missing. Raises OSError (disk full, permissions) after removing the temp file;
    the old file is untouched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):
        dir_fd = os.open(path.parent, os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def read_json(path: Path) -> Any:
    """Parse a JSON file. Raises FileNotFoundError, or ValueError (orjson.JSONDecodeError)."""
    return orjson.loads(path.read_bytes())
