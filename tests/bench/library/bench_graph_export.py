"""Benchmark (issue 31 item 2): the graph's exports at 100k propositions, time and memory, from a
real `python -m server` process: `GET /api/graph/export/vault.zip` (the Obsidian vault, streamed)
and `GET /api/graph/export/deck.apkg` (the Anki deck, written to a temporary file, then sent).

Run: `.venv/bin/python -m tests.bench.library.bench_graph_export [sizes]` (default 100000). Figures
go to docs/benchmarks.md.

The graph is the read benchmark's (`bench_graph_read.write_graph`: N propositions in sources of
100, N chains of 1-3 premises) with a sources ledger naming each source a notes file in one of ten
folders (`vault/topic-k/file-i.md`), so the vault has 11 folders and 1,000 notes files' worth of
propositions. The server first serves the page's read (`GET /api/graph?format=compact`: the
ledgers folded, as when a learner opens home and exports); then each export is downloaded and
dropped block by block. Printed, from `/proc/<pid>/status`: RSS before each export, and the peak
RSS during it (`VmHWM`, reset before each export through `/proc/<pid>/clear_refs`), the export's
wall time, and its size. "Not loaded twice": an export's peak above the RSS before it is a
fraction of the graph's own memory (the fold is read where it lies).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import httpx

from server.core.contracts.graph import SourceLine
from server.store.ledger import append_ledger
from tests.bench.library.bench_graph_read import write_graph
from tests.procs import start_server, write_settings


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) // 1024
    return out


def _reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM to the current RSS


def write_sources(root: Path, size: int) -> None:
    """A notes source line for each of `write_graph`'s sources, in ten folders."""
    append_ledger(
        root / "sources.jsonl",
        [
            SourceLine(
                id=f"src_{i:016x}",
                kind="notes",
                title=f"file-{i}.md",
                path=f"vault/topic-{i % 10}/file-{i}.md",
                at="2026-11-30T00:00:00Z",
            )
            for i in range((size + 99) // 100)
        ],
    )


def _export(pid: int, client: httpx.Client, url: str, label: str) -> None:
    before = _status(pid)["VmRSS"]
    _reset_peak(pid)
    t0 = time.perf_counter()
    size = 0
    with client.stream("GET", url, timeout=1800) as response:
        response.raise_for_status()
        for block in response.iter_raw():
            size += len(block)
    took = time.perf_counter() - t0
    after = _status(pid)
    print(
        f"  {label:<12} {took:6.1f} s  {size / 1e6:6.1f} MB  RSS before {before} MB, "
        f"peak {after['VmHWM']} MB (+{after['VmHWM'] - before}), after {after['VmRSS']} MB"
    )


def run(size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="lh-graph-export-") as tmp:
        data = Path(tmp) / "data"
        write_settings(
            data, {"provider": "openai-compatible", "model": "x", "baseUrl": "http://127.0.0.1:9/v1"}
        )
        write_graph(data / "graph", size)
        write_sources(data / "graph", size)
        print(f"{size:,} propositions, {size:,} chains")
        server = start_server(data, timeout=120)
        pid = server.process.pid
        try:
            with httpx.Client(base_url=server.url) as client:
                t0 = time.perf_counter()
                client.get("/api/graph", params={"format": "compact"}, timeout=600).raise_for_status()
                print(f"  page's read {time.perf_counter() - t0:.1f} s, RSS {_status(pid)['VmRSS']} MB")
                for _ in range(2):
                    _export(pid, client, "/api/graph/export/vault.zip", "vault.zip")
                    _export(pid, client, "/api/graph/export/deck.apkg", "deck.apkg")
        finally:
            server.stop()


def main() -> None:
    for size in [int(a) for a in sys.argv[1:] if a.isdigit()] or [100_000]:
        run(size)


if __name__ == "__main__":
    main()
