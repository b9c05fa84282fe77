"""The process's heap handed back to the OS (glibc): `release_memory` after bursts of jobs and large
derivations, `cap_malloc_arenas` once at start."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from typing import Any


def release_memory() -> None:
    """Hand freed heap back to the OS (glibc `malloc_trim(0)`): after a burst of jobs the arena
    keeps the freed pages mapped, so RSS would stay at its peak. A no-op off glibc."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's `malloc_trim`, looked up once (`find_library` runs `ldconfig` in a subprocess: it
    did so on the event loop after every run, issue 16), or None off glibc."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl or another libc: nothing to call
        return None


M_ARENA_MAX = -8
"""glibc's `mallopt` parameter number for the arena cap (malloc.h)."""
MALLOC_ARENAS = 2
"""Arenas glibc may create (its default is 8 per core): each worker thread that mallocs (the merge
commits, the layout settle) would otherwise get its own arena, whose freed pages stay mapped."""


M_MMAP_THRESHOLD = -3
"""glibc's `mallopt` parameter number for the mmap threshold (malloc.h)."""
MMAP_THRESHOLD = 4 << 20
"""Blocks of at least this many bytes (4 MiB) are mapped on their own and unmapped when freed
(issue 28 item 3). glibc's default starts at 128 KiB but rises to the size of each mapped block
freed, up to 32 MiB, after which a large graph's bodies (26-75 MB at 100k propositions) and the
event loop's write buffer for them came from the heap and stayed in RSS until the next
`malloc_trim` (+31 MB after a drag at 100k, served by a process whose derivation had trimmed
before the answer was written). Setting it also turns that rise off."""


def cap_malloc_arenas(arenas: int = MALLOC_ARENAS, mmap_threshold: int = MMAP_THRESHOLD) -> bool:
    """Cap glibc's malloc arenas (`mallopt(M_ARENA_MAX, arenas)`) and fix its mmap threshold
    (`MMAP_THRESHOLD`), once at start, before threads are made. Returns True if the arena cap was
    set; False off Linux, on another libc (musl has no `mallopt` parameter for it), when
    `MALLOC_ARENA_MAX` is set in the environment (the user's choice wins; likewise
    `MALLOC_MMAP_THRESHOLD_` for the threshold), or if glibc refuses. Never raises: a start does
    not fail over it."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 - glibc only: musl lacks it
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        mallopt(M_MMAP_THRESHOLD, mmap_threshold)
    return bool(mallopt(M_ARENA_MAX, arenas))
