"""The graph's read channel: a pure derivation of what the home page shows (seed §6, §7).

Stored truth is propositions and reasoning chains; the view is a lossy derived image of it: each
chain becomes an implication node (id = its `arg_` id, name `⟹`, statement = the chain line) with
arrows premise → implication → conclusion, so two independent arguments for one conclusion stay
two diamonds. A chain with a member that no longer exists is dropped from the view. Clusters are
the birth-session partition of the propositions (a proposition's birth session is its first
source); implication nodes are not clustered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from server.core.contracts.graph import Chain, Proposition

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
    nodes: Mapping[str, Proposition], labels: Mapping[str, tuple[str, str | None]]
) -> list[dict[str, Any]]:
    """`GET /api/graph/clusters` rows: `{key, kind, label, nodeIds, nodeCount}`.

    Args:
        nodes: the propositions.
        labels: session id -> (kind "chat" | "notes", label); a session missing here (its naming
            record is gone) keeps `label: null` and its kind from its id shape.
    """
    out = []
    for key, ids in birth_partition(nodes):
        kind, label = labels.get(key, ("notes" if key.startswith("src_") else "chat", None))
        out.append({"key": key, "kind": kind, "label": label, "nodeIds": ids, "nodeCount": len(ids)})
    return out


def derive_view(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    labels: Mapping[str, tuple[str, str | None]],
) -> dict[str, Any]:
    """The home view: `{nodes, links, clusters}`.

    nodes: `{id, kind: "proposition"|"implication", name, statement, cluster|null, sources,
    createdAt, x?, y?}`; links: `{source, target}` (premise → implication → conclusion);
    clusters: as `clusters()`.
    """
    cluster_of = {nid: key for key, ids in birth_partition(nodes) for nid in ids}
    out_nodes: list[dict[str, Any]] = []
    for node in nodes.values():
        row: dict[str, Any] = {
            "id": node.id,
            "kind": "proposition",
            "name": node.name,
            "statement": node.statement,
            "aliases": node.aliases,
            "cluster": cluster_of.get(node.id),
            "sources": node.sources,
            "createdAt": node.created_at,
        }
        _place(row, positions)
        out_nodes.append(row)
    links: list[dict[str, str]] = []
    for chain in live_chains(nodes, chains):
        row = {
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
        out_nodes.append(row)
        links.extend({"source": p, "target": chain.id} for p in chain.premises)
        links.append({"source": chain.id, "target": chain.conclusion})
    return {"nodes": out_nodes, "links": links, "clusters": clusters(nodes, labels)}


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
