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
from dataclasses import dataclass, field
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
    return derive_view_patched(nodes, chains, positions, labels)[0]


@dataclass(frozen=True)
class ViewRows:
    """The rows of a derived view with what each was derived from, so the next derivation reuses
    every row whose inputs are the same objects (`derive_view_patched`). Never mutated: a
    derivation returns a new one (safe to share between the loop and a worker thread).

    Attributes:
        nodes: proposition id -> (the Proposition the row came from, its position, the row).
        chains: chain id -> (the Chain, its members' Propositions, its position, the row, its links).
    """

    nodes: dict[str, tuple[Proposition, tuple[float, float] | None, dict[str, Any]]] = field(
        default_factory=dict
    )
    chains: dict[
        str,
        tuple[
            Chain, tuple[Proposition, ...], tuple[float, float] | None, dict[str, Any], list[dict[str, str]]
        ],
    ] = field(default_factory=dict)


def derive_view_patched(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    positions: Mapping[str, tuple[float, float]],
    labels: Mapping[str, tuple[str, str | None]],
    previous: ViewRows | None = None,
) -> tuple[dict[str, Any], ViewRows]:
    """`derive_view`, reusing the rows of `previous` whose inputs did not change (issue 17,
    item 5: the first read after a merge patches the rows the merge touched).

    A proposition row is reused when its Proposition is the same object (the store's folds copy
    exactly the propositions a merge touched, so identity means unchanged), its cluster and its
    position are equal; a chain row when its Chain and every member's Proposition are the same
    objects (the statement is made of their names) and its position is equal. Everything else is
    derived again, so the result always equals `derive_view` of the same inputs (the rows may be
    shared with the previous view: treat them as read-only).

    Returns:
        (the view, the rows to pass as `previous` next time).
    """
    old = previous or ViewRows()
    cluster_of = {nid: key for key, ids in birth_partition(nodes) for nid in ids}
    memo = ViewRows()
    out_nodes: list[dict[str, Any]] = []
    for node in nodes.values():
        place = positions.get(node.id)
        cluster = cluster_of.get(node.id)
        hit = old.nodes.get(node.id)
        if hit is not None and hit[0] is node and hit[1] == place and hit[2]["cluster"] == cluster:
            row = hit[2]
        else:
            row = {
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
        memo.nodes[node.id] = (node, place, row)
        out_nodes.append(row)
    links: list[dict[str, str]] = []
    for chain in live_chains(nodes, chains):
        members = (*(nodes[p] for p in chain.premises), nodes[chain.conclusion])
        place = positions.get(chain.id)
        was = old.chains.get(chain.id)
        if (
            was is not None
            and was[0] is chain
            and was[2] == place
            and len(was[1]) == len(members)
            and all(a is b for a, b in zip(was[1], members, strict=True))
        ):
            row, own = was[3], was[4]
        else:
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
            own = [{"source": p, "target": chain.id} for p in chain.premises]
            own.append({"source": chain.id, "target": chain.conclusion})
        memo.chains[chain.id] = (chain, members, place, row, own)
        out_nodes.append(row)
        links.extend(own)
    return {"nodes": out_nodes, "links": links, "clusters": clusters(nodes, labels)}, memo


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
