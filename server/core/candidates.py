"""Candidate existing nodes for each extracted proposition, for the auditor to judge (seed §6).

Exact and alias matches first (case-insensitive), then fuzzy matches on name + statement
(rapidfuzz's WRatio, score >= 60), at most `limit` per proposition. Embeddings are not used here
(no embedding model ships with the app).
"""

from __future__ import annotations

from collections.abc import Mapping

from rapidfuzz import fuzz, process

from server.core.contracts.graph import FindingProposition, Proposition

FUZZY_CUTOFF = 60.0


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def candidates(
    findings: list[FindingProposition], nodes: Mapping[str, Proposition], limit: int = 5
) -> dict[str, list[str]]:
    """finding id -> existing node ids, best first (exact/alias matches, then fuzzy)."""
    by_name: dict[str, list[str]] = {}
    for node in nodes.values():
        for name in [node.name, *node.aliases]:
            by_name.setdefault(_key(name), []).append(node.id)
    choices = {node.id: f"{node.name}. {node.statement}" for node in nodes.values()}
    out: dict[str, list[str]] = {}
    for finding in findings:
        found: list[str] = []
        for name in [finding.name, *finding.aliases]:
            for node_id in by_name.get(_key(name), []):
                if node_id not in found:
                    found.append(node_id)
        if choices and len(found) < limit:
            query = f"{finding.name}. {finding.statement}"
            for _, score, node_id in process.extract(query, choices, scorer=fuzz.WRatio, limit=limit * 2):
                if score >= FUZZY_CUTOFF and node_id not in found:
                    found.append(node_id)
        out[finding.id] = found[:limit]
    return out


def search(query: str, nodes: Mapping[str, Proposition], limit: int = 8) -> list[str]:
    """Node ids whose name, aliases or statement fuzzily match `query`, best first."""
    choices = {n.id: " ".join([n.name, *n.aliases, n.statement]) for n in nodes.values()}
    if not choices or not query.strip():
        return []
    hits = process.extract(query, choices, scorer=fuzz.WRatio, limit=limit)
    return [node_id for _, score, node_id in hits if score >= FUZZY_CUTOFF / 2]
