"""Benchmark (issue 31 item 4): back up and restore a data dir with a 10,000-proposition graph.

Run: `.venv/bin/python -m tests.bench.machine_room.bench_backup [propositions] [lessons] [repeat]`
(defaults 10000, 100, 3). Figures go to docs/benchmarks.md.

The data dir: the graph of `bench_graph_read.write_graph` (N propositions in sources of 100 and N
chains), with 1,000 node positions; `lessons` lessons of 40 messages (~1.5 KB of teacher prose
each) with a change log; 20 practice sets; settings. Timed on the real files
(`server.store.machine_room.backup.BackupFiles`): the backup (open the graph's files, write the
zip), the check of the archive (every entry read, sized, hashed, every ledger line and record
parsed), the staging (checked again, unpacked into `restore/pending/`), and the apply at start
(renames). Printed: the data dir's size on disk, the archive's size, and per step the median and
the max of `repeat` runs, in ms.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

from server.core.contracts.practice import PracticeChain, PracticeParams, PracticeProposition, ProblemSet
from server.store.machine_room.backup import BackupFiles, apply_pending_restore
from tests.bench.library.bench_graph_read import write_graph

PROSE = ("A derivative measures how a function's output changes as its input changes. " * 20)[:1500]


def seed(root: Path, propositions: int, lessons: int) -> None:
    write_graph(root / "graph", propositions)
    positions = {f"n_{i:016x}": [float(i), float(i % 97)] for i in range(min(propositions, 1000))}
    (root / "graph" / "positions.json").write_bytes(orjson.dumps(positions))
    (root / "chats").mkdir(parents=True)
    for n in range(lessons):
        chat_id = f"c_{n:016x}"
        messages = [
            {
                "id": f"m{i}",
                "role": "user" if i % 2 == 0 else "assistant",
                "parts": [{"type": "text", "text": "Why?" if i % 2 == 0 else PROSE}],
            }
            for i in range(40)
        ]
        record = {
            "id": chat_id,
            "title": f"Lesson {n}",
            "titleBy": "auto",
            "createdAt": "2026-12-01T00:00:00.000Z",
            "updatedAt": "2026-12-01T00:00:00.000Z",
            "model": {"provider": "openai", "model": "gpt"},
            "messages": messages,
            "usage": [],
            "logGeneration": 1,
        }
        (root / "chats" / f"{chat_id}.json").write_bytes(orjson.dumps(record))
        (root / "chats" / f"{chat_id}.log").write_bytes(b'{"gen": 1, "snap": 1}\n')
    (root / "practice").mkdir()
    for n in range(20):
        problem_set = ProblemSet(
            id=f"ps_{n:08x}",
            title=f"Set {n}",
            created_at="2026-01-01T00:00:00Z",
            updated_at="2026-01-01T00:00:00Z",
            params=PracticeParams(),
            node_ids=["n_0000000000000001"],
            propositions=[PracticeProposition(id="n_0000000000000001", name="Heap", statement="A heap.")],
            chains=[PracticeChain(id="single_n_0000000000000001", conclusion="n_0000000000000001")],
        )
        (root / "practice" / f"ps_{n:08x}.json").write_text(problem_set.model_dump_json(by_alias=True))
    (root / "settings.json").write_text('{"models": {}}')


def size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def main() -> None:
    args = [int(a) for a in sys.argv[1:]]
    propositions, lessons, repeat = (args + [10000, 100, 3][len(args) :])[:3]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        data = base / "data"
        seed(data, propositions, lessons)
        lock = threading.RLock()
        files = BackupFiles(data, lambda: lock, "bench")
        times: dict[str, list[float]] = {"backup": [], "check": [], "stage": [], "apply": []}
        archive = base / "b.zip"
        for run in range(repeat):
            start = time.perf_counter()
            files.write(archive, files.open_graph(), "2026-12-06T00:00:00.000Z")
            times["backup"].append(time.perf_counter() - start)
            fresh = base / f"fresh{run}"
            fresh.mkdir()
            target = BackupFiles(fresh, lambda: lock, "bench")
            start = time.perf_counter()
            target.check(archive)
            times["check"].append(time.perf_counter() - start)
            start = time.perf_counter()
            target.stage(archive)
            times["stage"].append(time.perf_counter() - start)
            start = time.perf_counter()
            apply_pending_restore(fresh, "bench")
            times["apply"].append(time.perf_counter() - start)
            nodes = "graph/nodes.jsonl"
            assert (fresh / nodes).read_bytes() == (data / nodes).read_bytes()
            shutil.rmtree(fresh)
        print(
            f"{propositions} propositions, {lessons} lessons of 40 messages, 20 sets: data dir "
            f"{size(data) / 2**20:.1f} MB (graph {size(data / 'graph') / 2**20:.1f} MB), archive "
            f"{archive.stat().st_size / 2**20:.1f} MB"
        )
        for step, values in times.items():
            ms = [v * 1000 for v in values]
            median = statistics.median(ms)
            print(f"  {step:7s} median {median:8.0f} ms  max {max(ms):8.0f} ms  ({repeat} runs)")


if __name__ == "__main__":
    main()
