"""The read channel's derivation, deletion and layout (seed §6, §7)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.contracts.graph import Chain, Proposition
from server.core.graph import chain_id
from server.core.graph_view import chain_line, clusters, deletion, derive_view
from server.core.layout import sanitize_positions, settle


def node(nid: str, source: str = "src_a") -> Proposition:
    return Proposition(
        id=nid, name=nid.upper(), statement=f"{nid} holds.", aliases=[], sources=[source], createdAt="t0"
    )


def chain(premises: list[str], conclusion: str) -> Chain:
    return Chain(
        id=chain_id(premises, conclusion),
        premises=sorted(premises),
        conclusion=conclusion,
        sources=["src_a"],
        createdAt="t0",
    )


NODES = {n.id: n for n in [node("a"), node("b"), node("c"), node("e"), node("x", "c_1")]}
C1, C2 = chain(["a", "b"], "e"), chain(["c", "x"], "e")
CHAINS = {C1.id: C1, C2.id: C2}


def test_each_chain_is_its_own_implication_node() -> None:
    view = derive_view(NODES, CHAINS, {}, {"src_a": ("notes", "a.md")})
    implications = [n for n in view["nodes"] if n["kind"] == "implication"]
    assert {n["id"] for n in implications} == {C1.id, C2.id}  # two arguments, two diamonds
    assert {(lk["source"], lk["target"]) for lk in view["links"]} == {
        ("a", C1.id),
        ("b", C1.id),
        (C1.id, "e"),
        ("c", C2.id),
        ("x", C2.id),
        (C2.id, "e"),
    }
    assert next(n for n in implications if n["id"] == C1.id)["statement"] == "A ∧ B ⟹ E"
    assert chain_line(C2, NODES) == "C ∧ X ⟹ E"


def test_dangling_chains_drop_from_the_view() -> None:
    nodes = {k: v for k, v in NODES.items() if k != "x"}
    view = derive_view(nodes, CHAINS, {}, {})
    assert [n["id"] for n in view["nodes"] if n["kind"] == "implication"] == [C1.id]


def test_clusters_are_the_birth_session_partition() -> None:
    rows = clusters(NODES, {"src_a": ("notes", "a.md")})
    assert [(r["key"], r["nodeCount"], r["label"]) for r in rows] == [("src_a", 4, "a.md"), ("c_1", 1, None)]
    assert rows[1]["kind"] == "chat"  # a lesson whose record is gone: label null, never guessed


def test_deleting_a_proposition_kills_every_chain_referencing_it() -> None:
    assert deletion(NODES, CHAINS, {"e"}) == ({"e"}, {C1.id, C2.id})
    assert deletion(NODES, CHAINS, {"a"}) == ({"a"}, {C1.id})


def test_deleting_an_implication_kills_exactly_that_chain() -> None:
    assert deletion(NODES, CHAINS, {C2.id}) == (set(), {C2.id})
    assert deletion(NODES, CHAINS, {"nope"}) == (set(), set())


def test_settle_keeps_existing_places_and_is_deterministic() -> None:
    existing = {"a": (0.0, 0.0), "b": (100.0, 0.0)}
    links = [("a", "c"), ("b", "c"), ("c", "d")]
    first = settle(existing, ["a", "b", "c", "d"], links)
    assert first["a"] == (0.0, 0.0) and first["b"] == (100.0, 0.0)
    assert set(first) == {"a", "b", "c", "d"}
    assert settle(existing, ["a", "b", "c", "d"], links) == first
    assert math.dist(first["c"], (50, 0)) < 200  # near its neighbours
    assert settle(first, ["a", "b", "c", "d"], links) == first  # nothing new: nothing moves


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "zz"]),
        st.one_of(
            st.tuples(st.floats(allow_nan=True, allow_infinity=True), st.floats()),
            st.text(),
            st.none(),
            st.fixed_dictionaries({"x": st.integers(), "y": st.booleans()}),
        ),
    )
)
def test_sanitize_keeps_only_known_finite_positions(raw: dict) -> None:
    clean = sanitize_positions(
        {k: list(v) if isinstance(v, tuple) else v for k, v in raw.items()}, {"a", "b"}
    )
    assert set(clean) <= {"a", "b"}
    assert all(math.isfinite(c) and abs(c) <= 1e6 for xy in clean.values() for c in xy)


def test_sanitize_refuses_a_non_object() -> None:
    with pytest.raises(ValueError):
        sanitize_positions([1, 2], {"a"})
    assert sanitize_positions({"a": {"x": 1e9, "y": -5}}, {"a"}) == {"a": (1e6, -5.0)}
