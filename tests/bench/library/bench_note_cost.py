"""Benchmark (issue 28, item 2): the server's CPU per source token as the graph grows, and a
1,200-note vault of ~12 propositions per note merged whole.

Run: `.venv/bin/python -m tests.bench.library.bench_note_cost [--scale] [--vault] [notes]`
(not part of the test suite; figures go to docs/benchmarks.md).

`--scale`: the same 40 notes (12 prose lines each, every line a proposition: an instant
scripted model) imported into a graph already holding 1,000 and then 50,000 nodes, in-process
through the real notes door, extraction pipeline, auditor candidates and merge (the flows'
`Pipeline`: the server's services on a real ledger directory, no HTTP), with the packaged
all-MiniLM-L6-v2 embedder. Prints the process's CPU seconds (all threads: `time.process_time`)
per 1,000 source tokens and the ratio 50k / 1k. The seeded nodes' vectors are put in the
candidate vector index before the import (random unit rows: what a running server holds after
it embedded them once; embedding 50,000 texts is a one-time cost, not a note's).

`--vault`: `notes` (default 1,200) such notes imported in one call into a fresh graph, the same
way; prints the wall time until every job merged, the CPU seconds, and nodes merged.

Both are measured on whatever the machine is doing: on a shared 2-core box the wall times
include waiting for a core (the CPU seconds do not).
"""

from __future__ import annotations

import asyncio
import random
import re
import sys
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo

from server.agent.library.embedder import OnnxEmbedder
from server.core.contracts.graph import NodeLine, Provenance
from server.core.library.candidates import text_of
from server.core.tokens import estimate_tokens
from server.services.library import merge
from server.services.library.embeddings import CandidateVectors, _digest
from server.store.ledger import append_ledger
from tests.bench.common import run_line
from tests.flows.graph_pipeline import Pipeline, Script
from tests.scripts.serving import Ask, Reply, whole

T = TypeVar("T")
LINES_PER_NOTE = 12
SCALE_NOTES = 40


def vocabulary(rng: random.Random, size: int = 3_000) -> list[str]:
    """Pseudo-words (a maths vault's vocabulary is large; its use is Zipfian, see `sentence`)."""
    syllables = [
        "al",
        "ge",
        "bra",
        "to",
        "po",
        "lo",
        "gy",
        "ma",
        "tri",
        "x",
        "ker",
        "nel",
        "in",
        "var",
        "ant",
    ]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size * 2)}
    return sorted(words)[:size]


def sentence(rng: random.Random, words: list[str]) -> str:
    n = len(words)
    picked = [words[min(n - 1, int(rng.paretovariate(1.1)) - 1)] for _ in range(rng.randint(8, 16))]
    return " ".join(picked).capitalize() + "."


def note(rng: random.Random, words: list[str], i: int) -> str:
    lines = [sentence(rng, words) for _ in range(LINES_PER_NOTE)]
    return f"# Lemma {i}\n\n" + "\n".join(lines) + "\n"


def every_line(ask: Ask) -> Reply:
    """The instant scripted model: the extractor makes every prose line of its source a
    proposition (a pack, decision 0023: per `<note id>` section, each naming its note); the
    auditor links nothing."""
    if "find" in ask.tools:
        return Reply("", ("submit", {"links": []}, "call_audit"))
    source = ask.prompt.split("THE SOURCE:\n", 1)[-1]
    sections = re.findall(r'<note id="([^"]+)"[^>]*>\n(.*?)\n</note>', source, re.S)
    props: list[dict[str, str]] = []
    for k, (note_id, text) in enumerate(sections or [("", source)]):
        for line in text.splitlines():
            line = line.strip()
            if len(line) > 20 and not line.startswith(("#", "<")):
                prop = {"id": f"n{k}p{len(props) + 1}", "name": " ".join(line.split()[:4]), "statement": line}
                if note_id:
                    prop["note"] = note_id
                props.append(prop)
    return Reply("", ("submit", {"propositions": props, "chains": []}, "call_extract"))


class EveryLine(Script):
    """`every_line` as the flows' `Pipeline` script."""

    async def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return whole(every_line)(messages, info)


def seed(root: Path, n: int, words: list[str], rng: random.Random) -> None:
    prov = Provenance(source="src_seed", job="job_seed")
    lines = []
    for i in range(n):
        text = sentence(rng, words)
        lines.append(
            NodeLine(
                id=f"n_{i:016x}", name=" ".join(text.split()[:4]), statement=text, provenance=prov, at="t0"
            )
        )
    root.mkdir(parents=True, exist_ok=True)
    append_ledger(root / "nodes.jsonl", lines)
    append_ledger(root / "sessions.jsonl", [run_line("src_seed", "job_seed", n, 0, at="t0")])


def pipeline(root: Path, embedder: OnnxEmbedder) -> Pipeline:
    pipe = Pipeline(root, script=EveryLine(), chunk_tokens=2_000)
    vectors = CandidateVectors(embedder)
    pipe.extraction.merge.vectors = vectors
    return pipe


def prefill(pipe: Pipeline, rng: random.Random) -> None:
    """The seeded nodes' vectors, as a server that embedded them once holds them (random rows)."""
    vectors = pipe.extraction.merge.vectors
    assert vectors is not None
    nodes = pipe.graph.nodes()
    gen = np.random.default_rng(rng.randint(0, 2**31))
    rows = gen.standard_normal((len(nodes), 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    for row, (node_id, node) in enumerate(nodes.items()):
        vectors.index.add(node_id, rows[row])
        vectors._held[node_id] = (weakref.ref(node), _digest(text_of(node)))
    pipe.extraction.merge.index.sync(nodes)  # what a running server has indexed already


async def import_all(pipe: Pipeline, notes: list[tuple[str, str]]) -> None:
    results = pipe.library.import_files([(name, text.encode()) for name, text in notes])
    for result in results:
        assert result.source is not None, result
    for result in results:
        assert result.source is not None
        await pipe.extraction.wait(result.source)


SPENT: dict[str, float] = {"rank": 0.0, "vectors": 0.0}
"""CPU seconds (of the worker thread running them) in the candidates' ranking (index sync and
ranking, `audit_candidates`) and in `CandidateVectors.vectors` (embedding and vector index sync)."""


def _timed(key: str, fn: Callable[..., T]) -> Callable[..., T]:
    def run(*args: Any, **kwargs: Any) -> T:
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[key] += time.thread_time() - start

    return run


def instrument() -> None:
    """Count `SPENT` in this process (the in-process benches only)."""
    merge.audit_candidates = _timed("rank", merge.audit_candidates)  # type: ignore[attr-defined]
    CandidateVectors.vectors = _timed("vectors", CandidateVectors.vectors)  # type: ignore[method-assign]


def measure(
    seeded: int, notes: list[tuple[str, str]], embedder: OnnxEmbedder, words: list[str]
) -> dict[str, float]:
    rng = random.Random(seeded)
    SPENT.update(rank=0.0, vectors=0.0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "graph"
        if seeded:
            seed(root, seeded, words, rng)
        pipe = pipeline(root, embedder)
        if seeded:
            prefill(pipe, rng)
        before_nodes = len(pipe.graph.nodes())
        cpu, wall = time.process_time(), time.perf_counter()
        asyncio.run(import_all(pipe, notes))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        merged = len(pipe.graph.nodes()) - before_nodes
        pipe.graph.flush(30)  # the usage ledger's fsync, before the directory goes
    return {"cpu": cpu, "wall": wall, "merged": merged, **SPENT}


def main_scale() -> None:
    rng = random.Random(28)
    words = vocabulary(rng)
    notes = [(f"vault/Lemma {i}.md", note(rng, words, i)) for i in range(SCALE_NOTES)]
    tokens = sum(estimate_tokens(text) for _, text in notes)
    embedder = OnnxEmbedder()
    embedder.embed(["warm the model up"])
    print(f"{SCALE_NOTES} notes x {LINES_PER_NOTE} lines, {tokens:,} source tokens")
    measure(0, notes[:5], embedder, words)  # warm-up: first calls of the model client, the agent
    print(
        "| graph before | CPU s | CPU ms per 1k source tokens | of which ranking s | of which "
        "embedding + vector sync s | wall s | nodes merged |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    per: dict[int, list[float]] = {}
    for seeded in (1_000, 50_000, 1_000, 50_000):
        m = measure(seeded, notes, embedder, words)
        per.setdefault(seeded, []).append(m["cpu"] * 1e6 / tokens)
        print(
            f"| {seeded:,} | {m['cpu']:.1f} | {per[seeded][-1]:,.0f} | {m['rank']:.2f} | "
            f"{m['vectors']:.2f} | {m['wall']:.1f} | {m['merged']:,.0f} |"
        )
    ratio = min(per[50_000]) / min(per[1_000])
    print(f"ratio 50k / 1k (best of 2 each): {ratio:.2f}x (target <= 1.5x)")


def main_vault(count: int) -> None:
    rng = random.Random(1200)
    words = vocabulary(rng)
    notes = [(f"Vault/Semester {i % 4}/Lemma {i}.md", note(rng, words, i)) for i in range(count)]
    tokens = sum(estimate_tokens(text) for _, text in notes)
    embedder = OnnxEmbedder()
    m = measure(0, notes, embedder, words)
    print(
        f"vault: {count:,} notes x {LINES_PER_NOTE} lines, {tokens:,} source tokens: fully merged in "
        f"{m['wall']:.0f} s wall ({m['cpu']:.0f} CPU s, {m['cpu'] * 1e6 / tokens:,.0f} CPU ms per 1k "
        f"source tokens), {m['merged']:,} nodes"
    )


if __name__ == "__main__":
    instrument()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--vault" in sys.argv:
        main_vault(int(args[0]) if args else 1_200)
    if "--scale" in sys.argv or "--vault" not in sys.argv:
        main_scale()
