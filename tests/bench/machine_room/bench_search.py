"""Benchmark (issue 31 item 5; decision 0044): search at 1,000 lessons and 100k propositions.

Run: `.venv/bin/python -m tests.bench.machine_room.bench_search [lessons] [propositions] [repeat]`
(defaults 1000, 100000, 30). Figures go to docs/benchmarks.md.

The data dir, written through the real stores: `lessons` lessons of 24 messages (learner
questions of ~12 words, teacher replies of ~120 words) and 100 practice sets of 5 problems, all
drawn from a 6,000-word vocabulary with a Zipf-like skew (a few words everywhere, most rare); a
graph of `propositions` propositions in committed ledgers (a name of 2-4 words, a statement of
~25 words, every tenth with an alias). Timed through `SearchService.search` (what
`GET /api/search` runs: the catch-up look at what changed, then the FTS5 query, snippets and
rows) on the real files: the first query (the index built from the records), then `repeat` runs
each of a rare word, a common word, two words, a 2-letter prefix, a word in no record, and the
query after one new message (that lesson's rows written again). Printed: build time, the index's
size on disk and its rows, and per query the median and the max in ms.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from server.config import DataPaths
from server.core.contracts.chat import ChatRecord
from server.core.contracts.graph import NodeLine, Provenance
from server.core.contracts.models import ModelRef
from server.core.contracts.practice import PracticeParams, Problem, ProblemSet
from server.services.machine_room.search import SearchService
from server.services.stores import build_stores
from server.store.ledger import append_ledger
from tests.bench.common import run_line
from tests.fakes import FakeSecrets

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "da", "gu", "ri", "ma", "te", "no", "sa"]


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def prose(rng: random.Random, vocab: list[str], weights: list[float], n: int) -> str:
    return " ".join(rng.choices(vocab, weights, k=n)) + "."


def seed(root: Path, lessons: int, propositions: int) -> list[str]:
    rng = random.Random(7)
    vocab = vocabulary(rng)
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    stores = build_stores(DataPaths(root), secrets=FakeSecrets())  # type: ignore[arg-type]
    model = ModelRef(provider="openai-compatible", model="bench")
    for n in range(lessons):
        messages = []
        for m in range(12):
            q = prose(rng, vocab, weights, 12)
            a = prose(rng, vocab, weights, 120)
            messages.append({"id": f"u{m}", "role": "user", "parts": [{"type": "text", "text": q}]})
            messages.append({"id": f"a{m}", "role": "assistant", "parts": [{"type": "text", "text": a}]})
        title = " ".join(rng.choices(vocab, weights, k=3))
        at = f"2026-11-{1 + n % 28:02d}T00:00:00Z"
        stores.chats.save(
            ChatRecord(
                id=f"c_{n:016x}", title=title, created_at=at, updated_at=at, model=model, messages=messages
            )
        )
    for n in range(100):
        problems = [
            Problem(
                id=f"pb_{k}",
                index=k,
                chain_ids=[],
                title=prose(rng, vocab, weights, 4),
                statement=prose(rng, vocab, weights, 40),
                solution=prose(rng, vocab, weights, 60),
            )
            for k in range(5)
        ]
        stores.practice.save(
            ProblemSet(
                id=f"ps_{n:08x}",
                title=prose(rng, vocab, weights, 3),
                created_at="t",
                updated_at="t",
                params=PracticeParams(),
                node_ids=[],
                propositions=[],
                chains=[],
                problems=problems,
            )
        )
    graph = root / "graph"
    graph.mkdir(parents=True, exist_ok=True)
    nodes = [
        NodeLine(
            id=f"n_{i:016x}",
            name=" ".join(rng.choices(vocab, weights, k=rng.randint(2, 4))),
            statement=prose(rng, vocab, weights, 25),
            aliases=[" ".join(rng.choices(vocab, k=2))] if i % 10 == 0 else [],
            provenance=Provenance(source=f"src_{i // 100:016x}", job="job_0"),
            at="2026-11-30T00:00:00Z",
        )
        for i in range(propositions)
    ]
    append_ledger(graph / "nodes.jsonl", nodes)
    append_ledger(graph / "chains.jsonl", [])
    append_ledger(graph / "sessions.jsonl", [run_line("src_bench", "job_0", propositions, 0)])
    return vocab


def main(lessons: int, propositions: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        t0 = time.perf_counter()
        vocab = seed(root, lessons, propositions)
        print(f"seeded {lessons} lessons, {propositions} propositions in {time.perf_counter() - t0:.1f} s")
        stores = build_stores(DataPaths(root), secrets=FakeSecrets())  # type: ignore[arg-type]  # a fresh start: nothing cached
        service = SearchService(stores.search, stores.chats, stores.graph, stores.practice)
        t0 = time.perf_counter()
        service.search(vocab[3000])
        build = time.perf_counter() - t0
        counts = stores.search.counts()  # type: ignore[attr-defined]
        size = stores.search.size_bytes()  # type: ignore[attr-defined]
        print(f"index built in {build:.1f} s (the first query); {sum(counts.values()):,} rows {counts}")
        print(f"index size {size / 1e6:.1f} MB")
        queries = {
            "rare word": vocab[5000],
            "common word": vocab[0],
            "two words": f"{vocab[10]} {vocab[200]}",
            "2-letter prefix": "ka",
            "no match": "zzzqqq",
        }
        for name, q in queries.items():
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                found = service.search(q)
                times.append((time.perf_counter() - t) * 1000)
            print(
                f"{name:16} median {statistics.median(times):6.1f} ms  max {max(times):6.1f} ms  "
                f"({len(found['results'])} results)"
            )
        times = []

        def add(record: ChatRecord, n: int) -> ChatRecord:
            extra = {"id": f"x{n}", "role": "user", "parts": [{"type": "text", "text": f"fresh words {n}"}]}
            stamp = f"2026-12-01T00:00:{n:02d}Z"
            return record.model_copy(update={"messages": [*record.messages, extra], "updated_at": stamp})

        for n in range(repeat):
            stores.chats.update("c_0000000000000000", lambda r, n=n: add(r, n))  # type: ignore[misc]
            t = time.perf_counter()
            found = service.search(vocab[5000])
            times.append((time.perf_counter() - t) * 1000)
        print(f"{'after a message':16} median {statistics.median(times):6.1f} ms  max {max(times):6.1f} ms")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*(args + [1000, 100_000, 30][len(args) :]))
