"""The auditor's candidate index is kept across jobs and follows every change of the graph
(issue 28, item 2): merges add, a deletion removes, an edited note's version swap replaces; a
name the graph no longer holds is never offered to the auditor again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.flows.graph_pipeline import Pipeline


def test_the_kept_index_follows_merges_deletions_and_version_swaps(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")
    index = pipe.extraction.merge.index
    offered: list[set[str]] = []

    def snapshot() -> None:  # runs inside an audit, after the index was synced
        offered.append(set(index))

    async def scenario() -> None:
        await pipe.import_note("vault/graphs.md", "# Graph theory\n\nGraphs.\n")
        [graphs] = list(pipe.graph.nodes())
        await pipe.import_note("vault/heap.md", "# Binary heap\n\nA tree.\n")
        [heap] = [n for n in pipe.graph.nodes() if n != graphs]
        await pipe.service.delete([heap])
        pipe.script.during_audit = snapshot
        await pipe.import_note("vault/queue.md", "# Binary heap\n\n# Priority queue\n\nQueues.\n")
        assert offered[-1] == {graphs}  # the deleted node is gone from the index
        assert not any(node == heap for _, node in pipe.script.links)  # never offered, never linked
        first = set(pipe.graph.nodes())
        pipe.script.during_audit = snapshot
        await pipe.import_note("vault/queue.md", "# Binary heap\n\n# Fibonacci heap\n\nHeaps.\n")
        # the edited note's run saw the graph as it stood, the first version's nodes included
        assert offered[-1] >= first
        pipe.script.during_audit = snapshot
        await pipe.import_note("vault/other.md", "# Pairing heap\n\nMore.\n")
        assert offered[-1] == set(pipe.graph.nodes()) - {
            n for n, p in pipe.graph.nodes().items() if p.name == "Pairing heap"
        }

    asyncio.run(scenario())
