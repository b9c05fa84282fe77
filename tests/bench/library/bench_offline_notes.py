"""Benchmark: a fixture note imported with no key, on the real offline model (SmolLM2-135M).

Run: `.venv/bin/python -m tests.bench.library.bench_offline_notes [note.md ...]` (default: the heap note).
Not part of the test suite (it takes 3-6 minutes of CPU per note, and what the 135M model finds is
sampling luck): it prints, per note, the chunks, how many were done or failed, whether any chunk's
request outgrew the model's window (`context_exceeded`: on a first request, or on a retry), the
model requests and tokens per chunk, and the propositions found. The sizes it depends on are tested
with scripted models (tests/unit/library/test_chunk_budget.py,
tests/unit/library/test_extractor_window.py); the
real model's plain overflow message is tested in tests/flows/machine_room/test_offline_smoke.py.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.procs import start_server
from tests.shared import NOTES

TOO_LONG = "longer than the offline model"


def run(note: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp) / "data", timeout=120)
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                start = time.perf_counter()
                files = [("files", (note.name, note.read_bytes(), "text/markdown"))]
                client.post("/api/graph/import", files=files).raise_for_status()
                rows: list = []
                while time.perf_counter() - start < 1800:
                    rows = client.get("/api/activity").json()["rows"]
                    if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
                        break
                    time.sleep(1)
                chunks = [r for r in rows if r["usage"]["requests"]]
                too_long = [r for r in chunks if r["error"] and TOO_LONG in r["error"]]
                first = [r for r in too_long if r["usage"]["requests"] == 1]
                nodes = client.get("/api/graph").json()["nodes"]
                props = [n["name"] for n in nodes if n["kind"] == "proposition"]
                print(f"{note.name}: {len(chunks)} chunks in {time.perf_counter() - start:.0f} s")
                print(
                    f"  done {sum(r['phase'] == 'done' for r in chunks)}, failed "
                    f"{sum(r['phase'] == 'error' for r in chunks)}; outgrew the window: "
                    f"{len(first)} on a first request, {len(too_long) - len(first)} on a retry"
                )
                for r in chunks:
                    print(f"  {r['phase']:6} {r['usage']}  {(r['error'] or '')[:100]}")
                print(f"  propositions ({len(props)}): {props[:10]}")
        finally:
            server.stop()


def main(argv: list[str]) -> None:
    for name in argv or ["data-structures-heap.en.md"]:
        path = Path(name)
        run(path if path.is_file() else NOTES / name)


if __name__ == "__main__":
    main(sys.argv[1:])
