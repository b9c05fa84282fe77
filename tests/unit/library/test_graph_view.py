"""The read channel's derivation, deletion and layout (seed §6, §7)."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.contracts.graph import Chain, Proposition
from server.core.library.graph import chain_id
from server.core.library.layout import sanitize_positions, settle
from server.core.library.view_compact import COMPACT_FORMAT, compact_bytes, compact_delta
from server.core.library.view_derive import chain_line, clusters, deletion, derive_view
from server.core.library.view_rows import ViewRows, _plan, view_bytes


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


# -- patching the view's rows (issue 17, item 5) -------------------------------------------------
IDS = [f"n{i}" for i in range(14)]


@st.composite
def graphs(
    draw: st.DrawFn,
) -> tuple[dict[str, Proposition], dict[str, Chain], dict[str, tuple[float, float]]]:
    nodes = {
        i: node(i, draw(st.sampled_from(["src_a", "src_b", "c_1"])))
        for i in draw(st.sets(st.sampled_from(IDS)))
    }
    chains: dict[str, Chain] = {}
    for _ in range(draw(st.integers(0, 20))):
        conclusion = draw(st.sampled_from(IDS))
        premises = draw(st.sets(st.sampled_from([i for i in IDS if i != conclusion]), min_size=1, max_size=3))
        c = chain(sorted(premises), conclusion)
        chains[c.id] = c  # some dangle (a member not in nodes): the view drops them
    ids = [*nodes, *chains]
    positions = {i: (float(draw(st.integers(-50, 50))), 1.5) for i in ids if draw(st.booleans())}
    return nodes, chains, positions


@given(graphs(), st.data())
def test_a_patched_view_equals_a_fresh_derivation(
    before: tuple[dict[str, Proposition], dict[str, Chain], dict[str, tuple[float, float]]],
    data: st.DataObject,
) -> None:
    """Whatever changed between two derivations (propositions copied with a new alias or source,
    added, removed; chains added or removed; positions moved, added, dropped; labels; folder
    paths), the patched view equals `derive_view` of the new inputs, and untouched rows are
    reused, not rebuilt."""
    nodes, chains, positions = before
    labels = {"src_a": ("notes", "a.md")}
    folder_paths = [None, {"src_a": "v/a.md", "src_b": "v/sub/b.md"}, {"src_b": "w/b.md"}]
    _, rows = view_bytes(nodes, chains, positions, labels, None, data.draw(st.sampled_from(folder_paths)))
    nodes, chains, positions = dict(nodes), dict(chains), dict(positions)
    touched: set[str] = set()
    for nid in data.draw(st.sets(st.sampled_from(IDS))):
        kind = data.draw(st.sampled_from(["copy", "source", "add", "drop"]))
        if kind == "drop":
            nodes.pop(nid, None)
        elif kind == "add" or nid not in nodes:
            nodes[nid] = node(nid, "src_b")
        elif kind == "copy":
            nodes[nid] = nodes[nid].model_copy(update={"aliases": [*nodes[nid].aliases, "again"]})
        else:
            nodes[nid] = nodes[nid].model_copy(update={"sources": [*nodes[nid].sources, "src_z"]})
        touched.add(nid)
    _, _, moved = data.draw(graphs())
    for cid in data.draw(st.sets(st.sampled_from(sorted(chains)))) if chains else ():
        chains.pop(cid)
    _, extra, _ = data.draw(graphs())
    chains.update(extra)
    positions.update({k: v for k, v in moved.items() if data.draw(st.booleans())})
    for k in data.draw(st.sets(st.sampled_from(sorted(positions) or ["none"]))):
        positions.pop(k, None)
    labels = data.draw(st.sampled_from([labels, {"src_b": ("notes", "b.md")}]))
    paths = data.draw(st.sampled_from(folder_paths))  # folder clusters (issue 17 item 2)
    patched, memo = view_bytes(nodes, chains, positions, labels, rows, paths)
    assert patched == orjson.dumps(derive_view(nodes, chains, positions, labels, paths))
    for nid in touched & set(nodes):  # a touched proposition's row was serialised again
        assert nid in memo.rebuilt
    _spans_are_rows(patched, memo)


def _spans_are_rows(body: bytes, memo: ViewRows) -> None:
    """The memo's spans are the view's rows, and its links the chains' links."""
    for nid in memo.props.ids:
        start, end = memo.props.span(nid) or (0, 0)
        assert orjson.loads(body[start:end])["id"] == nid
    assert memo.chains.ids == memo.links.ids
    for cid in memo.chains.ids:
        start, end = memo.chains.span(cid) or (0, 0)
        assert orjson.loads(body[start:end])["id"] == cid
        link_start, link_end = memo.links.span(cid) or (0, 0)
        assert cid in {
            link[k] for link in orjson.loads(b"[" + body[link_start:link_end] + b"]") for k in link
        }


def test_a_merge_rebuilds_only_the_rows_it_touched() -> None:
    nodes = {n.id: n for n in [node("a"), node("b"), node("c")]}
    c1 = chain(["a"], "b")
    first, rows = view_bytes(nodes, {c1.id: c1}, {"a": (1.0, 2.0)}, {})
    assert first == orjson.dumps(derive_view(nodes, {c1.id: c1}, {"a": (1.0, 2.0)}, {}))
    linked = nodes["b"].model_copy(update={"sources": ["src_a", "src_b"]})  # an identity link
    c2 = chain(["b"], "c")
    after = {**nodes, "b": linked, "d": node("d", "src_b")}
    patched, memo = view_bytes(after, {c1.id: c1, c2.id: c2}, {"a": (1.0, 2.0)}, {}, rows)
    assert "a" not in memo.rebuilt and "c" not in memo.rebuilt  # reused
    span = memo.props.span("b") or (0, 0)
    assert "b" in memo.rebuilt and b'"sources":["src_a","src_b"]' in patched[span[0] : span[1]]
    assert c1.id not in memo.rebuilt  # its conclusion was copied, its name (the chain's line) kept
    assert patched == orjson.dumps(derive_view(after, {c1.id: c1, c2.id: c2}, {"a": (1.0, 2.0)}, {}))
    moved, again = view_bytes(after, {c1.id: c1, c2.id: c2}, {"a": (3.0, 2.0)}, {}, memo)  # a drag
    assert "a" in again.rebuilt and "b" not in again.rebuilt
    assert moved == orjson.dumps(derive_view(after, {c1.id: c1, c2.id: c2}, {"a": (3.0, 2.0)}, {}))


# -- the compact wire format and its deltas (issue 17, item 5) -----------------------------------
def expand(view: dict[str, Any]) -> dict[str, Any]:
    """The full view a compact body stands for: what the canvas's decoder does (`decodeCompact`
    in frontend/src/core/library/graph.ts), written again here as the test's oracle."""
    names = {p[0]: p[1] for p in view["props"]}
    nodes: list[dict[str, Any]] = []
    for p in view["props"]:
        row = dict(
            zip(["id", "name", "statement", "aliases", "cluster", "sources", "createdAt"], p[:7], strict=True)
        )
        if row["sources"] == 0:  # exactly [cluster]
            row["sources"] = [row["cluster"]]
        nodes.append({"kind": "proposition", **row, **({"x": p[7], "y": p[8]} if len(p) > 7 else {})})
    links = []
    for c in view["chains"]:
        cid, premises, conclusion, sources, created = c[:5]
        statement = f"{' ∧ '.join(names[p] for p in premises)} ⟹ {names[conclusion]}"
        row = {"id": cid, "kind": "implication", "name": "⟹", "statement": statement, "cluster": None}
        row |= {"sources": sources, "createdAt": created, "premises": premises, "conclusion": conclusion}
        nodes.append(row | ({"x": c[5], "y": c[6]} if len(c) > 5 else {}))
        links += [*({"source": p, "target": cid} for p in premises), {"source": cid, "target": conclusion}]
    clusters = [{**c, "nodeIds": [p[0] for p in view["props"] if p[4] == c["key"]]} for c in view["clusters"]]
    return {"nodes": nodes, "links": links, "clusters": clusters, "folders": view["folders"]}


def apply_delta(view: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """A delta applied to the compact view at its `since` (a dict keeps an id's place)."""
    assert delta["since"] == view["version"] and delta["full"] is False
    out = {"version": delta["version"], "clusters": delta["clusters"], "folders": delta["folders"]}
    for part in ("props", "chains"):
        rows = {r[0]: r for r in view[part]}
        rows.update({r[0]: r for r in delta[part]})
        out[part] = [r for k, r in rows.items() if k not in delta["removed"]]
    return out


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Equal views, rows compared by id (a delta appends a re-added row where a fresh derivation
    may place it elsewhere); cluster node ids compared as sets for the same reason."""
    assert {n["id"]: n for n in a["nodes"]} == {n["id"]: n for n in b["nodes"]}
    assert sorted(map(orjson.dumps, a["links"])) == sorted(map(orjson.dumps, b["links"]))
    key = lambda c: {**c, "nodeIds": sorted(c["nodeIds"])}  # noqa: E731
    assert [key(c) for c in a["clusters"]] == [key(c) for c in b["clusters"]]
    assert a["folders"] == b["folders"]


def test_the_compact_view_stands_for_the_full_view_in_fewer_bytes() -> None:
    positions = {"a": (1.0, 2.0), C1.id: (3.5, -4.0)}
    full = derive_view(NODES, CHAINS, positions, {"src_a": ("notes", "a.md")})
    body, rows = compact_bytes(NODES, CHAINS, positions, {"src_a": ("notes", "a.md")}, "e-1")
    view = orjson.loads(body)
    assert view["format"] == COMPACT_FORMAT and view["version"] == "e-1" and view["full"] is True
    assert expand(view) == full
    assert len(body) < len(orjson.dumps(full)) / 2
    assert rows.changed is None  # no previous derivation: everything is new
    for nid in rows.props.ids:
        start, end = rows.span(nid) or (0, 0)
        assert orjson.loads(body[start:end])[0] == nid
    assert orjson.loads(b"{" + body[rows.tail[0] : rows.tail[1]] + b"}")["clusters"] == view["clusters"]


@given(graphs(), st.data())
def test_a_delta_applied_to_the_old_compact_view_gives_the_new_one(
    before: tuple[dict[str, Proposition], dict[str, Chain], dict[str, tuple[float, float]]],
    data: st.DataObject,
) -> None:
    """Over two changes (propositions copied, added, removed; chains added, removed; positions
    moved), the delta since the first view, and the two deltas in turn, applied to it give the
    last view; the patched body expands to `derive_view` of the new inputs."""
    nodes, chains, positions = before
    labels = {"src_a": ("notes", "a.md")}
    body, rows = compact_bytes(nodes, chains, positions, labels, "e-1")
    first = orjson.loads(body)
    views, changed = [first], set[str]()
    for version in ("e-2", "e-3"):
        nodes, chains, positions = dict(nodes), dict(chains), dict(positions)
        for nid in data.draw(st.sets(st.sampled_from(IDS))):
            kind = data.draw(st.sampled_from(["copy", "add", "drop"]))
            if kind == "drop":
                nodes.pop(nid, None)
            elif kind == "add" or nid not in nodes:
                nodes[nid] = node(nid, "src_b")
            else:
                nodes[nid] = nodes[nid].model_copy(update={"name": f"{nid} renamed"})
        for cid in data.draw(st.sets(st.sampled_from(sorted(chains)))) if chains else ():
            chains.pop(cid)
        _, extra, moved = data.draw(graphs())
        chains.update(extra)
        positions.update({k: v for k, v in moved.items() if data.draw(st.booleans())})
        body, rows = compact_bytes(nodes, chains, positions, labels, version, rows)
        assert rows.changed is not None
        changed |= rows.changed
        view = orjson.loads(body)
        _same(expand(view), derive_view(nodes, chains, positions, labels))
        step = orjson.loads(compact_delta(rows, rows.changed, version, views[-1]["version"]))
        _same(expand(apply_delta(views[-1], step)), expand(view))
        views.append(view)
    delta = orjson.loads(compact_delta(rows, changed, "e-3", "e-1"))
    _same(expand(apply_delta(first, delta)), expand(views[-1]))


@given(graphs(), st.data())
def test_a_merge_is_patched_from_the_rows_it_touched(
    before: tuple[dict[str, Proposition], dict[str, Chain], dict[str, tuple[float, float]]],
    data: st.DataObject,
) -> None:
    """What a merge does (propositions copied with a new alias or source, or renamed; fresh
    propositions appended; chains appended or dropped; positions moved or added, as a settle
    does) is found without a pass over the rows (`_plan` answers), and both forms patched from
    it equal a fresh derivation; the compact delta applied to the old view gives the new one."""
    nodes, chains, positions = before
    labels = {"src_a": ("notes", "a.md")}
    paths = data.draw(st.sampled_from([None, {"src_a": "v/a.md", "src_b": "v/sub/b.md"}]))
    _, rows = view_bytes(nodes, chains, positions, labels, None, paths)
    first, compact = compact_bytes(nodes, chains, positions, labels, "e-1", None, paths)
    nodes, chains, positions = dict(nodes), dict(chains), dict(positions)
    for nid in data.draw(st.sets(st.sampled_from(sorted(nodes)))) if nodes else ():
        kind = data.draw(st.sampled_from(["alias", "source", "rename", "move"]))
        if kind == "alias":
            nodes[nid] = nodes[nid].model_copy(update={"aliases": [*nodes[nid].aliases, "again"]})
        elif kind == "source":
            nodes[nid] = nodes[nid].model_copy(update={"sources": [*nodes[nid].sources, "src_z"]})
        elif kind == "rename":
            nodes[nid] = nodes[nid].model_copy(update={"name": f"{nid} renamed"})
        else:
            positions[nid] = (positions.get(nid, (0.0, 0.0))[0] + 1.0, 2.5)
    named = {m for c in chains.values() for m in (*c.premises, c.conclusion)}
    for nid in data.draw(st.sets(st.sampled_from(sorted(set(IDS) - set(nodes) - named) or ["n0"]))):
        if nid not in nodes and nid not in named:  # a merge mints ids no chain names yet
            nodes[nid] = node(nid, data.draw(st.sampled_from(["src_a", "src_b", "c_9"])))
    had = set(chains)
    for cid in data.draw(st.sets(st.sampled_from(sorted(chains)))) if chains else ():
        chains.pop(cid)  # simplification dropped it
    _, extra, moved = data.draw(graphs())
    chains.update({cid: c for cid, c in extra.items() if cid not in had})
    positions.update({k: v for k, v in moved.items() if k in nodes or k in chains})
    assert _plan(nodes, chains, positions, rows.inputs, rows.props, rows.chains) is not None
    assert _plan(nodes, chains, positions, compact.inputs, compact.props, compact.chains) is not None
    patched, memo = view_bytes(nodes, chains, positions, labels, rows, paths)
    assert patched == orjson.dumps(derive_view(nodes, chains, positions, labels, paths))
    _spans_are_rows(patched, memo)
    body, compact = compact_bytes(nodes, chains, positions, labels, "e-2", compact, paths)
    assert body == compact_bytes(nodes, chains, positions, labels, "e-2", None, paths)[0]  # the same wire
    view = orjson.loads(body)
    _same(expand(view), derive_view(nodes, chains, positions, labels, paths))
    assert compact.changed is not None
    delta = orjson.loads(compact_delta(compact, compact.changed, "e-2", "e-1"))
    _same(expand(apply_delta(orjson.loads(first), delta)), expand(view))
    again, same = view_bytes(nodes, chains, positions, labels, memo, paths)
    assert again == patched and same.rebuilt == frozenset()


def test_an_unchanged_graph_gives_an_empty_delta() -> None:
    _, rows = compact_bytes(NODES, CHAINS, {}, {}, "e-1")
    body, again = compact_bytes(NODES, CHAINS, {}, {}, "e-2", rows)
    assert again.changed == frozenset()
    delta = orjson.loads(compact_delta(again, again.changed, "e-2", "e-1"))
    assert delta["props"] == delta["chains"] == delta["removed"] == []
    assert delta["clusters"] == orjson.loads(body)["clusters"]
