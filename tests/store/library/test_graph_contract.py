"""The graph roles' contract: the same assertions against `FileGraphStore` (real files) and
`tests.fakes.graph.FakeGraph`, so the fake the service tests use cannot drift from the adapter.

Covered per role: GraphRows and MergeLedger (a merge with simplification, a pending run that a
version line accepts or retires, graph_with/contribution, drop and restore), SourceLedger and
SourceRecorder (latest line, coverage, contributors), ViewCache (signatures, snapshots and their
refusals), LayoutStore, GraphDeleter (full death), UsageLedger."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.contracts.graph import (
    CoverageLine,
    FindingChain,
    FindingProposition,
    Findings,
    Provenance,
    RunLine,
    SourceLine,
    Verdicts,
    VersionLine,
)
from server.core.library.graph import plan_merge
from server.core.ports import GraphStore
from server.store.library.graph import FileGraphStore
from tests.fakes.graph import FakeGraph


@pytest.fixture(params=["file", "fake"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> GraphStore:
    return FileGraphStore(tmp_path / "graph") if request.param == "file" else FakeGraph()


def findings(*names: str, chains: tuple[tuple[list[str], str], ...] = ()) -> Findings:
    return Findings(
        propositions=[FindingProposition(id=n, name=n.upper(), statement=f"{n} holds.") for n in names],
        chains=[FindingChain(premises=p, conclusion=c) for p, c in chains],
    )


def merge(
    store: GraphStore, job: str, found: Findings, *, source: str = "src_a", pending: bool = False
) -> None:
    """One job's merge as extraction commits it: plan over the graph as it stands, then commit."""
    prov = Provenance(source=source, job=job)
    plan = plan_merge(store.nodes(), store.chains(), found, Verdicts(links=[]), prov, "t1", store.deleted())
    coverage = [CoverageLine(source=source, message=f"{job}-m", fingerprint="f", job=job, at="t1")]
    run = RunLine(
        source=source,
        job=job,
        label=source,
        addedNodes=plan.added_nodes,
        linkedNodes=plan.linked_nodes,
        addedChains=plan.added_chains,
        droppedChains=len(plan.dropped_chains),
        at="t1",
        pending=True if pending else None,
    )
    store.commit_merge(plan, coverage, run)


def names(store: GraphStore) -> set[str]:
    return {p.name for p in store.nodes().values()}


def test_an_empty_graph(store: GraphStore) -> None:
    assert store.nodes() == {} and store.chains() == {} and store.sources() == {}
    assert (
        store.coverage("src_a") == []
        and store.covered("src_a") == {}
        and store.contributors("src_a") == set()
    )
    assert store.pending() == frozenset() and store.deleted() == frozenset()
    assert store.archived_chains() == {} and len(store.chain_index()) == 0
    assert store.positions() == {} and store.render_settings() == {}
    assert store.view_snapshot(b"k") is None and store.graph_with({"job"}) == ({}, {})
    assert store.contribution(set()) == ({}, {})


def test_a_merge_counts_its_rows_coverage_and_simplifies(store: GraphStore) -> None:
    before = store.signature()
    merge(store, "j1", findings("a", "b", "c", chains=((["a"], "b"), (["a", "c"], "b"))))
    assert names(store) == {"A", "B", "C"}
    chains = store.chains()
    assert len(chains) == 1  # [a, c] ⟹ b is redundant beside a ⟹ b: simplification archived it
    (chain,) = chains.values()
    assert chain.id in store.chain_index() and len(store.chain_index()) == 1
    (archived,) = store.archived_chains().values()  # written, then taken out by the same commit
    assert len(archived.premises) == 2 and archived.conclusion == chain.conclusion
    assert store.covered("src_a") == {"j1-m": {"f"}} and store.contributors("src_a") == {"j1"}
    assert [line.job for line in store.coverage("src_a")] == ["j1"]
    assert store.signature() != before
    nodes = store.nodes()
    nodes.clear()  # a new mapping: the caller may change it
    assert len(store.nodes()) == 3


def test_drop_and_restore_chains(store: GraphStore) -> None:
    merge(store, "j1", findings("a", "b", chains=((["a"], "b"),)))
    (cid,) = store.chains()
    store.drop_chains({cid})
    assert store.chains() == {} and set(store.archived_chains()) == {cid}
    store.restore_chains({cid})
    assert set(store.chains()) == {cid}


def test_a_pending_run_counts_only_once_a_version_accepts_it(store: GraphStore) -> None:
    merge(store, "old", findings("a"))
    merge(store, "new", findings("b"), pending=True)
    assert names(store) == {"A"} and store.pending() == {"new"}
    assert store.contributors("src_a") == {"old", "new"}  # counted or pending
    assert [line.job for line in store.coverage("src_a")] == ["old", "new"]  # a pending job's counts
    with_new, _ = store.graph_with({"new"})
    assert {p.name for p in with_new.values()} == {"A", "B"}
    own, _ = store.contribution({"new"})
    assert {p.name for p in own.values()} == {"B"}
    store.complete(VersionLine(source="src_a", accepted=["new"], retired=["old"], at="t2"))
    assert names(store) == {"B"} and store.pending() == frozenset()
    assert store.contributors("src_a") == {"new"} and store.covered("src_a") == {"new-m": {"f"}}


def test_a_retired_pending_run_never_counts(store: GraphStore) -> None:
    merge(store, "new", findings("b"), pending=True)
    store.complete(VersionLine(source="src_a", accepted=[], retired=["new"], at="t2"))
    assert store.nodes() == {} and store.pending() == frozenset() and store.coverage("src_a") == []


def test_sources_keep_the_latest_line_in_first_order(store: GraphStore) -> None:
    rows = store.rows_signature()
    sig = store.signature()
    for sid, title in (("s1", "one"), ("s2", "two"), ("s1", "one again")):
        store.record_source(SourceLine(id=sid, kind="notes", title=title, path=None, at="t"))
    assert [(s.id, s.title) for s in store.sources().values()] == [("s1", "one again"), ("s2", "two")]
    assert store.rows_signature() == rows and store.signature() != sig  # a source names clusters only


def test_view_snapshots(store: GraphStore) -> None:
    store.save_view_snapshot(b"key-1", b'{"nodes":[]}')
    assert store.view_snapshot(b"key-1") == b'{"nodes":[]}'
    assert store.view_snapshot(b"key-2") is None  # another key: stale, never served
    assert store.view_snapshot(b"key-1", "view-compact") is None
    store.save_view_snapshot(b"key-1", b"compact", "view-compact")
    assert store.view_snapshot(b"key-1", "view-compact") == b"compact"
    with pytest.raises(ValueError):
        store.save_view_snapshot(b"two\nlines", b"x")
    with pytest.raises(ValueError):
        store.view_snapshot(b"key-1", "../elsewhere")


def test_layout_and_render_settings(store: GraphStore) -> None:
    rows = store.rows_signature()
    store.save_positions({"n_1": (1.5, -2.0), "n_2": (0.0, 3.0)})
    assert store.positions() == {"n_1": (1.5, -2.0), "n_2": (0.0, 3.0)}
    assert store.rows_signature() != rows  # positions are part of what a view derives from
    moved = store.positions()
    moved["n_1"] = (9.0, 9.0)  # a fresh dict: the caller may change it
    assert store.positions()["n_1"] == (1.5, -2.0)
    store.save_render_settings({"labels": "always", "size": 3})
    assert store.render_settings() == {"labels": "always", "size": 3}


def test_deletion_is_full_death(store: GraphStore) -> None:
    merge(store, "j1", findings("a", "b", chains=((["a"], "b"),)))
    by_name = {p.name: p.id for p in store.nodes().values()}
    (cid,) = store.chains()
    store.save_positions({by_name["A"]: (1.0, 1.0), by_name["B"]: (2.0, 2.0), cid: (3.0, 3.0)})
    store.delete({by_name["A"]}, {cid}, "t3")
    assert names(store) == {"B"} and store.chains() == {}
    assert store.deleted() == {by_name["A"], cid}
    assert store.positions() == {by_name["B"]: (2.0, 2.0)}
    merge(store, "j2", findings("a"))  # the same content again: a new id, the deleted one stays dead
    assert by_name["A"] not in store.nodes() and names(store) == {"A", "B"}


def test_usage_records_and_flush(store: GraphStore) -> None:
    store.record_usage({"job": "j1", "input": 10, "output": 2})
    assert store.flush(5.0) is True
