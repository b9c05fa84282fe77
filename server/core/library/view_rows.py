"""The full graph view as bytes (`view_bytes`), patched row by row from the previous view
(`ViewRows`, `Spans`) instead of derived whole: what `GET /api/graph` serves (seed §6). Slightly
past 400 lines: the patch plan and the row-by-row fallback are the two halves of one byte-exact
answer (`view_bytes`), checked against each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress, filterfalse, islice
from operator import is_not, ne, not_

import numpy as np
import numpy.typing as npt
import orjson

from server.core.contracts.graph import Chain, Proposition
from server.core.library.view_derive import (
    _chain_links,
    _chain_row,
    _cluster_rows,
    _folders,
    _node_row,
)

_NODES_OPEN = b'{"nodes":['


def row_bytes(value: object) -> bytes:
    """`orjson.dumps(value)` in a bytes object of its own size. orjson serialises into a buffer of
    a few KB and shrinks it in place, so every row held until the rows are joined pinned ~4 KB of
    heap (glibc cannot reuse the hole behind a shrunk block for the next row's buffer): 200,000
    compact rows took 817 MB of RSS for 25 MB of JSON, and the 100k graph's derivations peaked at
    1.2-1.6 GB. Copied out, the buffer is freed at once and reused by the next row: 33 MB (issue
    28 item 3; orjson 3.13, glibc)."""
    return bytes(memoryview(orjson.dumps(value)))


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
        dirty = {nid: row_bytes(_node_row(nodes[nid], _birth(nodes[nid]), positions)) for nid in plan.nodes}
        added = [row_bytes(_node_row(nodes[nid], _birth(nodes[nid]), positions)) for nid in plan.new_nodes]
        props, props_spans = _patch(was, old.props, dirty, set(), added, plan.new_nodes, len(_NODES_OPEN))
        chains_base = len(_NODES_OPEN) + len(props) + (1 if props else 0)
        dirty_rows = {cid: row_bytes(_chain_row(chains[cid], nodes, positions)) for cid in plan.chains}
        added_rows = [row_bytes(_chain_row(chains[cid], nodes, positions)) for cid in plan.new_chains]
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
            prop_rows.append((nid, row_bytes(_node_row(node, _birth(node), positions))))
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
            chain_rows.append((cid, row_bytes(_chain_row(chain, nodes, positions))))
            link_rows.append((cid, orjson.dumps(_chain_links(chain))[1:-1]))
        else:
            chain_rows.append((cid, was[span[0] : span[1]]))
            link_rows.append((cid, was[links[0] : links[1]]))
    return prop_rows, chain_rows, link_rows, frozenset(rebuilt)
