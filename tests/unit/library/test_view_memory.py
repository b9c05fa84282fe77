"""The view's rows take the heap their bytes need (issue 28, item 3): orjson serialises into a
buffer of a few KB and shrinks it in place, so rows held until they are joined pinned ~4 KB each
(200,000 rows: 817 MB of RSS for 25 MB of JSON; the 100k graph's derivations peaked at 1.2-1.6 GB).
`row_bytes` copies each row out, byte-equal."""

from __future__ import annotations

from pathlib import Path

import orjson

from server.core.library.view_rows import row_bytes
from server.services.library.memory import release_memory


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _row(i: int) -> list[object]:
    return [f"n_{i:016x}", f"Proposition {i}", f"Statement number {i} holds.", [], "src_1", 0, "2026-12-06"]


def test_a_row_is_orjsons_bytes() -> None:
    for value in (_row(7), {"a": [1, 2.5, None]}, "x", []):
        assert row_bytes(value) == orjson.dumps(value)


def test_rows_held_take_about_their_size() -> None:
    release_memory()
    before = _rss_mb()
    rows = [row_bytes(_row(i)) for i in range(100_000)]  # ~12 MB of JSON
    grew = _rss_mb() - before
    assert sum(map(len, rows)) < 15_000_000
    assert grew < 100, f"{grew:.0f} MB for 100,000 rows (orjson's own bytes held: ~400 MB)"
