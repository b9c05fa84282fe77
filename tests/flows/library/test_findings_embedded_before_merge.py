"""A job's findings are embedded before it takes the merge section (issue 28, item 2: the
embedding was ~40 % of a vault import's CPU and ran inside the section, so jobs waited on each
other's); the section only syncs the node index. The vectors the ranking uses, and so the links
and the graph, are the same as when the findings were embedded inside it.

The notes door, the pipeline and the ledgers are real (in-process, a tmp data dir); the models are
the scripted FunctionModels of `graph_pipeline` (lone jobs) and `test_packed_extraction` (a pack);
the embedder is the deterministic fake, recording whether the section was held at each call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from server.core.contracts.graph import FindingProposition, Proposition
from server.core.library.candidate_index import VectorIndex
from server.core.library.candidates import text_of
from server.services.library.embeddings import CandidateVectors, FindingVectors
from tests.fakes.embedder import FakeEmbedder
from tests.flows.graph_pipeline import Pipeline
from tests.flows.library.test_packed_extraction import PackScript

NOTES = [
    ("vault/heaps.md", "# Binary heap\n\n# Heap order\n\n# Sift down\n"),
    ("vault/queues.md", "# Priority queue\n\n# Binary heap\n\n# Decrease key\n"),
    ("vault/sorts.md", "# Heapsort\n\n# Sift down\n\n# Heap order\n"),
]


class Recording:
    """The `Embedder` port over the fake: each call's texts and whether the section was held."""

    name = "recording-fake"

    def __init__(self, section: asyncio.Lock) -> None:
        self.fake = FakeEmbedder()
        self.section = section
        self.calls: list[tuple[list[str], bool]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append((list(texts), self.section.locked()))
        return self.fake.embed(texts)


class Seen(CandidateVectors):
    """Records the finding vectors each ranking used (texts, rows)."""

    def __init__(self, embedder: Recording) -> None:
        super().__init__(embedder)
        self.used: list[tuple[list[str], np.ndarray]] = []

    def vectors(
        self,
        findings: list[FindingProposition],
        nodes: Mapping[str, Proposition],
        prepared: FindingVectors | None = None,
    ) -> tuple[np.ndarray, VectorIndex] | None:
        pair = super().vectors(findings, nodes, prepared)
        assert pair is not None
        self.used.append(([text_of(f) for f in findings], pair[0].copy()))
        return pair


def _run(root: Path, *, prepared: bool, packed: bool) -> tuple[Pipeline, Recording, Seen]:
    """The notes imported one by one (lone jobs) or in one call (one pack). `prepared` False: the
    earlier way, the findings embedded inside the section (`prepare` answers nothing)."""
    pipe = Pipeline(root, script=PackScript() if packed else None)
    merge = pipe.extraction.merge
    recording = Recording(merge.lock)
    merge.vectors = seen = Seen(recording)
    if not prepared:

        async def nothing(_findings: Any) -> None:
            return None

        merge.prepare = nothing  # type: ignore[method-assign,assignment]

    async def scenario() -> None:
        if packed:
            results = pipe.library.import_files([(n, t.encode()) for n, t in NOTES])
            for r in results:
                assert r.source is not None, r
                await pipe.extraction.wait(r.source)
        else:
            for name, text in NOTES:
                await pipe.import_note(name, text)

    asyncio.run(scenario())
    return pipe, recording, seen


def _graph(pipe: Pipeline) -> list[tuple[str, str, tuple[str, ...]]]:
    return sorted((n.name, n.statement, tuple(n.sources)) for n in pipe.graph.nodes().values())


@pytest.mark.parametrize("packed", [False, True], ids=["lone jobs", "a pack"])
def test_findings_are_embedded_outside_the_section_with_the_same_vectors(
    tmp_path: Path, packed: bool
) -> None:
    pipe, recording, seen = _run(tmp_path / "now", prepared=True, packed=packed)
    assert seen.used and recording.calls
    assert not packed or getattr(pipe.script, "packs", 0) == 1  # the three notes: one call
    # no embedder call runs while the section is held: findings came prepared, the nodes they
    # became from their vectors
    assert [texts for texts, held in recording.calls if held] == []
    old_pipe, old_recording, old_seen = _run(tmp_path / "then", prepared=False, packed=packed)
    assert any(held for _, held in old_recording.calls)  # the earlier way embedded inside
    # the same rankings' inputs: the same findings with the same vectors, bit for bit
    assert [texts for texts, _ in seen.used] == [texts for texts, _ in old_seen.used]
    for (texts, now), (_, then) in zip(seen.used, old_seen.used, strict=True):
        assert np.array_equal(now, then)
        assert np.array_equal(now, FakeEmbedder().embed(texts))
    # and so the same graph (names, statements, sources) and the same links
    assert _graph(pipe) == _graph(old_pipe) and len(pipe.graph.nodes()) < 9  # some were linked
    assert len(pipe.graph.chains()) == len(old_pipe.graph.chains())


def test_a_failing_embedder_before_the_section_leaves_candidates_lexical(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")
    fake = FakeEmbedder(fail=True)
    pipe.extraction.merge.vectors = CandidateVectors(fake)

    async def scenario() -> None:
        for name, text in NOTES:
            await pipe.import_note(name, text)

    asyncio.run(scenario())
    assert len(fake.calls) == 1 and pipe.extraction.merge.vectors.failure  # asked once, then never
    assert {n.name for n in pipe.graph.nodes().values()} >= {"Binary heap", "Heapsort", "Decrease key"}


def test_a_lone_finding_on_an_empty_graph_does_not_load_the_embedder(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")
    merge = pipe.extraction.merge
    recording = Recording(merge.lock)
    merge.vectors = CandidateVectors(recording)

    async def scenario() -> None:
        await pipe.import_note("vault/first.md", "# Graph theory\n\nGraphs.\n")
        assert recording.calls == []  # nothing to rank against: not embedded, before or inside
        await pipe.import_note("vault/second.md", "# Binary heap\n\nA tree.\n")

    asyncio.run(scenario())
    # the second note's finding before the section; the first note's node, never embedded, at
    # the index's sync inside it (as before: only nodes the index does not hold are embedded there)
    assert recording.calls == [
        (["Binary heap. Binary heap holds."], False),
        (["Graph theory. Graph theory holds."], True),
    ]
    assert len(pipe.graph.nodes()) == 2
