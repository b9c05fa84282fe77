"""The compact graph view (issue 17 item 5): `GET /api/graph?format=compact`, the rows without
what the reader derives, and its deltas since a version (`compact_delta`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from server.core.contracts.graph import Chain, Proposition
from server.core.library.view_derive import (
    _cluster_rows,
    _folders,
)
from server.core.library.view_rows import (
    Inputs,
    Spans,
    _birth,
    _fresh,
    _groups,
    _inputs,
    _partition,
    _patch,
    _plan,
    row_bytes,
)

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
    return row_bytes(row)


def _compact_chain(chain: Chain, place: tuple[float, float] | None) -> bytes:
    row: list[Any] = [chain.id, chain.premises, chain.conclusion, chain.sources, chain.created_at]
    if place is not None:
        row.extend((round(place[0], 2), round(place[1], 2)))
    return row_bytes(row)


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
