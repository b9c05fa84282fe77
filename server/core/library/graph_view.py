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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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


_NodeMemo = tuple[Proposition, "tuple[float, float] | None", "str | None", int, int]
_ChainMemo = tuple[Chain, "tuple[float, float] | None", int, int, int, int]
_NODES_OPEN = b'{"nodes":['
_LINKS_OPEN = b'],"links":['


@dataclass(frozen=True)
class ViewRows:
    """A derived view's rows, each with what it was derived from, so the next derivation reuses
    every row whose inputs are unchanged (`view_bytes`). A row's JSON is not kept apart: it is
    the span `body[start:end]` of the view's JSON (keeping each row's bytes too held the view
    twice, issue 16's RSS after an import). Never mutated: each derivation returns a new one
    (safe to share between the loop and a worker thread).

    Attributes:
        body: the view's JSON these rows are spans of.
        nodes: proposition id -> (its Proposition, position, cluster, its row's start, end).
        chains: chain id -> (its Chain, position, its row's start, end, its links' start, end:
            the links' JSON objects joined by commas).
        rebuilt: the ids whose rows this derivation serialised (not reused).
    """

    body: bytes = b""
    nodes: dict[str, _NodeMemo] = field(default_factory=dict)
    chains: dict[str, _ChainMemo] = field(default_factory=dict)
    rebuilt: frozenset[str] = frozenset()


def _spans(start: int, parts: list[bytes | memoryview]) -> tuple[list[int], int]:
    """The offsets of `parts` joined by commas from `start`, and where the joined run ends."""
    offsets = []
    at = start
    for part in parts:
        offsets.append(at)
        at += len(part) + 1
    return offsets, (at - 1 if parts else start)


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
    patched where the merge touched it); a reused row is copied from `previous.body`.

    A proposition row is reused when its Proposition is the same object (the store's folds copy
    exactly the propositions a merge touched, so identity means unchanged; folds are read-only by
    contract) and its cluster and position are equal; a chain row when its Chain and every
    member's Proposition is the same object as before (its statement is made of their names) and
    its position is equal.

    Returns:
        (the view's JSON, the rows to pass as `previous` next time).
    """
    old = previous or ViewRows()
    old_nodes, old_chains = old.nodes, old.chains
    was_body = memoryview(old.body)
    partition = birth_partition(nodes)
    cluster_of = {nid: key for key, ids in partition for nid in ids}
    folder_of, folders = _folders(partition, paths)
    parts: list[bytes | memoryview] = []
    node_keys: list[tuple[str, Proposition, tuple[float, float] | None, str | None]] = []
    renamed: set[str] = set()  # propositions whose object changed or is new: their chains re-derive
    rebuilt: set[str] = set()
    for nid, node in nodes.items():
        place = positions.get(nid)
        cluster = cluster_of.get(nid)
        hit = old_nodes.get(nid)
        if hit is None or hit[0] is not node:
            renamed.add(nid)
            hit = None
        elif hit[1] != place or hit[2] != cluster:
            hit = None
        if hit is None:
            rebuilt.add(nid)
            parts.append(orjson.dumps(_node_row(node, cluster, positions)))
        else:
            parts.append(was_body[hit[3] : hit[4]])
        node_keys.append((nid, node, place, cluster))
    link_parts: list[bytes | memoryview] = []
    chain_keys: list[tuple[str, Chain, tuple[float, float] | None]] = []
    for cid, chain in chains.items():
        conclusion, premises = chain.conclusion, chain.premises
        if conclusion not in nodes or not all(map(nodes.__contains__, premises)):
            continue  # dangling: not in the view (`live_chains`)
        place = positions.get(cid)
        was = old_chains.get(cid)
        if (
            was is None
            or was[0] is not chain
            or was[1] != place
            or conclusion in renamed
            or not renamed.isdisjoint(premises)
        ):
            rebuilt.add(cid)
            parts.append(orjson.dumps(_chain_row(chain, nodes, positions)))
            link_parts.append(orjson.dumps(_chain_links(chain))[1:-1])
        else:
            parts.append(was_body[was[2] : was[3]])
            link_parts.append(was_body[was[4] : was[5]])
        chain_keys.append((cid, chain, place))
    starts, rows_end = _spans(len(_NODES_OPEN), parts)
    link_starts, _ = _spans(rows_end + len(_LINKS_OPEN), link_parts)
    body = b"".join(
        [
            _NODES_OPEN,
            b",".join(parts),
            _LINKS_OPEN,
            b",".join(link_parts),
            b'],"clusters":',
            orjson.dumps(_cluster_rows(partition, labels, folder_of)),
            b',"folders":',
            orjson.dumps(folders),
            b"}",
        ]
    )
    memo = ViewRows(body=body, rebuilt=frozenset(rebuilt))
    for (nid, node, place, cluster), start, part in zip(node_keys, starts, parts, strict=False):
        memo.nodes[nid] = (node, place, cluster, start, start + len(part))
    shift = len(node_keys)
    for i, (cid, chain, place) in enumerate(chain_keys):
        start, link_start = starts[shift + i], link_starts[i]
        memo.chains[cid] = (
            chain,
            place,
            start,
            start + len(parts[shift + i]),
            link_start,
            link_start + len(link_parts[i]),
        )
    return body, memo


COMPACT_FORMAT = "lh-graph-compact/1"
"""The compact view's `format` (issue 17 item 5): what `GET /api/graph?format=compact` serves."""


@dataclass(frozen=True)
class CompactRows:
    """A compact view's rows as spans of its body (`compact_bytes`), with what each row was
    derived from, so the next derivation reuses unchanged rows and a delta (`compact_delta`)
    copies changed rows out of the body. Never mutated.

    Attributes:
        body: the compact view's JSON.
        nodes: proposition id -> (its Proposition, position, cluster, row start, row end).
        chains: chain id -> (its Chain, position, row start, row end).
        tail: (start, end) of `"clusters":[...],"folders":[...]` in `body`.
        changed: the ids whose rows were serialised again or dropped since `previous`; None when
            there was no `previous` (everything is new).
    """

    body: bytes = b""
    nodes: dict[str, _NodeMemo] = field(default_factory=dict)
    chains: dict[str, tuple[Chain, tuple[float, float] | None, int, int]] = field(default_factory=dict)
    tail: tuple[int, int] = (0, 0)
    changed: frozenset[str] | None = None


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
    was_body = memoryview(old.body)
    partition = birth_partition(nodes)
    cluster_of = {nid: key for key, ids in partition for nid in ids}
    folder_of, folders = _folders(partition, paths)
    changed: set[str] = set()
    head = _compact_head(version) + b',"props":['
    props: list[bytes | memoryview] = []
    node_keys = []
    for nid, node in nodes.items():
        place = positions.get(nid)
        cluster = cluster_of.get(nid)
        hit = old.nodes.get(nid)
        if hit is None or (hit[0] is not node and hit[0] != node) or hit[1] != place or hit[2] != cluster:
            changed.add(nid)
            props.append(_compact_node(node, cluster, place))
        else:
            props.append(was_body[hit[3] : hit[4]])
        node_keys.append((nid, node, place, cluster))
    rows: list[bytes | memoryview] = []
    chain_keys = []
    for cid, chain in chains.items():
        if chain.conclusion not in nodes or not all(map(nodes.__contains__, chain.premises)):
            continue
        place = positions.get(cid)
        was = old.chains.get(cid)
        if was is None or (was[0] is not chain and was[0] != chain) or was[1] != place:
            changed.add(cid)
            rows.append(_compact_chain(chain, place))
        else:
            rows.append(was_body[was[2] : was[3]])
        chain_keys.append((cid, chain, place))
    starts, props_end = _spans(len(head), props)
    chain_starts, chains_end = _spans(props_end + len(b'],"chains":['), rows)
    tail = _compact_tail(_cluster_rows(partition, labels, folder_of), folders)
    body = b"".join([head, b",".join(props), b'],"chains":[', b",".join(rows), b"],", tail, b"}"])
    tail_start = chains_end + 2
    memo = CompactRows(body=body, tail=(tail_start, tail_start + len(tail)))
    for (nid, node, place, cluster), start, part in zip(node_keys, starts, props, strict=True):
        memo.nodes[nid] = (node, place, cluster, start, start + len(part))
    for (cid, chain, place), start, part in zip(chain_keys, chain_starts, rows, strict=True):
        memo.chains[cid] = (chain, place, start, start + len(part))
    if previous is not None:
        changed.update(old.nodes.keys() - memo.nodes.keys())  # removed (a set difference in C)
        changed.update(old.chains.keys() - memo.chains.keys())
    return body, CompactRows(
        memo.body, memo.nodes, memo.chains, memo.tail, None if previous is None else frozenset(changed)
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
    prop_spans = sorted(rows.nodes[i][3:5] for i in changed if i in rows.nodes)
    chain_spans = sorted(rows.chains[i][2:4] for i in changed if i in rows.chains)
    props = [body[a:b] for a, b in prop_spans]
    chains = [body[a:b] for a, b in chain_spans]
    removed = sorted(i for i in changed if i not in rows.nodes and i not in rows.chains)
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
