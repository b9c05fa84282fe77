"""A synthetic graph for layout tests and benchmarks: propositions in birth sessions of uneven size,
chains mostly inside a session and sometimes across to a neighbouring session (as the auditor's
links and cross-source chains do)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SyntheticGraph:
    ids: list[str]
    """Propositions then implication (chain) nodes."""
    links: list[tuple[str, str]]
    """premise -> chain, chain -> conclusion."""
    groups: dict[str, str]
    """proposition id -> birth session (chain nodes have none)."""


def synthetic_graph(
    propositions: int, sessions: int, seed: int = 7, cross: float = 0.1, prefix: str = ""
) -> SyntheticGraph:
    """`propositions` nodes in `sessions` sessions (sizes drawn from a lognormal, each ≥ 1), about
    0.6 chains per proposition, `cross` of them reaching a proposition of a nearby session.
    Deterministic for a seed. `prefix` keeps ids of two graphs apart."""
    rng = np.random.default_rng(seed)
    weights = rng.lognormal(0.0, 1.0, sessions)
    sizes = np.maximum(1, np.floor(weights / weights.sum() * (propositions - sessions)).astype(int) + 1)
    sizes[0] += propositions - int(sizes.sum())
    groups: dict[str, str] = {}
    members: list[list[str]] = []
    n = 0
    for s, size in enumerate(sizes.tolist()):
        ids = [f"{prefix}p{n + k}" for k in range(size)]
        n += size
        members.append(ids)
        groups.update({i: f"{prefix}s{s}" for i in ids})
    links: list[tuple[str, str]] = []
    chain_ids: list[str] = []
    for s, ids in enumerate(members):
        for c in range(int(len(ids) * 0.6)):
            chain = f"{prefix}a{s}_{c}"
            chain_ids.append(chain)
            home = ids
            if rng.random() < cross and sessions > 1:
                other = members[(s + int(rng.integers(1, 4))) % sessions]
                home = ids + other
            picks = rng.choice(len(home), size=min(3, len(home)), replace=False).tolist()
            *premises, conclusion = [home[p] for p in picks] if len(picks) > 1 else [home[picks[0]]] * 2
            links.extend((p, chain) for p in premises)
            links.append((chain, conclusion))
    return SyntheticGraph([*groups, *chain_ids], links, groups)


def synthetic_vault(
    folders: int, notes: int, per_note: float = 2.3, seed: int = 7, prefix: str = ""
) -> tuple[SyntheticGraph, dict[str, str]]:
    """A vault of `folders` × `notes` note files (sessions), about `per_note` propositions each
    (the imported real vault: 2,719 nodes from ~1,200 notes), chains as `synthetic_graph` (10 %
    reach a note 1-3 files on, so some cross into the next folder). Returns the graph and
    session -> folder key (`{prefix}f{k}`). Deterministic for a seed."""
    sessions = folders * notes
    g = synthetic_graph(max(sessions, int(sessions * per_note)), sessions, seed=seed, prefix=prefix)
    return g, {f"{prefix}s{s}": f"{prefix}f{s // notes}" for s in range(sessions)}
