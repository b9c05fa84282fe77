"""Incremental layout settle: new nodes find places, existing nodes keep theirs (seed §6).

Warm start: every node that already has a position stays put. A new node starts at the centroid
of its placed neighbours (or on a ring around the graph when it has none), offset by a
deterministic jitter from its id, then a few iterations of local forces (springs along its links,
repulsion from every node) move only the new nodes. Cost per settle: O(iterations × new × all).
Deterministic: same input, same output.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping

import numpy as np

LINK_LENGTH = 60.0
ITERATIONS = 80


def _jitter(node_id: str) -> tuple[float, float]:
    digest = hashlib.sha256(node_id.encode()).digest()
    angle = int.from_bytes(digest[:4], "big") / 2**32 * 2 * math.pi
    radius = 10 + digest[4] / 255 * 20
    return math.cos(angle) * radius, math.sin(angle) * radius


def settle(
    positions: Mapping[str, tuple[float, float]],
    node_ids: Iterable[str],
    links: Iterable[tuple[str, str]],
    iterations: int = ITERATIONS,
) -> dict[str, tuple[float, float]]:
    """Positions for the nodes that have none (existing positions are returned unchanged).

    Args:
        positions: current positions by id (kept as they are).
        node_ids: every node of the view.
        links: (source, target) pairs of the view.
        iterations: force iterations for the new nodes.

    Returns:
        A complete positions map (existing + new).
    """
    ids = list(dict.fromkeys(node_ids))
    new = [i for i in ids if i not in positions]
    out = {i: positions[i] for i in ids if i in positions}
    if not new:
        return out
    neighbours: dict[str, list[str]] = {}
    for a, b in links:
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    placed = np.array(list(out.values()), dtype=float) if out else np.zeros((0, 2))
    center = placed.mean(axis=0) if len(placed) else np.zeros(2)
    spread = float(np.abs(placed - center).max()) + LINK_LENGTH if len(placed) else LINK_LENGTH
    # initial guesses: neighbour centroid, else a ring, plus jitter; unplaced neighbours resolve in passes
    guess: dict[str, tuple[float, float]] = {}
    for _ in range(3):
        for node in new:
            anchor: list[tuple[float, float]] = []
            for n in neighbours.get(node, []):
                spot = out.get(n) or guess.get(n)
                if spot is not None:
                    anchor.append(spot)
            jx, jy = _jitter(node)
            if anchor:
                ax = sum(a[0] for a in anchor) / len(anchor)
                ay = sum(a[1] for a in anchor) / len(anchor)
                guess[node] = (ax + jx, ay + jy)
            elif node not in guess:
                angle = math.atan2(jy, jx)
                guess[node] = (center[0] + math.cos(angle) * spread, center[1] + math.sin(angle) * spread)
    index = {node: k for k, node in enumerate(new)}
    moving = np.array([guess[n] for n in new], dtype=float)
    edges = [(index[a], index.get(b), out.get(b)) for a, b in links if a in index] + [
        (index[b], index.get(a), out.get(a)) for a, b in links if b in index
    ]
    for step in range(iterations):
        cooling = 1.0 - step / iterations
        everything = np.vstack([placed, moving]) if len(placed) else moving
        delta = moving[:, None, :] - everything[None, :, :]
        dist2 = (delta**2).sum(axis=2) + 1.0
        push = (delta / dist2[:, :, None] * LINK_LENGTH**2 * 0.1).sum(axis=1)
        pull = np.zeros_like(moving)
        for k, other_new, other_fixed in edges:
            target = moving[other_new] if other_new is not None else np.array(other_fixed)
            vec = target - moving[k]
            length = float(np.hypot(*vec)) or 1.0
            pull[k] += vec * (length - LINK_LENGTH) / length * 0.1
        step_vec = np.clip(push + pull, -20, 20) * cooling
        moving = moving + step_vec
    for node, (x, y) in zip(new, moving.tolist(), strict=True):
        out[node] = (round(x, 2), round(y, 2))
    return out


def sanitize_positions(raw: object, known: set[str], limit: float = 1e6) -> dict[str, tuple[float, float]]:
    """Positions from a client: `{id: {"x", "y"}}` or `{id: [x, y]}`; unknown ids and non-finite
    or non-numeric values are dropped, coordinates clamped to ±limit.

    Raises:
        ValueError: `raw` is not an object.
    """
    if not isinstance(raw, dict):
        raise ValueError("positions must be an object {id: {x, y}}")
    out: dict[str, tuple[float, float]] = {}
    for key, value in raw.items():
        if key not in known:
            continue
        if isinstance(value, dict):
            pair = (value.get("x"), value.get("y"))
        elif isinstance(value, (list, tuple)) and len(value) == 2:
            pair = (value[0], value[1])
        else:
            continue
        if not all(_finite_number(v) for v in pair):
            continue
        x, y = (max(-limit, min(limit, float(v))) for v in pair)  # type: ignore[arg-type]
        out[key] = (x, y)
    return out


def _finite_number(value: object) -> bool:
    """A finite int or float (not a bool); an int too large for a double is not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond the double range
        return False
