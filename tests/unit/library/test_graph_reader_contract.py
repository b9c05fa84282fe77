"""The GraphReader contract (what the teacher's graph tools read): the same assertions against
the real reader, `LibraryService` over real graph ledgers, and `tests.fakes.graph.FakeGraphReader`
given the same sessions, so the fake the lesson tests use cannot drift from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.contracts.graph import (
    FindingProposition,
    Findings,
    Provenance,
    RunLine,
    SourceLine,
    Verdicts,
)
from server.core.contracts.models import Settings
from server.core.library.graph import plan_merge
from server.core.ports import GraphReader
from server.services.library.library import LibraryService
from server.store.library.graph import FileGraphStore
from tests.fakes import FakeChatStore, FakeIntakeStore, FakeSettingsStore
from tests.fakes.graph import FakeGraphReader

SESSIONS = {  # source id -> (title, kind, proposition names); the larger session first
    "src_heap": ("heap.md", "notes", ("Heap", "Heap order", "Root")),
    "c_lesson": ("Sorting", "chat", ("Heapsort",)),
}


@pytest.fixture(params=["library", "fake"])
def reader(request: pytest.FixtureRequest, tmp_path: Path) -> GraphReader:
    if request.param == "library":
        graph = FileGraphStore(tmp_path / "graph")
        for n, (sid, (title, kind, names)) in enumerate(SESSIONS.items()):
            found = Findings(
                propositions=[
                    FindingProposition(id=f"p{i}", name=x, statement=f"{x}.") for i, x in enumerate(names)
                ],
                chains=[],
            )
            prov = Provenance(source=sid, job=f"job_{n}")
            plan = plan_merge(graph.nodes(), graph.chains(), found, Verdicts(links=[]), prov, "t")
            run = RunLine(
                source=sid, job=f"job_{n}", label=title, addedNodes=len(names), linkedNodes=0,
                addedChains=0, droppedChains=0, at="t",
            )  # fmt: skip
            graph.commit_merge(plan, [], run)
            graph.record_source(SourceLine(id=sid, kind=kind, title=title, at="t"))
        return LibraryService(
            graph,
            None,  # type: ignore[arg-type]
            FakeSettingsStore(Settings()),
            chats=FakeChatStore(),
            intake=FakeIntakeStore(),
        )
    fake = FakeGraphReader()
    for sid, (title, kind, names) in SESSIONS.items():
        fake.add(sid, title, kind, [(f"n_{sid}_{x}", x, f"{x}.") for x in names])
    return fake


def test_sessions_count_what_each_gave_largest_first(reader: GraphReader) -> None:
    assert [(s["id"], s["title"], s["kind"], s["propositions"]) for s in reader.sessions()] == [
        ("src_heap", "heap.md", "notes", 3),
        ("c_lesson", "Sorting", "chat", 1),
    ]


def test_propositions_of_a_session(reader: GraphReader) -> None:
    given = reader.propositions("src_heap")
    assert sorted((p["name"], p["statement"]) for p in given) == [
        ("Heap", "Heap."),
        ("Heap order", "Heap order."),
        ("Root", "Root."),
    ]
    assert all(set(p) == {"id", "name", "statement"} and p["id"] for p in given)
    assert reader.propositions("no_such_session") == []
