"""Incremental layout settle that draws regions: new nodes find places, existing nodes keep theirs
(seed §6), and nodes of one birth session sit together, apart from other sessions.

Existing positions never move. New nodes are placed in one bounded pass:

1. Regions. Each birth session owns a disc whose area grows with its node count
   (`region_radius`). A session with placed members keeps its disc around their centroid; a new
   session's disc is put at the nearest free spot (clear of every other disc by `GAP`) to the
   weighted centroid of the sessions it shares links with (directly or through one chain node),
   else to the graph's centroid. The search marches 16 rays out of the target, jumping past each
   disc in its way in one step, and remembers per target how far along each ray nothing fits, so a
   batch of thousands of new sessions never re-walks the filled middle.
   Folders first (issue 17 item 2, decision 0022): when sessions belong to folders (notes
   imported from a folder), a new folder's sessions are packed together around its own origin
   (largest first, the same free-spot search), then the whole pack is put as one disc (padded by
   `FOLDER_PAD`) at the nearest free spot among the other folders and the folderless sessions; a
   new session of a folder already placed takes the nearest free spot to that folder's centre
   among every session disc (GAP from its folder's files, GAP + 2 × FOLDER_PAD from the
   others). So files of one folder sit together and folders are `GAP + 2 × FOLDER_PAD` apart,
   files within a folder `GAP`.
2. Initial guesses. A new member of a session takes the next free spot of its disc's sunflower
   (Vogel spiral: even density, the outer rings once the inner ones are taken); a node without a
   session (an implication node) starts at the centroid of its placed or guessed neighbours, else
   on a ring around the graph. A small jitter from the id breaks ties.
3. Forces, `iterations` rounds with cooling: springs along links, repulsion only from nodes in the
   3×3 neighbouring cells of a uniform grid (`CELL` wide, at most 3 × `PER_CELL` per column of
   three cells), in chunks of `CHUNK` moving nodes; session members are then held in their disc.

Cost: linear passes over the inputs (the positions map, the links, one numpy sort of the placed
positions: O(all), no pairwise work), then O(iterations × new × log all) time and
O(new + CHUNK × 9 × PER_CELL) memory for the forces (a pile of nodes cannot grow it), and
O(sessions crossed) per new session for its free spot. Deterministic: same input, same
output (no random state; jitter comes from ids).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray

from server.core.library.layout_regions import (
    _GOLDEN,
    _OFF,
    _SHIFT,
    CELL,
    CHUNK,
    ITERATIONS,
    LINK_LENGTH,
    MAX_STEP,
    PER_CELL,
    REPULSION,
    SPRING,
    FloatArray,
    _angle,
    _finite_positions,
    _jitter,
    _Region,
    _regions,
)


def settle(
    positions: Mapping[str, tuple[float, float]],
    node_ids: Iterable[str],
    links: Iterable[tuple[str, str]],
    iterations: int = ITERATIONS,
    groups: Mapping[str, str] | None = None,
    folders: Mapping[str, str] | None = None,
) -> dict[str, tuple[float, float]]:
    """Positions for the nodes that have none (existing positions are returned unchanged).

    Args:
        positions: current positions by id (kept as they are; a non-finite pair counts as none
            and the node is placed again).
        node_ids: every node of the view.
        links: (source, target) pairs of the view; pairs naming an id outside `node_ids` are ignored.
        iterations: force rounds for the new nodes (≥ 0; 0 keeps the initial guesses).
        groups: node id -> birth session; nodes absent (implication nodes) have no region.
        folders: session -> its folder's key (`core.folders`); sessions absent (lessons, single
            files) sit at top level, beside the folders.

    Returns:
        A complete positions map (existing + new), new coordinates rounded to 0.01.

    Raises:
        ValueError: `iterations` is negative.
    """
    if iterations < 0:
        raise ValueError(f"iterations must be ≥ 0, got {iterations}")
    ids = list(dict.fromkeys(node_ids))
    out = _finite_positions(positions, ids)
    new = [i for i in ids if i not in out]
    if not new:
        return out
    groups = groups or {}
    known = set(ids)
    new_index = {node: k for k, node in enumerate(new)}
    links = list(links)
    neighbours: dict[str, list[str]] = {}
    for a, b in links:
        if (a in new_index or b in new_index) and a != b and a in known and b in known:
            neighbours.setdefault(a, []).append(b)
            neighbours.setdefault(b, []).append(a)
    # relations of the sessions with no placed member yet: direct links, or one shared chain node
    placed_sessions = {groups[i] for i in out if i in groups}
    fresh = {groups[n] for n in new if n in groups and groups[n] not in placed_sessions}
    direct: list[tuple[str, str]] = []
    hubs: dict[str, set[str]] = {}  # an ungrouped node -> the sessions of its neighbours
    for node in new:
        if groups.get(node) in fresh:
            for other in neighbours.get(node, []):
                if other in groups:
                    if groups[other] != groups[node]:
                        direct.append((groups[node], groups[other]))
                else:
                    hubs[other] = set()
    if hubs:
        for a, b in links:
            if a in hubs and b in groups:
                hubs[a].add(groups[b])
            elif b in hubs and a in groups:
                hubs[b].add(groups[a])

    fixed_ids = list(out)
    fixed = np.array([out[i] for i in fixed_ids], dtype=np.float64).reshape(-1, 2)
    center = fixed.mean(axis=0) if len(fixed) else np.zeros(2)
    spread = float(np.abs(fixed - center).max()) + LINK_LENGTH if len(fixed) else LINK_LENGTH

    regions = _regions(
        fixed_ids, fixed, new, groups, hubs, direct, (float(center[0]), float(center[1])), folders or {}
    )
    moving = _initial(new, groups, regions, neighbours, out, center, spread)
    region_of = [regions.get(groups[n]) if n in groups else None for n in new]
    held = np.array([r is not None for r in region_of])
    centres = np.array([(r.x, r.y) if r else (0.0, 0.0) for r in region_of], dtype=np.float64).reshape(-1, 2)
    radii = np.array([r.radius if r else 0.0 for r in region_of], dtype=np.float64)

    fixed_index = _Grid(fixed)
    src, dst_new, dst_fixed = [], [], []
    for node, k in new_index.items():
        for other in neighbours.get(node, []):
            src.append(k)
            j = new_index.get(other)
            dst_new.append(-1 if j is None else j)
            dst_fixed.append(out.get(other, (0.0, 0.0)))
    e_src = np.array(src, dtype=np.intp)
    e_new = np.array(dst_new, dtype=np.intp)
    e_fixed = np.array(dst_fixed, dtype=np.float64).reshape(-1, 2)
    e_is_new = e_new >= 0
    for step in range(iterations):
        cooling = 1.0 - step / iterations
        moving_index = _Grid(moving)
        push = fixed_index.repel(moving) + moving_index.repel(moving)
        pull = np.zeros_like(moving)
        if len(e_src):
            target = np.where(e_is_new[:, None], moving[np.where(e_is_new, e_new, 0)], e_fixed)
            vec = target - moving[e_src]
            length = np.hypot(vec[:, 0], vec[:, 1])
            length[length == 0] = 1.0
            force = vec * ((length - LINK_LENGTH) / length * SPRING)[:, None]
            pull[:, 0] = np.bincount(e_src, force[:, 0], minlength=len(moving))
            pull[:, 1] = np.bincount(e_src, force[:, 1], minlength=len(moving))
        moving = moving + np.clip(push + pull, -MAX_STEP, MAX_STEP) * cooling
        moving = _hold(moving, held, centres, radii)
    for node, (x, y) in zip(new, moving.tolist(), strict=True):
        out[node] = (round(x, 2), round(y, 2))
    return out


def _initial(
    new: list[str],
    groups: Mapping[str, str],
    regions: dict[str, _Region],
    neighbours: Mapping[str, list[str]],
    out: Mapping[str, tuple[float, float]],
    center: FloatArray,
    spread: float,
) -> FloatArray:
    """Initial guesses: session members on their disc's sunflower, the others at their neighbours'
    centroid (resolved in up to three passes) or on a ring around the graph; plus a small jitter."""
    guess: dict[str, tuple[float, float]] = {}
    for node in new:
        region = regions.get(groups[node]) if node in groups else None
        if region is None:
            continue
        k = region.placed + region.taken
        region.taken += 1
        r = region.radius * math.sqrt((k + 0.5) / region.count)
        theta = k * _GOLDEN + _angle(groups[node])
        jx, jy = _jitter(node)
        guess[node] = (region.x + r * math.cos(theta) + jx / 10, region.y + r * math.sin(theta) + jy / 10)
    loose = [n for n in new if n not in guess]
    for _ in range(3):
        for node in loose:
            anchor = [
                p for p in (out.get(n) or guess.get(n) for n in neighbours.get(node, [])) if p is not None
            ]
            jx, jy = _jitter(node)
            if anchor:
                guess[node] = (
                    sum(a[0] for a in anchor) / len(anchor) + jx,
                    sum(a[1] for a in anchor) / len(anchor) + jy,
                )
            elif node not in guess:
                angle = math.atan2(jy, jx)
                guess[node] = (
                    float(center[0]) + math.cos(angle) * spread,
                    float(center[1]) + math.sin(angle) * spread,
                )
    return np.array([guess[n] for n in new], dtype=np.float64).reshape(-1, 2)


def _hold(moving: FloatArray, held: NDArray[np.bool_], centres: FloatArray, radii: FloatArray) -> FloatArray:
    """Session members pulled back onto their disc when a force pushed them out of it."""
    if not held.any():
        return moving
    d = moving - centres
    dist = np.hypot(d[:, 0], d[:, 1])
    over = held & (dist > radii)
    if over.any():
        scale = radii[over] / dist[over]
        moving = moving.copy()
        moving[over] = centres[over] + d[over] * scale[:, None]
    return moving


def _keys(points: FloatArray) -> NDArray[np.int64]:
    cells = np.clip(np.floor(points / CELL), -_OFF + 2, _OFF - 2).astype(np.int64)
    return (cells[:, 0] + _OFF) * _SHIFT + (cells[:, 1] + _OFF)


_COLUMNS = np.array([dx * _SHIFT for dx in (-1, 0, 1)], dtype=np.int64)
"""The three columns of neighbouring cells: in key order a column's three cells are one run."""


class _Grid:
    """A uniform grid (spatial hash) of points: keys sorted once, neighbours found by binary search."""

    def __init__(self, points: FloatArray) -> None:
        self.points = points
        keys = _keys(points) if len(points) else np.zeros(0, dtype=np.int64)
        self.order = np.argsort(keys, kind="stable")
        self.keys = keys[self.order]

    def repel(self, moving: FloatArray) -> FloatArray:
        """The repulsion on each moving point from the indexed points within CELL of it (at most
        3 × PER_CELL per column of three neighbouring cells), `(len(moving), 2)`; fading to zero
        at CELL."""
        push = np.zeros_like(moving)
        if not len(self.points) or not len(moving):
            return push
        reach2 = CELL * CELL
        for lo_row in range(0, len(moving), CHUNK):
            block = moving[lo_row : lo_row + CHUNK]
            m = len(block)
            column = (_keys(block)[:, None] + _COLUMNS[None, :]).ravel()
            lo = np.searchsorted(self.keys, column - 1, "left")
            hi = np.searchsorted(self.keys, column + 1, "right")
            cnt = np.minimum(hi - lo, 3 * PER_CELL)
            total = int(cnt.sum())
            if not total:
                continue
            rows = np.repeat(np.repeat(np.arange(m), len(_COLUMNS)), cnt)
            first = np.repeat(lo, cnt)
            within = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            other = self.points[self.order[first + within]]
            delta = block[rows] - other
            d2 = delta[:, 0] ** 2 + delta[:, 1] ** 2
            weight = np.where(d2 < reach2, (1.0 - d2 / reach2) / (d2 + 1.0), 0.0) * REPULSION
            push[lo_row : lo_row + m, 0] = np.bincount(rows, delta[:, 0] * weight, minlength=m)
            push[lo_row : lo_row + m, 1] = np.bincount(rows, delta[:, 1] * weight, minlength=m)
        return push


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
