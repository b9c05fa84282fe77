"""Issue 16: an extraction job's O(graph) work runs off the event loop. The auditor's candidates
(fuzzy and embedding ranking over every node) are ranked in a worker thread, and they are the
same candidates the auditor is then asked about."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from server.services.library import merge
from tests.flows.graph_pipeline import Pipeline


def note(*names: str) -> str:
    return "".join(f"# {name}\n\nSome prose about {name.lower()}.\n\n" for name in names)


def test_the_auditor_candidates_are_ranked_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranked_on: list[int] = []
    real = merge.audit_candidates

    def recorded(*args: Any, **kwargs: Any) -> Any:
        ranked_on.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(merge, "audit_candidates", recorded)
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> int:
        await pipe.import_note("vault/heap.md", note("Binary heap", "Heap order"))
        await pipe.import_note("vault/queues.md", note("Priority queue", "Binary heap"))
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())
    assert ranked_on, "no job was audited"
    assert loop_thread not in ranked_on
    # what the thread ranked was used: the second note's "Binary heap" joined the first's node
    assert sum(n.name == "Binary heap" for n in pipe.graph.nodes().values()) == 1
