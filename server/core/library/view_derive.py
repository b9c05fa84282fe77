"""The graph view's derivation (seed §6, §7): the rows of what the home page shows, pure.

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
from typing import Any

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
