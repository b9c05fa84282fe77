"""Graph ledgers on real files. Invariant: every line is whole JSON or skipped; a torn tail never
corrupts the next append; a merge commit leaves readable ledgers whatever point it stops at."""

from __future__ import annotations

import tempfile
from collections.abc import Collection
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.contracts.graph import (
    CoverageLine,
    FindingChain,
    FindingProposition,
    Findings,
    IdentityLink,
    Provenance,
    RunLine,
    SourceLine,
    Verdicts,
)
from server.core.library.graph import completion, plan_merge, version_jobs
from server.core.library.simplify import ChainIndex
from server.store import ledger
from server.store.library import graph as graph_store
from server.store.library import graph_files
from server.store.library.graph import FileGraphStore

PROV = Provenance(source="src_a", job="job_1")


def findings() -> Findings:
    return Findings(
        propositions=[
            FindingProposition(id=p, name=p.upper(), statement=f"{p} holds.") for p in ("a", "b", "c")
        ],
        chains=[
            FindingChain(premises=["a"], conclusion="b"),
            FindingChain(premises=["a", "c"], conclusion="b"),
        ],
    )


def run_line(job: str = "job_1") -> RunLine:
    return RunLine(
        source="src_a",
        job=job,
        label="a.md",
        addedNodes=3,
        linkedNodes=0,
        addedChains=2,
        droppedChains=1,
        at="t1",
    )


def commit(store: FileGraphStore, job: str = "job_1") -> None:
    prov = Provenance(source="src_a", job=job)
    plan = plan_merge(store.nodes(), store.chains(), findings(), Verdicts(links=[]), prov, "t1")
    store.commit_merge(
        plan,
        [CoverageLine(source="src_a", message="chunk-1", fingerprint="f", job=job, at="t1")],
        run_line(job),
    )


def test_a_merge_commit_round_trips_with_simplification(tmp_path: Path) -> None:
    store = FileGraphStore(tmp_path / "graph")
    commit(store)
    assert len(store.nodes()) == 3
    [kept] = store.chains().values()
    assert len(kept.premises) == 1  # [a, c] ⟹ b was redundant next to a ⟹ b
    assert store.covered("src_a") == {"chunk-1": {"f"}} and store.covered("other") == {}
    assert [r.job for r in store.runs()] == ["job_1"]


def test_torn_and_invalid_lines_are_skipped_and_appends_stay_whole(tmp_path: Path) -> None:
    store = FileGraphStore(tmp_path / "graph")
    commit(store)
    nodes = tmp_path / "graph" / "nodes.jsonl"
    with nodes.open("ab") as handle:
        handle.write(b'{"id": "n_torn", "name": "half')  # a crash mid-line
    assert len(store.nodes()) == 3
    store.record_source(SourceLine(id="src_a", kind="notes", title="a.md", at="t2"))
    commit(store, "job_2")  # appends after the torn tail
    assert len(store.nodes()) == 6  # another run: new nodes, none welded onto the first run's
    assert nodes.read_bytes().count(b"\n") == 7  # 3 + torn + 3, each line ended
    (tmp_path / "graph" / "sources.jsonl").write_text('not json\n{"id": "src_b", "kind": "x"}\n')
    assert store.sources() == {}


@pytest.mark.parametrize("fail_at", ["chains", "sessions", "coverage", "rewrite"])
def test_a_merge_killed_midway_leaves_readable_ledgers_and_the_rerun_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: str
) -> None:
    """The run line is the commit point, written last: before it, none of the job's lines count,
    its coverage included (nothing half-merged, and the content runs again: issue 26, a crash
    between the run line and the coverage merged a note twice); after it, the job counts."""
    store = FileGraphStore(tmp_path / "graph")
    real_append, real_write = ledger.append_ledger, graph_store.write_bytes_atomic

    def append(path: Path, lines) -> None:  # type: ignore[no-untyped-def]
        if path.stem == fail_at:
            raise OSError("killed")
        real_append(path, lines)

    def write(path: Path, payload: bytes, **kwargs) -> None:  # type: ignore[no-untyped-def]
        if fail_at == "rewrite" and path.name == "chains.jsonl":  # simplification's rewrite
            raise OSError("killed")
        real_write(path, payload, **kwargs)

    monkeypatch.setattr("server.store.library.graph.append_ledger", append)
    monkeypatch.setattr("server.store.library.graph.write_bytes_atomic", write)
    with pytest.raises(OSError):
        commit(store)
    committed = fail_at == "rewrite"
    assert len(store.nodes()) == (3 if committed else 0)  # readable; counted only once committed
    assert store.covered("src_a") == ({"chunk-1": {"f"}} if fail_at == "rewrite" else {})
    if fail_at == "rewrite":
        assert len(store.chains()) == 2  # the redundant chain outlived the crash, nothing was lost
        return
    monkeypatch.setattr("server.store.library.graph.append_ledger", real_append)
    monkeypatch.setattr("server.store.library.graph.write_bytes_atomic", real_write)
    commit(store, "job_2")  # the rerun is another run
    keep = version_jobs(store.coverage("src_a"), {"chunk-1": "f"})
    assert keep == {"job_2"}
    version = {"chunk-1": "f"}
    cover = store.coverage("src_a")
    line = completion("src_a", store.contributors("src_a"), cover, version, store.pending(), "t3")
    assert line is None  # job_1 never committed: nothing of it to retire
    assert len(store.nodes()) == 3 and len(store.chains()) == 1
    assert store.covered("src_a") == {"chunk-1": {"f"}}


def test_the_carried_fold_equals_a_fresh_read_and_mutates_nothing_held(tmp_path: Path) -> None:
    store = FileGraphStore(tmp_path / "graph")
    commit(store)
    held_nodes = store.nodes()
    snapshot = {k: v.model_dump() for k, v in held_nodes.items()}
    other = Provenance(source="src_b", job="job_2")
    more = Findings(
        propositions=[
            FindingProposition(id="a", name="A again", statement="a holds."),
            FindingProposition(id="d", name="D", statement="d holds."),
        ],
        chains=[FindingChain(premises=["a"], conclusion="d")],
    )
    first_a = next(iter(held_nodes))
    plan = plan_merge(
        store.nodes(),
        store.chains(),
        more,
        Verdicts(links=[IdentityLink(finding="a", node=first_a)]),
        other,
        "t2",
    )
    store.commit_merge(plan, [], run_line("job_2"))
    fresh = FileGraphStore(tmp_path / "graph")
    assert {k: v.model_dump() for k, v in store.nodes().items()} == {
        k: v.model_dump() for k, v in fresh.nodes().items()
    }
    assert {k: v.model_dump() for k, v in store.chains().items()} == {
        k: v.model_dump() for k, v in fresh.chains().items()
    }
    assert {k: v.model_dump() for k, v in held_nodes.items()} == snapshot  # what callers held is untouched
    assert store.nodes()[first_a].sources == ["src_a", "src_b"]


def test_retiring_a_job_keeps_what_other_sources_assert(tmp_path: Path) -> None:
    """Issue 11, item 2: a replaced job's lines stop counting; a node or chain another source also
    asserts stays, with that source's provenance only; nothing is rewritten."""
    store = FileGraphStore(tmp_path / "graph")
    commit(store)
    by_name = {n.name: n.id for n in store.nodes().values()}
    other = Provenance(source="src_b", job="job_b")
    more = Findings(
        propositions=[
            FindingProposition(id="a", name="A too", statement="a holds."),
            FindingProposition(id="x", name="X", statement="x holds."),
        ],
        chains=[FindingChain(premises=["a"], conclusion="x")],
    )
    links = Verdicts(links=[IdentityLink(finding="a", node=by_name["A"])])
    plan = plan_merge(store.nodes(), store.chains(), more, links, other, "t2")
    store.commit_merge(plan, [], run_line("job_b").model_copy(update={"source": "src_b"}))
    size = (tmp_path / "graph" / "nodes.jsonl").stat().st_size
    line = completion("src_a", store.contributors("src_a"), [], {}, store.pending(), "t3")
    assert line is not None and line.retired == ["job_1"]
    store.complete(line)
    nodes = store.nodes()
    assert set(nodes) == {by_name["A"], plan.node_lines[1].id}
    assert nodes[by_name["A"]].sources == ["src_b"] and nodes[by_name["A"]].name == "A too"
    [kept] = store.chains().values()
    assert kept.premises == [by_name["A"]] and kept.sources == ["src_b"]
    assert store.covered("src_a") == {} and store.contributors("src_a") == set()
    assert (tmp_path / "graph" / "nodes.jsonl").stat().st_size == size  # append-only: folded at read
    assert FileGraphStore(tmp_path / "graph").nodes().keys() == nodes.keys()


def test_a_pending_job_counts_only_from_the_version_line_that_accepts_it(tmp_path: Path) -> None:
    """Issue 11 (a re-run that fails half-way merges nothing): a replacing run's job writes its
    lines with a pending run line; no read counts them (only `graph_with` for the run itself)
    until one version line accepts them and retires the old job, both at once."""
    store = FileGraphStore(tmp_path / "graph")
    commit(store)  # job_1 covers chunk-1 at fingerprint "f": the old version
    old = {k: v.model_dump() for k, v in store.nodes().items()}
    prov = Provenance(source="src_a", job="job_2")
    plan = plan_merge(store.nodes(), store.chains(), findings(), Verdicts(links=[]), prov, "t2")
    cover = [CoverageLine(source="src_a", message="chunk-2", fingerprint="g", job="job_2", at="t2")]
    store.commit_merge(plan, cover, run_line("job_2").model_copy(update={"pending": True}))
    assert {k: v.model_dump() for k, v in store.nodes().items()} == old  # the cached fold
    assert {k: v.model_dump() for k, v in FileGraphStore(tmp_path / "graph").nodes().items()} == old
    assert store.pending() == {"job_2"} and store.contributors("src_a") == {"job_1", "job_2"}
    assert store.covered("src_a") == {"chunk-1": {"f"}, "chunk-2": {"g"}}  # a rerun resumes
    seen, _ = store.graph_with({"job_2"})
    assert len(seen) == 6 and len(store.contribution({"job_2"})[0]) == 3
    version = {"chunk-2": "g"}
    line = completion(
        "src_a", store.contributors("src_a"), store.coverage("src_a"), version, store.pending(), "t3"
    )
    assert line is not None and (line.accepted, line.retired) == (["job_2"], ["job_1"])
    store.complete(line)
    assert set(store.nodes()) == {n.id for n in plan.node_lines} and store.pending() == set()
    assert FileGraphStore(tmp_path / "graph").nodes().keys() == store.nodes().keys()


def test_a_deleted_id_never_counts_again_even_from_a_stale_plan(tmp_path: Path) -> None:
    """Issue 11, item 3 (store side): a merge planned before a deletion and committed after it
    (the race the merge section now prevents) cannot bring the node back."""
    store = FileGraphStore(tmp_path / "graph")
    commit(store)
    by_name = {n.name: n.id for n in store.nodes().values()}
    stale = plan_merge(
        store.nodes(),
        store.chains(),
        Findings(
            propositions=[FindingProposition(id="q", name="A", statement="a holds.")],
            chains=[FindingChain(premises=["q"], conclusion=by_name["B"])],
        ),
        Verdicts(links=[IdentityLink(finding="q", node=by_name["A"])]),
        Provenance(source="src_b", job="job_b"),
        "t2",
    )
    store.delete({by_name["A"]}, {c.id for c in store.chains().values() if by_name["A"] in c.premises}, "t2")
    assert by_name["A"] not in store.nodes()
    store.commit_merge(stale, [], run_line("job_b"))
    assert by_name["A"] not in store.nodes()  # no resurrection
    assert all(by_name["A"] not in [*c.premises, c.conclusion] for c in store.chains().values())
    assert by_name["A"] in store.deleted()


# -- the kept chain index (issue 17, item 6) -----------------------------------------------------
def index_content(index: ChainIndex, nodes: Collection[str]) -> tuple[int, dict[str, tuple[set, set]]]:
    """What an index answers: its size and, for every node, the ids premised on / concluding it."""
    return len(index), {
        n: ({c.id for c in index.premised(n)}, {c.id for c in index.concluding(n)}) for n in nodes
    }


@st.composite
def merge_jobs(draw: st.DrawFn) -> list[tuple[int, list[tuple[list[int], int]], list[int], bool]]:
    """Jobs: (new propositions, chains over ids [0, existing + new), links of new props to existing
    ones as offsets, whether a deletion follows). Small id spaces make redundant chains common."""
    out = []
    for _ in range(draw(st.integers(1, 6))):
        fresh = draw(st.integers(1, 5))
        chains = draw(
            st.lists(
                st.tuples(st.lists(st.integers(0, 40), min_size=1, max_size=3), st.integers(0, 40)),
                max_size=12,
            )
        )
        links = draw(st.lists(st.integers(0, 40), max_size=2))
        out.append((fresh, chains, links, draw(st.booleans())))
    return out


@settings(max_examples=60, deadline=None)
@given(merge_jobs(), st.booleans())
def test_the_kept_chain_index_plans_what_a_fresh_index_plans(
    jobs: list[tuple[int, list[tuple[list[int], int]], list[int], bool]], reopen: bool
) -> None:
    """Every merge planned with the store's kept index and kept `chains()` drops exactly what a
    plan from a fresh read of the files (indexing every chain on the spot) drops, and after each
    commit (and each deletion, and a reopen) both answer as a fresh read."""
    with tempfile.TemporaryDirectory() as tmp:
        store = FileGraphStore(Path(tmp) / "graph")
        for number, (fresh, raw_chains, links, delete_after) in enumerate(jobs):
            nodes, chains = store.nodes(), store.chains()
            existing = sorted(nodes)
            props = [
                FindingProposition(id=f"p{i}", name=f"P{number}.{i}", statement="s") for i in range(fresh)
            ]
            universe = existing + [p.id for p in props]

            def ref(i: int, universe: list[str] = universe) -> str:
                return universe[i % len(universe)]

            finding_chains = [
                FindingChain(premises=sorted({ref(i) for i in ps} - {ref(c)}), conclusion=ref(c))
                for ps, c in raw_chains
                if {ref(i) for i in ps} - {ref(c)}
            ]
            verdicts = Verdicts(
                links=[
                    IdentityLink(finding=props[k % fresh].id, node=existing[k % len(existing)])
                    for k in links
                    if existing
                ]
            )
            findings_ = Findings(propositions=props, chains=finding_chains)
            prov = Provenance(source=f"src_{number % 2}", job=f"job_{number}")
            at = f"t{number:03d}"
            index = store.chain_index()
            fresh_chains = FileGraphStore(Path(tmp) / "graph").chains()  # nothing kept: read from the files
            assert {k: v.model_dump() for k, v in chains.items()} == {
                k: v.model_dump() for k, v in fresh_chains.items()
            }
            assert index_content(index, nodes) == index_content(ChainIndex(fresh_chains.values()), nodes)
            kept = plan_merge(nodes, chains, findings_, verdicts, prov, at, index=index)
            spot = plan_merge(nodes, fresh_chains, findings_, verdicts, prov, at)
            assert kept.dropped_chains == spot.dropped_chains
            assert kept.chain_lines == spot.chain_lines
            assert index_content(index, nodes) == index_content(
                ChainIndex(chains.values()), nodes
            )  # read only
            store.commit_merge(kept, [], run_line(f"job_{number}"))
            if delete_after and store.nodes():
                gone = sorted(store.nodes())[number % len(store.nodes())]
                store.delete(
                    {gone}, {c.id for c in store.chains().values() if gone in [*c.premises, c.conclusion]}, at
                )
            if reopen and number % 2:
                store = FileGraphStore(Path(tmp) / "graph")
            after, fresh_chains = store.nodes(), FileGraphStore(Path(tmp) / "graph").chains()
            assert index_content(store.chain_index(), after) == index_content(
                ChainIndex(fresh_chains.values()), after
            )


def test_positions_are_parsed_again_only_when_the_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17 item 5: each view derivation reads the positions; an unchanged file is not parsed
    again, a rewritten one is, and the caller's changes never reach the kept copy."""
    parsed: list[Path] = []
    real = graph_files._read_lenient_json
    monkeypatch.setattr(graph_files, "_read_lenient_json", lambda path: parsed.append(path) or real(path))
    store = FileGraphStore(tmp_path)
    assert store.positions() == {}
    store.save_positions({"n_a": (1.0, 2.0)})
    first = store.positions()
    first["n_b"] = (9.0, 9.0)  # the caller's own dict
    assert store.positions() == {"n_a": (1.0, 2.0)}
    assert len(parsed) == 1  # the second read parsed nothing
    store.save_positions({"n_a": (3.0, 4.0)})
    assert store.positions() == {"n_a": (3.0, 4.0)} and len(parsed) == 2
    (tmp_path / "positions.json").write_text("not json")
    assert store.positions() == {}
    (tmp_path / "positions.json").unlink()
    assert store.positions() == {}
