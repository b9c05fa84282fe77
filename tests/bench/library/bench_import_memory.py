"""Benchmark (issue 28, item 3: "memory given back"): a real `python -m server` process's RSS
around a synthetic vault import, and a 100k-proposition graph served.

Run: `.venv/bin/python -m tests.bench.library.bench_import_memory [--notes 1200] [--settle 60]
[--graph 100000]`. Figures go to docs/benchmarks.md.

Part 1, the import: `bench_vault`'s synthetic vault (`write_vault`: 1,180 small maths notes, 6
lectures, 12 templates, 2 drawings) imported in one `POST /api/graph/import` into a server whose
model is the scripted, instant OpenAI-compatible stub (`tests/scripts/library.graph_reply`).
Printed, from `/proc/<pid>/status` (MB): RSS cold (ready, the routes warmed), after a 1-note
import at once and `--rest` seconds later (idle: the server has worked once; the auditor's
embedder, loaded by the first audit, is let go after `IDLE_RELEASE_S` unused), the peak during
the import (sampled every 100 ms, and the kernel's `VmHWM`), and RSS at once when the last feed
row ended, then every 10 s until `--settle` seconds after it (the issue's want: within idle +
50 MB a minute after the last job). `--notes 0` skips it.

Part 2, the 100k graph served: `bench_graph_memory.run` (RSS when ready, after the full and the
compact read, after a drag and both reads again; `VmHWM`; with `--page` the page's reads: the
compact form, a drag, the compact form again, then one full read). `--graph 0` skips it.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import httpx

from tests.bench.library.bench_graph_memory import run as graph_memory
from tests.bench.library.bench_vault import Meter, _Discard, rss_mb, write_vault
from tests.livehttp import serve
from tests.procs import scripted_slot, start_server, write_settings
from tests.stub_openai import create_stub

SAMPLE_S = 0.1
"""How often RSS is sampled during the import (s)."""
STEP_S = 10
"""After the last row ended, RSS is printed every this many seconds (s) until the settle time."""


def _rows_ended(client: httpx.Client) -> tuple[bool, list[dict[str, object]]]:
    rows = client.get("/api/activity").json()["rows"]
    return bool(rows) and all(r["phase"] in ("done", "error", "aborted") for r in rows), rows


def import_memory(notes: int, settle: float, rest: float = 55) -> dict[str, float]:
    """Import the synthetic vault of `notes` files; returns the figures (MB, s) it printed."""
    meter = Meter()
    stub = create_stub(meter.reply, delay_s=0.0)
    stub.state.requests = _Discard()  # the stub's own log of bodies is not kept (memory)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="lh-import-mem-") as tmp, serve(stub) as stub_url:
        home = Path(tmp) / "home"
        files, source_tokens = write_vault(home / "Vault", notes)
        data = Path(tmp) / "data"
        write_settings(data, scripted_slot(stub_url))
        server = start_server(data, env={"LH_IMPORT_ROOTS": str(home)})
        pid = server.process.pid
        try:
            with httpx.Client(base_url=server.url, timeout=120) as client:
                for _ in range(5):  # warm the routes
                    client.get("/api/health")
                    client.get("/api/activity")
                    client.get("/api/graph", params={"format": "compact"})
                time.sleep(1)
                out["cold"] = rss_mb(pid)[0]
                warm = home / "Warm-up"
                warm.mkdir()
                (warm / "First.md").write_text("# First\n\nA group has an identity.\n")
                client.post("/api/graph/import", json={"path": str(warm)}).raise_for_status()
                while not _rows_ended(client)[0]:
                    time.sleep(0.2)
                time.sleep(2)
                out["worked"] = rss_mb(pid)[0]
                time.sleep(max(0.0, rest - 2))
                out["idle"] = rss_mb(pid)[0]
                samples: list[float] = []
                stop = threading.Event()

                def sample() -> None:
                    while not stop.is_set():
                        samples.append(rss_mb(pid)[0])
                        time.sleep(SAMPLE_S)

                sampler = threading.Thread(target=sample)
                sampler.start()
                start = time.perf_counter()
                client.post("/api/graph/import", json={"path": str(home / "Vault")}).raise_for_status()
                while not _rows_ended(client)[0]:
                    time.sleep(0.5)
                out["wall"] = time.perf_counter() - start
                ended = time.monotonic()
                stop.set()
                sampler.join()
                rss, hwm = rss_mb(pid)
                out["peak_sampled"], out["hwm"], out["after_0"] = max(samples), hwm, rss
                body = client.get("/api/graph", params={"format": "compact"}).json()
                out["propositions"] = float(len(body["props"]))
                print(
                    f"vault: {files:,} files, {source_tokens:,} source tokens; {meter.requests:,} model "
                    f"requests; {out['propositions']:,.0f} propositions; wall time to the last row ended "
                    f"{out['wall']:.0f} s"
                )
                print(
                    f"RSS cold {out['cold']:.0f} MB; after a 1-note import {out['worked']:.0f} MB at once, "
                    f"{out['idle']:.0f} MB {rest:.0f} s later (idle); "
                    f"peak {out['peak_sampled']:.0f} MB sampled, {hwm:.0f} MB VmHWM"
                )
                print(
                    f"RSS after the last job: {rss:.0f} MB at once (idle + {rss - out['idle']:.0f} MB, "
                    f"cold + {rss - out['cold']:.0f} MB)"
                )
                step = STEP_S
                while step <= settle:
                    time.sleep(max(0.0, ended + step - time.monotonic()))
                    later = rss_mb(pid)[0]
                    out[f"after_{step}"] = later
                    print(
                        f"  {step:4d} s after: {later:.0f} MB (idle + {later - out['idle']:.0f} MB, "
                        f"cold + {later - out['cold']:.0f} MB)"
                    )
                    step += STEP_S
        finally:
            server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1_200, help="vault files (0: skip the import)")
    parser.add_argument("--settle", type=float, default=60, help="seconds to follow RSS after the last job")
    parser.add_argument("--graph", type=int, default=100_000, help="propositions served (0: skip)")
    parser.add_argument("--page", action="store_true", help="serve the graph as the page reads it")
    parser.add_argument(
        "--rest", type=float, default=55, help="seconds after the 1-note warm-up import before idle is read"
    )
    args = parser.parse_args()
    if args.notes:
        import_memory(args.notes, args.settle, args.rest)
    if args.graph:
        graph_memory(args.graph, page=args.page)


if __name__ == "__main__":
    main()
