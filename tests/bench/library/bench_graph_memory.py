"""Benchmark (issue 16 item 2: "a 100k-proposition graph served in under 400 MB"): the memory of a
real `python -m server` process serving a graph of N propositions and N chains.

Run: `.venv/bin/python -m tests.bench.library.bench_graph_memory [sizes]` (default 100000). Figures go to
docs/benchmarks.md. The graph is the read benchmark's (`bench_graph_read.write_graph`: sources of
100, chains of 1-3 premises), with no view snapshot (a read never writes one): the cold path.
Printed, from `/proc/<pid>/status`: the server's RSS when ready (nothing folded yet), after the
first `GET /api/graph` (fold the ledgers, derive the full view), after
`GET /api/graph?format=compact`, and after a drag and both reads again (patched derivations);
`VmHWM` is the peak. Each read's wall time and body size. `--page`: the page's reads instead (the
compact form, a drag, the compact form again), then one full read.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.bench.library.bench_graph_read import write_graph
from tests.procs import ServerProcess, scripted_slot, start_server, write_settings


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) // 1024
    return out


def _read(server: ServerProcess, client: httpx.Client, label: str, **params: str) -> None:
    t0 = time.perf_counter()
    response = client.get(f"{server.url}/api/graph", params=params, timeout=600)
    took = time.perf_counter() - t0
    response.raise_for_status()
    mem = _status(server.process.pid)
    print(
        f"  {label:<44} {took:6.2f} s  body {len(response.content) / 1e6:6.1f} MB  "
        f"RSS {mem['VmRSS']:4d} MB  (peak {mem['VmHWM']} MB)"
    )


def run(size: int, page: bool = False) -> None:
    """Serve a graph of `size` propositions and print RSS after each read. `page`: read as the page
    does (the compact form, a drag, the compact form again; then one full read, as a script would)
    instead of the full form first."""
    with tempfile.TemporaryDirectory(prefix="lh-graph-mem-") as tmp:
        data = Path(tmp) / "data"
        write_settings(data, scripted_slot("http://127.0.0.1:9"))  # never called: no offline model child
        write_graph(data / "graph", size)
        print(f"{size:,} propositions, {size:,} chains")
        server = start_server(data, timeout=120)
        try:
            print(f"  RSS when ready {_status(server.process.pid)['VmRSS']} MB")
            with httpx.Client() as client:
                if page:
                    _as_the_page(server, client)
                    return
                _read(server, client, "GET /api/graph")
                _read(server, client, "GET /api/graph?format=compact", format="compact")
                first = client.get(f"{server.url}/api/graph", timeout=600).json()["nodes"][0]["id"]
                moved = client.put(f"{server.url}/api/graph/positions", json={first: {"x": 1.0, "y": 2.0}})
                assert moved.json() == {"saved": 1}, moved.text
                _read(server, client, "after a drag: GET /api/graph")
                _read(server, client, "after a drag: GET /api/graph?format=compact", format="compact")
        finally:
            server.stop()


def _as_the_page(server: ServerProcess, client: httpx.Client) -> None:
    _read(server, client, "GET /api/graph?format=compact", format="compact")
    first = client.get(f"{server.url}/api/graph", params={"format": "compact"}, timeout=600).json()
    moved = client.put(f"{server.url}/api/graph/positions", json={first["props"][0][0]: {"x": 1.0, "y": 2.0}})
    assert moved.json() == {"saved": 1}, moved.text
    _read(server, client, "after a drag: ?format=compact", format="compact")
    _read(server, client, "then GET /api/graph (a script's full read)")


def main() -> None:
    """`[sizes] [--page]`."""
    for size in [int(a) for a in sys.argv[1:] if a.isdigit()] or [100_000]:
        run(size, page="--page" in sys.argv)


if __name__ == "__main__":
    main()
