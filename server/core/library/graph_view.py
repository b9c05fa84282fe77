"""The graph's read channel: a pure derivation of what the home page shows (seed §6, §7).

Stored truth is propositions and reasoning chains; the view is a lossy derived image of it: each
chain becomes an implication node (id = its `arg_` id, name `⟹`, statement = the chain line) with
arrows premise → implication → conclusion, so two independent arguments for one conclusion stay
two diamonds. A chain with a member that no longer exists is dropped from the view. Clusters are
the birth-session partition of the propositions (a proposition's birth session is its first
source); implication nodes are not clustered. Notes clusters group by folder first
(`core.folders`): each cluster row names its folder (`folder`, or null at top level: lessons and
single files), and the view lists the folders (issue 17 item 2, decision 0022).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress, filterfalse, islice
from operator import is_not, ne, not_
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from server.core.contracts.graph import Chain, Proposition
from server.core.library.folders import folder_rows, folder_tree

IMPLIES = "⟹"
AND = "∧"


def chain_line(chain: Chain, nodes: Mapping[str, Proposition]) -> str:
    """`A ∧ B ⟹ C` with proposition names."""
    premises = f" {AND} ".join(nodes[p].name for p in chain.premises)
    return f"{premises} {IMPLIES} {nodes[chain.conclusion].name}"


def live_chains(nodes: Mapping[str, Proposition], chains: Mapping[str, Chain]) -> list[Chain]:
    """Chains whose every member exists (dangling chains drop)."""
    return [c for c in chains.values() if c.conclusion in nodes and all(p in nodes for p in c.premises)]


def birth_partition(nodes: Mapping[str, Proposition]) -> list[tuple[str, list[str]]]:
    """(birth session, node ids) groups, every group whatever its size, ordered by size
    (largest first), ties by session id."""
    groups: dict[str, list[str]] = {}
    for node in nodes.values():
        groups.setdefault(node.sources[0] if node.sources else "", []).append(node.id)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def clusters(
    nodes: Mapping[str, Proposition],
    labels: Mapping[str, tuple[str, str | None]],
    paths: Mapping[str, str | None] | None = None,
) -> list[dict[str, Any]]:
    """`GET /api/graph/clusters` rows: `{key, kind, label, nodeIds, nodeCount, folder}`.

    Args:
        nodes: the propositions.
        labels: session id -> (kind "chat" | "notes", label); a session missing here (its naming
            record is gone) keeps `label: null` and its kind from its id shape.
        paths: notes source id -> its path as imported (`core.folders`); `folder` is the key of
            the folder holding it, null for a session without a folder.
    """
    partition = birth_partition(nodes)
    return _cluster_rows(partition, labels, _folders(partition, paths)[0])


def _folders(
    partition: list[tuple[str, list[str]]], paths: Mapping[str, str | None] | None
) -> tuple[dict[str, str], list[dict[str, object]]]:
    """(session -> folder key, the view's `folders` rows) for the sessions that have nodes."""
    if not paths:
        return {}, []
    sizes = {key: len(ids) for key, ids in partition}
    of, folders = folder_tree({key: paths[key] for key in sizes if key in paths})
    return of, folder_rows(folders, sizes)


def _cluster_rows(
    partition: list[tuple[str, list[str]]],
    labels: Mapping[str, tuple[str, str | None]],
    folder_of: Mapping[str, str],
) -> list[dict[str, Any]]:
    out = []
    for key, ids in partition:
        kind, label = labels.get(key, ("notes" if key.startswith("src_") else "chat", None))
        out.append(
            {
                "key": key,
                "kind": kind,
                "label": label,
                "nodeIds": ids,
                "nodeCount": len(ids),
                "folder": folder_of.get(key),
            }
        )
    return out


def derive_view(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    labels: Mapping[str, tuple[str, str | None]],
    paths: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """The home view: `{nodes, links, clusters, folders}`.

    nodes: `{id, kind: "proposition"|"implication", name, statement, cluster|null, sources,
    createdAt, x?, y?}`; links: `{source, target}` (premise → implication → conclusion);
    clusters: as `clusters()`; folders: `core.folders.folder_rows` (`{key, label, path, parent,
    clusters, nodeCount}`, parents before children), from `paths` (notes source id -> path).
    """
    partition = birth_partition(nodes)
    cluster_of = {nid: key for key, ids in partition for nid in ids}
    out_nodes = [_node_row(node, cluster_of.get(node.id), positions) for node in nodes.values()]
    links: list[dict[str, str]] = []
    for chain in live_chains(nodes, chains):
        out_nodes.append(_chain_row(chain, nodes, positions))
        links.extend(_chain_links(chain))
    folder_of, folders = _folders(partition, paths)
    return {
        "nodes": out_nodes,
        "links": links,
        "clusters": _cluster_rows(partition, labels, folder_of),
        "folders": folders,
    }


def _node_row(
    node: Proposition, cluster: str | None, positions: Mapping[str, tuple[float, float]]
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": node.id,
        "kind": "proposition",
        "name": node.name,
        "statement": node.statement,
        "aliases": node.aliases,
        "cluster": cluster,
        "sources": node.sources,
        "createdAt": node.created_at,
    }
    _place(row, positions)
    return row


def _chain_row(
    chain: Chain, nodes: Mapping[str, Proposition], positions: Mapping[str, tuple[float, float]]
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": chain.id,
        "kind": "implication",
        "name": IMPLIES,
        "statement": chain_line(chain, nodes),
        "cluster": None,
        "sources": chain.sources,
        "createdAt": chain.created_at,
        "premises": chain.premises,
        "conclusion": chain.conclusion,
    }
    _place(row, positions)
    return row


def _chain_links(chain: Chain) -> list[dict[str, str]]:
    return [
        *({"source": p, "target": chain.id} for p in chain.premises),
        {"source": chain.id, "target": chain.conclusion},
    ]


_NODES_OPEN = b'{"nodes":['
_LINKS_OPEN = b'],"links":['


@dataclass(frozen=True)
class Spans:
    """One run of rows of a body (joined by commas), each row a span of it, in body order. Never
    mutated.

    Attributes:
        ids: the rows' ids in body order.
        starts: each row's start in the body (bytes).
        lengths: each row's length (bytes).
        index: id -> its place in `ids`.
    """

    ids: list[str] = field(default_factory=list)
    starts: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    lengths: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    index: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def of(
        ids: list[str], lengths: npt.NDArray[np.int64], base: int, index: dict[str, int] | None = None
    ) -> Spans:
        """The spans of rows of these lengths joined by commas from `base` (no Python loop:
        `index`, when given, is `ids`' index already)."""
        starts = np.empty(len(lengths), np.int64)
        if len(lengths):
            starts[0] = 0
            np.cumsum(lengths[:-1] + 1, out=starts[1:])
            starts += base
        if index is None:
            index = dict(zip(ids, range(len(ids)), strict=True))
        return Spans(ids, starts, lengths, index)

    def span(self, rid: str) -> tuple[int, int] | None:
        """(start, end) of `rid`'s row, None when it has none."""
        i = self.index.get(rid)
        return None if i is None else (int(self.starts[i]), int(self.starts[i] + self.lengths[i]))

    def run(self, first: int, last: int) -> tuple[int, int]:
        """(start, end) of rows `first`..`last` (inclusive) with the commas between them."""
        return int(self.starts[first]), int(self.starts[last] + self.lengths[last])


@dataclass(frozen=True)
class Inputs:
    """What a derivation was derived from (copies of the mappings; their objects are read-only by
    contract), so the next one finds what changed with C loops (`_plan`).

    Attributes:
        nodes, chains, positions: the mappings as they were.
        dangling: the chain ids of `chains` that are not in the view (a member missing).
        groups: birth session -> its proposition ids in `nodes` order (`birth_partition`, unsorted).
    """

    nodes: dict[str, Proposition] = field(default_factory=dict)
    chains: dict[str, Chain] = field(default_factory=dict)
    positions: dict[str, tuple[float, float]] = field(default_factory=dict)
    dangling: frozenset[str] = frozenset()
    groups: dict[str, list[str]] = field(default_factory=dict)


def _birth(node: Proposition) -> str:
    return node.sources[0] if node.sources else ""


def _groups(nodes: Mapping[str, Proposition]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for node in nodes.values():
        groups.setdefault(_birth(node), []).append(node.id)
    return groups


def _partition(groups: Mapping[str, list[str]]) -> list[tuple[str, list[str]]]:
    """`birth_partition` from the groups."""
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def _is_live(chain: Chain, nodes: Mapping[str, Proposition]) -> bool:
    return chain.conclusion in nodes and all(map(nodes.__contains__, chain.premises))


@dataclass
class _Plan:
    """What changed since a derivation, as rows: what the derivation is from (`inputs`), the
    proposition rows to serialise again in place (`nodes`) and those appended (`new_nodes`, in
    order), the same for chains, and the chain rows that went (`gone`)."""

    inputs: Inputs
    nodes: set[str]
    new_nodes: list[str]
    chains: set[str]
    new_chains: list[str]
    gone: set[str]


def _plan(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    old: Inputs | None,
    props: Spans,
    rows: Spans,
) -> _Plan | None:
    """The rows a derivation after `old` must serialise again, found without a Python pass over
    the unchanged rows (issue 17 item 5): the rows whose object is no longer the same one (the
    store's folds copy exactly what a merge touched), whose position changed, appended ones and
    the chains that went. None when the change is not of that shape (a proposition went, the
    order changed, a chain started or stopped dangling) or there is no `old`: the caller derives
    row by row."""
    if old is None:
        return None
    old_ids = props.ids
    n = len(old_ids)
    new_order = list(nodes)
    if new_order[:n] != old_ids:
        return None  # a proposition went (a deletion: chains may dangle now) or the order changed
    touched = set(compress(old_ids, map(is_not, islice(nodes.values(), n), old.nodes.values())))
    new_nodes = new_order[n:]
    gone_all = set(filterfalse(chains.__contains__, old.chains))
    if gone_all:
        keep = list(map(not_, map(gone_all.__contains__, old.chains)))
        kept = list(compress(old.chains, keep))
        kept_values: Iterable[Chain] = compress(old.chains.values(), keep)
    else:
        kept, kept_values = list(old.chains), old.chains.values()
    chain_order = list(chains)
    if chain_order[: len(kept)] != kept:
        return None
    changed_chains = set(compress(kept, map(is_not, islice(chains.values(), len(kept)), kept_values)))
    dangling = set(old.dangling - gone_all)
    for cid in [*dangling, *changed_chains]:
        if _is_live(chains[cid], nodes) != (cid not in dangling):
            return None  # a chain starts (or stops) to count in the middle of the rows
    new_chains = []
    for cid in chain_order[len(kept) :]:
        if _is_live(chains[cid], nodes):
            new_chains.append(cid)
        else:
            dangling.add(cid)
    moved = _moved(positions, old.positions)
    renamed = {nid for nid in touched if nodes[nid].name != old.nodes[nid].name}
    dirty_chains = (changed_chains | (moved & rows.index.keys())) - dangling - gone_all
    if renamed:
        dirty_chains.update(
            cid
            for cid in rows.ids
            if cid not in gone_all
            and (chains[cid].conclusion in renamed or not renamed.isdisjoint(chains[cid].premises))
        )
    groups = old.groups
    if touched or new_nodes:
        if any(_birth(nodes[nid]) != _birth(old.nodes[nid]) or nodes[nid].id != nid for nid in touched):
            groups = _groups(nodes)
        else:
            groups = dict(groups)
            for nid in new_nodes:
                node = nodes[nid]
                if node.id != nid:
                    return None
                key = _birth(node)
                groups[key] = [*groups.get(key, ()), nid]
    inputs = Inputs(dict(nodes), dict(chains), dict(positions), frozenset(dangling), groups)
    return _Plan(
        inputs,
        touched | (moved & props.index.keys()),
        new_nodes,
        dirty_chains,
        new_chains,
        gone_all & rows.index.keys(),
    )


def _moved(new: Mapping[str, tuple[float, float]], old: Mapping[str, tuple[float, float]]) -> set[str]:
    """The ids whose position changed, was added or went. The settle appends to positions.json
    and a drag replaces values in place, so the old keys are usually the new ones' prefix: then
    the values are compared in order (no hashing); else as sets of items."""
    keys = list(new)
    n = len(old)
    if keys[:n] == list(old):
        return set(compress(keys, map(ne, islice(new.values(), n), old.values()))) | set(keys[n:])
    return {k for k, _ in new.items() ^ old.items()}


def _patch(
    body: memoryview,
    old: Spans,
    dirty: Mapping[str, bytes],
    gone: set[str],
    added: list[bytes],
    added_ids: list[str],
    base: int,
) -> tuple[bytes, Spans]:
    """A run of rows patched: the old rows copied in runs between the `dirty` ones (id -> its new
    JSON) and the `gone` ones, then `added` appended. Returns (the run's bytes, its spans from
    `base`)."""
    breaks = sorted(old.index[i] for i in (*dirty, *gone))
    pieces: list[bytes | memoryview] = []
    at = 0
    for b in breaks:
        if b > at:
            start, end = old.run(at, b - 1)
            pieces.append(body[start:end])
        rid = old.ids[b]
        if rid in dirty:
            pieces.append(dirty[rid])
        at = b + 1
    if at < len(old.ids):
        start, end = old.run(at, len(old.ids) - 1)
        pieces.append(body[start:end])
    pieces.extend(added)
    lengths = old.lengths.copy()
    for rid, row in dirty.items():
        lengths[old.index[rid]] = len(row)
    ids, index = old.ids, None
    if gone:
        lengths = np.delete(lengths, [old.index[g] for g in gone])
        ids = list(filterfalse(gone.__contains__, ids))
    else:
        index = dict(old.index)
        index.update(zip(added_ids, range(len(ids), len(ids) + len(added_ids)), strict=True))
    if added:
        lengths = np.concatenate([lengths, np.fromiter(map(len, added), np.int64, len(added))])
    return b",".join(pieces), Spans.of([*ids, *added_ids], lengths, base, index)


def _fresh(rows: list[tuple[str, bytes | memoryview]], base: int) -> tuple[bytes, Spans]:
    parts = [row for _, row in rows]
    lengths = np.fromiter(map(len, parts), np.int64, len(parts))
    return b",".join(parts), Spans.of([rid for rid, _ in rows], lengths, base)


def _inputs(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    groups: dict[str, list[str]],
) -> Inputs:
    dangling = frozenset(cid for cid, chain in chains.items() if not _is_live(chain, nodes))
    return Inputs(dict(nodes), dict(chains), dict(positions), dangling, groups)


@dataclass(frozen=True)
class ViewRows:
    """A derived view's rows as spans of its body, with what they were derived from, so the next
    derivation reuses every row whose inputs are unchanged (`view_bytes`). Never mutated: each
    derivation returns a new one (safe to share between the loop and a worker thread).

    Attributes:
        body: the view's JSON.
        props, chains: the proposition and implication rows (spans of `body`).
        links: each live chain's links (its link objects joined by commas), by chain id.
        inputs: what the rows were derived from.
        rebuilt: the ids whose rows this derivation serialised (not reused).
    """

    body: bytes = b""
    props: Spans = field(default_factory=Spans)
    chains: Spans = field(default_factory=Spans)
    links: Spans = field(default_factory=Spans)
    inputs: Inputs = field(default_factory=Inputs)
    rebuilt: frozenset[str] = frozenset()


def view_bytes(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    labels: Mapping[str, tuple[str, str | None]],
    previous: ViewRows | None = None,
    paths: Mapping[str, str | None] | None = None,
) -> tuple[bytes, ViewRows]:
    """`orjson.dumps(derive_view(...))`, byte for byte, re-deriving and re-serialising only the
    rows whose inputs changed since `previous` (issue 17, item 5: after a merge, the view is
    patched where the merge touched it); reused rows are copied from `previous.body` in runs.

    A proposition row is reused when its Proposition is the same object (the store's folds copy
    exactly the propositions a merge touched, so identity means unchanged; folds are read-only by
    contract) and its position is equal; a chain row when its Chain is the same object, no
    member's name changed and its position is equal. After a merge (objects copied or appended,
    chains appended or dropped) the changed rows are found with C loops (`_plan`), so the cost is
    that of the touched rows plus copying the body; otherwise (a proposition deleted, the order
    changed) row by row.

    Returns:
        (the view's JSON, the rows to pass as `previous` next time).
    """
    old = previous or ViewRows()
    was = memoryview(old.body)
    plan = _plan(nodes, chains, positions, None if previous is None else old.inputs, old.props, old.chains)
    if plan is None:
        groups = _groups(nodes)
        inputs = _inputs(nodes, chains, positions, groups)
        prop_rows, chain_rows, link_rows, rebuilt = _view_rows_one_by_one(
            nodes, chains, positions, old, was, inputs
        )
        props, props_spans = _fresh(prop_rows, len(_NODES_OPEN))
        chains_base = len(_NODES_OPEN) + len(props) + (1 if props else 0)
        rows, chain_spans = _fresh(chain_rows, chains_base)
        links, link_spans = _fresh(link_rows, _links_base(props, rows))
    else:
        inputs = plan.inputs
        dirty = {
            nid: orjson.dumps(_node_row(nodes[nid], _birth(nodes[nid]), positions)) for nid in plan.nodes
        }
        added = [orjson.dumps(_node_row(nodes[nid], _birth(nodes[nid]), positions)) for nid in plan.new_nodes]
        props, props_spans = _patch(was, old.props, dirty, set(), added, plan.new_nodes, len(_NODES_OPEN))
        chains_base = len(_NODES_OPEN) + len(props) + (1 if props else 0)
        dirty_rows = {cid: orjson.dumps(_chain_row(chains[cid], nodes, positions)) for cid in plan.chains}
        added_rows = [orjson.dumps(_chain_row(chains[cid], nodes, positions)) for cid in plan.new_chains]
        rows, chain_spans = _patch(
            was, old.chains, dirty_rows, plan.gone, added_rows, plan.new_chains, chains_base
        )
        changed_links = {cid: orjson.dumps(_chain_links(chains[cid]))[1:-1] for cid in plan.chains}
        added_links = [orjson.dumps(_chain_links(chains[cid]))[1:-1] for cid in plan.new_chains]
        links, link_spans = _patch(
            was, old.links, changed_links, plan.gone, added_links, plan.new_chains, _links_base(props, rows)
        )
        rebuilt = frozenset((*plan.nodes, *plan.new_nodes, *plan.chains, *plan.new_chains))
    partition = _partition(inputs.groups)
    folder_of, folders = _folders(partition, paths)
    body = b"".join(
        [
            _NODES_OPEN,
            props,
            b"," if props and rows else b"",
            rows,
            _LINKS_OPEN,
            links,
            b'],"clusters":',
            orjson.dumps(_cluster_rows(partition, labels, folder_of)),
            b',"folders":',
            orjson.dumps(folders),
            b"}",
        ]
    )
    return body, ViewRows(body, props_spans, chain_spans, link_spans, inputs, rebuilt)


def _links_base(props: bytes, rows: bytes) -> int:
    """Where the links start in the full view's body: after the proposition and chain rows."""
    return len(_NODES_OPEN) + len(props) + (1 if props and rows else 0) + len(rows) + len(_LINKS_OPEN)


def _view_rows_one_by_one(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    old: ViewRows,
    was: memoryview,
    inputs: Inputs,
) -> tuple[
    list[tuple[str, bytes | memoryview]],
    list[tuple[str, bytes | memoryview]],
    list[tuple[str, bytes | memoryview]],
    frozenset[str],
]:
    """`view_bytes`'s rows derived one by one, each reused from `old` when its inputs are the
    same objects (and its members' names unchanged, for a chain) and its position equal."""
    before = old.inputs
    prop_rows: list[tuple[str, bytes | memoryview]] = []
    renamed: set[str] = set()
    rebuilt: set[str] = set()
    for nid, node in nodes.items():
        span = old.props.span(nid)
        was_node = before.nodes.get(nid)
        if was_node is not node:
            if was_node is None or was_node.name != node.name:
                renamed.add(nid)
            span = None
        elif before.positions.get(nid) != positions.get(nid):
            span = None
        if span is None:
            rebuilt.add(nid)
            prop_rows.append((nid, orjson.dumps(_node_row(node, _birth(node), positions))))
        else:
            prop_rows.append((nid, was[span[0] : span[1]]))
    chain_rows: list[tuple[str, bytes | memoryview]] = []
    link_rows: list[tuple[str, bytes | memoryview]] = []
    for cid, chain in chains.items():
        if cid in inputs.dangling:
            continue
        span, links = old.chains.span(cid), old.links.span(cid)
        if (
            span is None
            or links is None
            or before.chains.get(cid) is not chain
            or before.positions.get(cid) != positions.get(cid)
            or chain.conclusion in renamed
            or not renamed.isdisjoint(chain.premises)
        ):
            rebuilt.add(cid)
            chain_rows.append((cid, orjson.dumps(_chain_row(chain, nodes, positions))))
            link_rows.append((cid, orjson.dumps(_chain_links(chain))[1:-1]))
        else:
            chain_rows.append((cid, was[span[0] : span[1]]))
            link_rows.append((cid, was[links[0] : links[1]]))
    return prop_rows, chain_rows, link_rows, frozenset(rebuilt)


COMPACT_FORMAT = "lh-graph-compact/1"
"""The compact view's `format` (issue 17 item 5): what `GET /api/graph?format=compact` serves."""


@dataclass(frozen=True)
class CompactRows:
    """A compact view's rows as spans of its body (`compact_bytes`), with what they were derived
    from, so the next derivation reuses unchanged rows and a delta (`compact_delta`) copies
    changed rows out of the body. Never mutated.

    Attributes:
        body: the compact view's JSON.
        props, chains: the rows (spans of `body`).
        inputs: what the rows were derived from.
        tail: (start, end) of `"clusters":[...],"folders":[...]` in `body`.
        changed: the ids whose rows were serialised again or dropped since `previous`; None when
            there was no `previous` (everything is new).
    """

    body: bytes = b""
    props: Spans = field(default_factory=Spans)
    chains: Spans = field(default_factory=Spans)
    inputs: Inputs = field(default_factory=Inputs)
    tail: tuple[int, int] = (0, 0)
    changed: frozenset[str] | None = None

    def span(self, rid: str) -> tuple[int, int] | None:
        """(start, end) of the row of `rid` (a proposition or a chain), None when it has none."""
        return self.props.span(rid) or self.chains.span(rid)


def _compact_node(node: Proposition, cluster: str | None, place: tuple[float, float] | None) -> bytes:
    row: list[Any] = [
        node.id,
        node.name,
        node.statement,
        node.aliases,
        cluster,
        0 if node.sources == [cluster] else node.sources,
        node.created_at,
    ]
    if place is not None:
        row.extend((round(place[0], 2), round(place[1], 2)))
    return orjson.dumps(row)


def _compact_chain(chain: Chain, place: tuple[float, float] | None) -> bytes:
    row: list[Any] = [chain.id, chain.premises, chain.conclusion, chain.sources, chain.created_at]
    if place is not None:
        row.extend((round(place[0], 2), round(place[1], 2)))
    return orjson.dumps(row)


def _compact_head(version: str, since: str | None = None) -> bytes:
    head = {"format": COMPACT_FORMAT, "version": version}
    if since is not None:
        head["since"] = since
    return orjson.dumps(head)[:-1] + (b',"full":false' if since is not None else b',"full":true')


def compact_bytes(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    labels: Mapping[str, tuple[str, str | None]],
    version: str,
    previous: CompactRows | None = None,
    paths: Mapping[str, str | None] | None = None,
) -> tuple[bytes, CompactRows]:
    """The compact view (issue 17 item 5): the same information as `derive_view` in about a
    quarter of the bytes, re-serialising only rows whose inputs changed since `previous` (as
    `view_bytes`; a row whose input is a new but equal object, as after a deletion re-folds the
    ledgers, is reused too: the compact rows carry no member names, so only equality counts).

    Shape: `{"format": COMPACT_FORMAT, "version", "full": true, "props": [[id, name, statement,
    aliases, cluster|null, sources, createdAt, x?, y?]], "chains": [[id, premises, conclusion,
    sources, createdAt, x?, y?]], "clusters": [{key, kind, label, nodeCount, folder}],
    "folders": [...]}`. Positions are the row's last two items (absent when unplaced), rounded to
    0.01 (a hundredth of a pixel at zoom 1); a proposition's sources are `0` when they are
    exactly `[cluster]` (one source, the common case). What the full view repeats is left out,
    the reader derives it: an implication's statement (its members' names, `chain_line`), the
    links (premise -> chain -> conclusion), a cluster's `nodeIds` (the props naming it, in row
    order). Dangling chains are left out, as in the full view.

    Returns:
        (the body, the rows to pass as `previous` next time).
    """
    old = previous or CompactRows()
    was = memoryview(old.body)
    before = old.inputs
    head = _compact_head(version) + b',"props":['
    plan = _plan(nodes, chains, positions, None if previous is None else before, old.props, old.chains)
    changed: set[str] = set()
    if plan is None:
        inputs = _inputs(nodes, chains, positions, _groups(nodes))
        prop_rows: list[tuple[str, bytes | memoryview]] = []
        for nid, node in nodes.items():
            place, span = positions.get(nid), old.props.span(nid)
            hit = before.nodes.get(nid)
            if span is None or (hit is not node and hit != node) or before.positions.get(nid) != place:
                changed.add(nid)
                prop_rows.append((nid, _compact_node(node, _birth(node), place)))
            else:
                prop_rows.append((nid, was[span[0] : span[1]]))
        chain_rows: list[tuple[str, bytes | memoryview]] = []
        for cid, chain in chains.items():
            if cid in inputs.dangling:
                continue
            place, span = positions.get(cid), old.chains.span(cid)
            hit_chain = before.chains.get(cid)
            if (
                span is None
                or (hit_chain is not chain and hit_chain != chain)
                or before.positions.get(cid) != place
            ):
                changed.add(cid)
                chain_rows.append((cid, _compact_chain(chain, place)))
            else:
                chain_rows.append((cid, was[span[0] : span[1]]))
        props, props_spans = _fresh(prop_rows, len(head))
        chains_base = len(head) + len(props) + len(b'],"chains":[')
        rows, chain_spans = _fresh(chain_rows, chains_base)
        changed.update(old.props.index.keys() - props_spans.index.keys())  # removed (C set difference)
        changed.update(old.chains.index.keys() - chain_spans.index.keys())
    else:
        inputs = plan.inputs
        dirty = {
            nid: _compact_node(nodes[nid], _birth(nodes[nid]), positions.get(nid))
            for nid in plan.nodes
            if before.nodes[nid] != nodes[nid] or before.positions.get(nid) != positions.get(nid)
        }
        added = [_compact_node(nodes[nid], _birth(nodes[nid]), positions.get(nid)) for nid in plan.new_nodes]
        props, props_spans = _patch(was, old.props, dirty, set(), added, plan.new_nodes, len(head))
        dirty_rows = {
            cid: _compact_chain(chains[cid], positions.get(cid))
            for cid in plan.chains
            if before.chains[cid] != chains[cid] or before.positions.get(cid) != positions.get(cid)
        }
        added_rows = [_compact_chain(chains[cid], positions.get(cid)) for cid in plan.new_chains]
        chains_base = len(head) + len(props) + len(b'],"chains":[')
        rows, chain_spans = _patch(
            was, old.chains, dirty_rows, plan.gone, added_rows, plan.new_chains, chains_base
        )
        changed.update(dirty, plan.new_nodes, dirty_rows, plan.new_chains, plan.gone)
    partition = _partition(inputs.groups)
    folder_of, folders = _folders(partition, paths)
    tail = _compact_tail(_cluster_rows(partition, labels, folder_of), folders)
    body = b"".join([head, props, b'],"chains":[', rows, b"],", tail, b"}"])
    tail_start = chains_base + len(rows) + 2
    return body, CompactRows(
        body,
        props_spans,
        chain_spans,
        inputs,
        (tail_start, tail_start + len(tail)),
        None if previous is None else frozenset(changed),
    )


def _compact_tail(cluster_rows: list[dict[str, Any]], folders: list[dict[str, object]]) -> bytes:
    slim = [{k: v for k, v in row.items() if k != "nodeIds"} for row in cluster_rows]
    return b'"clusters":' + orjson.dumps(slim) + b',"folders":' + orjson.dumps(folders)


def compact_delta(rows: CompactRows, changed: set[str] | frozenset[str], version: str, since: str) -> bytes:
    """What changed in the compact view since the version `since`, given the ids whose rows
    changed or went (`changed`, the union of `CompactRows.changed` over the derivations after
    `since`): `{"format", "version", "since", "full": false, "props": [changed or added rows],
    "chains": [...], "removed": [ids no longer in the view], "clusters", "folders"}` (rows as in
    `compact_bytes`; clusters and folders whole, they are small). Applying it to the view at
    `since` gives the view at `version`: a changed row replaces the row of its id (a new id is
    appended), removed ids drop."""
    body = memoryview(rows.body)
    # in view order (where each row sits in the body), so appended rows keep the view's order
    prop_spans = sorted(span for i in changed if (span := rows.props.span(i)) is not None)
    chain_spans = sorted(span for i in changed if (span := rows.chains.span(i)) is not None)
    props = [body[a:b] for a, b in prop_spans]
    chains = [body[a:b] for a, b in chain_spans]
    removed = sorted(i for i in changed if i not in rows.props.index and i not in rows.chains.index)
    return b"".join(
        [
            _compact_head(version, since),
            b',"props":[',
            b",".join(props),
            b'],"chains":[',
            b",".join(chains),
            b'],"removed":',
            orjson.dumps(removed),
            b",",
            body[rows.tail[0] : rows.tail[1]],
            b"}",
        ]
    )


def _place(row: dict[str, Any], positions: Mapping[str, tuple[float, float]]) -> None:
    if row["id"] in positions:
        row["x"], row["y"] = positions[row["id"]]


def deletion(
    nodes: Mapping[str, Proposition], chains: Mapping[str, Chain], ids: set[str]
) -> tuple[set[str], set[str]]:
    """Full death (seed §6): the propositions to delete and the chains that die with them.

    A proposition id kills itself and every chain that references it (premise or conclusion); an
    implication (`arg_`) id kills exactly that chain. Unknown ids are ignored.

    Returns:
        (proposition ids, chain ids) to remove.
    """
    dead_nodes = {i for i in ids if i in nodes}
    dead_chains = {i for i in ids if i in chains}
    for chain in chains.values():
        if chain.conclusion in dead_nodes or any(p in dead_nodes for p in chain.premises):
            dead_chains.add(chain.id)
    return dead_nodes, dead_chains
