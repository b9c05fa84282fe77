"""The incremental candidate indexes (issue 28, item 2): after any sequence of adds, changes and
removes they answer exactly as indexes built from scratch over the same nodes; a job's ranking
with a kept index equals the one built for the call."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.contracts.graph import FindingProposition, Proposition
from server.core.library import candidate_index
from server.core.library.candidate_index import (
    CHAMPIONS,
    CandidateIndex,
    LexicalIndex,
    VectorIndex,
    statement_key,
    words,
)
from server.core.library.candidates import audit_candidates

VOCAB = [
    "group",
    "Ring",
    "field",
    "F(x)",
    "f(x)",
    "is",
    "a",
    "the",
    "closed",
    "open",
    "map",
    "int N",
    "int n",
]
IDS = [f"n_{i}" for i in range(8)]


def node(nid: str, name: str, statement: str, aliases: list[str], at: str) -> Proposition:
    return Proposition(id=nid, name=name, statement=statement, aliases=aliases, sources=["s"], createdAt=at)


sentence = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6).map(" ".join)
a_node = st.builds(
    lambda nid, name, statement, aliases, at: node(nid, name, statement + ".", aliases, at),
    st.sampled_from(IDS),
    st.sampled_from(VOCAB),
    sentence,
    st.lists(st.sampled_from(VOCAB), max_size=2),
    st.sampled_from(["t0", "t1", "t2"]),
)
# a step: put a node (add or change), remove an id, or sync to a graph of a few nodes
step = st.one_of(
    st.tuples(st.just("put"), a_node),
    st.tuples(st.just("remove"), st.sampled_from(IDS)),
    st.tuples(st.just("sync"), st.lists(a_node, max_size=6)),
)
queries = st.lists(
    st.builds(
        lambda name, statement: FindingProposition(id="p1", name=name, statement=statement),
        st.sampled_from(VOCAB),
        sentence,
    ),
    min_size=1,
    max_size=3,
)


def answers(
    index: CandidateIndex, graph: dict[str, Proposition], probes: list[FindingProposition]
) -> list[object]:
    out: list[object] = []
    for p in probes:
        out.append(index.exact(statement_key(p.statement), graph))
        out.append(index.named([p.name]))
        out.append(index.lexical.query(words(f"{p.name}. {p.statement}"), 5))
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=25), queries)
def test_after_any_changes_the_index_answers_as_one_built_from_scratch(
    steps: list[tuple[str, object]], probes: list[FindingProposition]
) -> None:
    index = CandidateIndex()
    graph: dict[str, Proposition] = {}
    for kind, arg in steps:
        if kind == "put":
            assert isinstance(arg, Proposition)
            graph[arg.id] = arg
            index.add(arg)
        elif kind == "remove":
            assert isinstance(arg, str)
            graph.pop(arg, None)
            index.remove(arg)
        else:
            assert isinstance(arg, list)
            graph = {n.id: n for n in arg}
            index.sync(graph)
    fresh = CandidateIndex(graph)
    assert set(index) == set(graph)
    assert answers(index, graph, probes) == answers(fresh, graph, probes)
    # and a whole job's ranking, with the kept index, equals the one built for the call
    findings = [p.model_copy(update={"id": f"p{i}"}) for i, p in enumerate(probes)]
    assert audit_candidates(findings, graph, index=index) == audit_candidates(findings, graph)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "remove"]), st.sampled_from(IDS), st.integers(0, 5)),
        max_size=30,
    ),
    st.integers(0, 5),
)
def test_the_vector_index_after_adds_and_removes_answers_as_one_built_from_scratch(
    steps: list[tuple[str, str, int]], probe: int
) -> None:
    basis = np.eye(6, dtype=np.float32)  # exact dot products: 0 or 1
    kept = VectorIndex(6)
    held: dict[str, int] = {}
    for kind, key, row in steps:
        if kind == "add":
            kept.add(key, basis[row])
            held[key] = row
        else:
            kept.remove(key)
            held.pop(key, None)
    fresh = VectorIndex(6)
    for key in sorted(held):
        fresh.add(key, basis[held[key]])
    q = basis[[probe, (probe + 1) % 6]]
    assert len(kept) == len(held)
    for n in (1, 3, 8):
        whole = fresh.search(q, n, 0.5)
        assert kept.search(q, n, 0.5) == whole
        blocks = candidate_index.SEARCH_ROWS
        candidate_index.SEARCH_ROWS = 2  # the rows searched two at a time: the same answer
        try:
            assert kept.search(q, n, 0.5) == whole
        finally:
            candidate_index.SEARCH_ROWS = blocks
    assert kept.search(q[:1], 8, 0.5) == [sorted(k for k, r in held.items() if r == probe)]


def test_a_changed_alias_and_a_gone_node_are_seen_by_sync_and_an_unchanged_copy_is_not_reindexed() -> None:
    a = node("n_a", "Group", "A group has an identity.", [], "t0")
    b = node("n_b", "Ring", "A ring has two operations.", [], "t1")
    index = CandidateIndex({"n_a": a, "n_b": b})
    grown = a.model_copy(update={"aliases": ["Gruppe"]})
    changed, gone = index.sync({"n_a": grown, "n_b": b.model_copy()})
    assert (changed, gone) == (["n_a"], [])  # b's copy has the same content: only re-referenced
    assert index.named(["gruppe"]) == ["n_a"]
    changed, gone = index.sync({"n_a": grown})
    assert (changed, gone) == ([], ["n_b"])
    assert index.named(["Ring"]) == [] and index.lexical.query(["ring"], 5) == []


def test_a_case_only_difference_is_never_an_exact_link_but_the_first_candidate() -> None:
    graph = {"n_big": node("n_big", "Distribution function", "$F(x)$ is non-decreasing.", [], "t0")}
    found = audit_candidates(
        [FindingProposition(id="p1", name="Density", statement="$f(x)$ is non-decreasing.")], graph
    )
    assert found.exact == {} and found.existing["p1"] == ["n_big"]


def test_a_query_reads_a_bounded_number_of_postings_however_common_its_words() -> None:
    lexical = LexicalIndex()
    for i in range(CHAMPIONS * 4):
        lexical.add(f"d{i:04d}", ["common", "word"] + ["pad"] * (i % 7))
    lexical.add("rare", ["common", "word", "theorem", "zorn"])
    best = lexical.query(["common", "word", "zorn"], 3)
    assert best[0][0] == "rare"  # the rare word's short posting list finds it
    assert len(best) == 3 and all(score > 0 for _, score in best)


def test_vectors_of_another_length_are_refused_in_plain_words() -> None:
    index = VectorIndex()
    index.add("a", np.ones(4))
    with pytest.raises(ValueError, match="length 3; this index holds length 4"):
        index.add("b", np.ones(3))
