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

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

LINK_LENGTH = 60.0
ITERATIONS = 50
NODE_AREA = LINK_LENGTH**2
"""Plane area one node of a session claims (units²): a session of n nodes owns a disc of area
n × NODE_AREA."""
GAP = LINK_LENGTH
"""Clear space between two session discs (units)."""
CELL = LINK_LENGTH
"""Side of a repulsion grid cell; repulsion reaches exactly one cell."""
PER_CELL = 16
"""At most this many nodes of one grid cell push a moving node (bounds the work in a pile)."""
CHUNK = 2048
"""Moving nodes per vectorised repulsion block (bounds the transient memory)."""
STEP = LINK_LENGTH
FOLDER_PAD = LINK_LENGTH
"""Extra clear space around a folder's disc (units): folders sit GAP + 2 × FOLDER_PAD apart."""
"""Spacing of the candidate spots searched for a new session's disc."""
DISC_CELL = 4 * LINK_LENGTH
"""Side of a cell of the disc index."""
REPULSION = LINK_LENGTH**2 * 0.1
SPRING = 0.1
MAX_STEP = 20.0
_OFF = 1 << 20
_SHIFT = 1 << 21
_GOLDEN = math.pi * (3 - math.sqrt(5))

FloatArray = NDArray[np.float64]


def _jitter(node_id: str) -> tuple[float, float]:
    digest = hashlib.sha256(node_id.encode()).digest()
    angle = int.from_bytes(digest[:4], "big") / 2**32 * 2 * math.pi
    radius = 10 + digest[4] / 255 * 20
    return math.cos(angle) * radius, math.sin(angle) * radius


def _angle(key: str) -> float:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") / 2**32 * 2 * math.pi


def region_radius(count: int) -> float:
    """Radius (units) of the disc a session of `count` nodes owns: area count × NODE_AREA."""
    return math.sqrt(max(count, 1) * NODE_AREA / math.pi)


def _finite_positions(
    positions: Mapping[str, tuple[float, float]], ids: list[str]
) -> dict[str, tuple[float, float]]:
    """The positions of `ids` that are pairs of finite numbers (one numpy pass when they all are
    numbers)."""
    held = [i for i in ids if i in positions]
    try:
        pairs = np.array([positions[i] for i in held], dtype=np.float64).reshape(len(held), 2)
    except (TypeError, ValueError):  # a malformed entry: check them one by one
        return {i: positions[i] for i in held if _finite(positions[i])}
    good: list[bool] = np.isfinite(pairs).all(axis=1).tolist()  # type: ignore[assignment]
    return {i: positions[i] for i, ok in zip(held, good, strict=True) if ok}


def _finite(pair: object) -> bool:
    try:
        return len(pair) == 2 and all(math.isfinite(float(v)) for v in pair)  # type: ignore[arg-type, attr-defined]
    except (TypeError, ValueError):
        return False


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


@dataclass
class _Region:
    x: float
    y: float
    radius: float
    placed: int  # members that already had a position
    count: int  # members in all
    taken: int = 0  # sunflower spots handed out to new members so far


def _regions(
    fixed_ids: list[str],
    fixed: FloatArray,
    new: list[str],
    groups: Mapping[str, str],
    hubs: Mapping[str, set[str]],
    direct: list[tuple[str, str]],
    center: tuple[float, float],
    folders: Mapping[str, str],
) -> dict[str, _Region]:
    """Every session's disc: the sessions with placed members around their centroid; the new ones
    at the nearest free spot to their related sessions (placed largest first, ties by id), a new
    folder's sessions packed together first (module docstring, step 1)."""
    new_count: dict[str, int] = {}
    for node in new:
        if node in groups:
            new_count[groups[node]] = new_count.get(groups[node], 0) + 1
    if not new_count:
        return {}
    codes: dict[str, int] = {}
    member = np.array(
        [codes.setdefault(groups[i], len(codes)) if i in groups else -1 for i in fixed_ids], dtype=np.intp
    )
    names = list(codes)
    regions: dict[str, _Region] = {}
    discs = _Discs()  # top level: folders (padded) and the sessions without a folder
    every = _Discs()  # every session's disc: where a new session of a placed folder looks
    if len(names):
        mask = member >= 0
        code, pts = member[mask], fixed[mask]
        count = np.bincount(code, minlength=len(names)).astype(np.float64)
        cx = np.bincount(code, pts[:, 0], minlength=len(names)) / count
        cy = np.bincount(code, pts[:, 1], minlength=len(names)) / count
        dist = np.hypot(pts[:, 0] - cx[code], pts[:, 1] - cy[code])
        order = np.lexsort((dist, code))
        starts = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.intp)
        p90 = dist[order][starts + (0.9 * (count - 1)).astype(np.intp)]
        for g, name in enumerate(names):
            placed = int(count[g])
            total = placed + new_count.get(name, 0)
            base = region_radius(total)
            radius = max(base, min(float(p90[g]), 3 * base))
            regions[name] = _Region(float(cx[g]), float(cy[g]), radius, placed, total)
            every.add(float(cx[g]), float(cy[g]), radius, folders.get(name))
            if name not in folders:
                discs.add(float(cx[g]), float(cy[g]), radius)
    placed_folders = _placed_folders(regions, folders)
    for fx, fy, frad in placed_folders.values():
        discs.add(fx, fy, frad + FOLDER_PAD)
    fresh = sorted((g for g in new_count if g not in regions), key=lambda g: (-new_count[g], g))
    if not fresh:
        return regions
    fresh_set = set(fresh)
    related: dict[str, dict[str, int]] = {}

    def relate(a: str, b: str) -> None:
        if a in fresh_set:
            related.setdefault(a, {})[b] = related.setdefault(a, {}).get(b, 0) + 1
        if b in fresh_set:
            related.setdefault(b, {})[a] = related.setdefault(b, {}).get(a, 0) + 1

    for a, b in direct:
        relate(a, b)
    for sessions in hubs.values():
        if len(sessions) > 1 and sessions & fresh_set:
            ordered = sorted(sessions)  # a chain node's sessions: a handful
            for i, a in enumerate(ordered):
                for b in ordered[i + 1 :]:
                    relate(a, b)

    def target_of(names: Iterable[str]) -> tuple[float, float]:
        """The weighted centroid of the placed sessions related to `names` (outside them)."""
        inside = set(names)
        weights: dict[str, int] = {}
        for name in inside:
            for o, w in related.get(name, {}).items():
                if o in regions and o not in inside:
                    weights[o] = weights.get(o, 0) + w
        if not weights:
            return center
        total_w = sum(weights.values())
        ordered = sorted(weights.items())
        return (
            sum(regions[o].x * w for o, w in ordered) / total_w,
            sum(regions[o].y * w for o, w in ordered) / total_w,
        )

    packs: dict[str, list[str]] = {}  # a new folder -> its new sessions (largest first)
    top: list[tuple[int, str, list[str]]] = []  # (-nodes, key, sessions) placed at top level
    for name in fresh:
        folder = folders.get(name)
        if folder is None:
            top.append((-new_count[name], name, [name]))
        elif folder in placed_folders:  # a new file of a placed folder: beside its files
            fx, fy, _ = placed_folders[folder]
            radius = region_radius(new_count[name])
            x, y = every.free_spot((fx, fy), radius, folder, 2 * FOLDER_PAD)  # other folders' files
            every.add(x, y, radius, folder)  # stay GAP + 2 × FOLDER_PAD away
            discs.add(x, y, radius + FOLDER_PAD)
            regions[name] = _Region(x, y, radius, 0, new_count[name])
        else:
            packs.setdefault(folder, []).append(name)
    top.extend((-sum(new_count[n] for n in ns), f, ns) for f, ns in packs.items())
    if top and all(key in packs for _, key, _ in top):  # only folders to place: each query is
        discs.smallest = region_radius(1) + FOLDER_PAD  # at least this wide (the rays' memo)
    for _, key, names_in in sorted(top):
        if key not in packs:  # a session without a folder
            radius = region_radius(new_count[key])
            x, y = discs.free_spot(target_of([key]), radius)
            discs.add(x, y, radius)
            every.add(x, y, radius)
            regions[key] = _Region(x, y, radius, 0, new_count[key])
            continue
        local = _pack([(n, region_radius(new_count[n])) for n in names_in])
        fr = max(math.hypot(lx, ly) + r for lx, ly, r in local.values())
        x, y = discs.free_spot(target_of(names_in), fr + FOLDER_PAD)
        discs.add(x, y, fr + FOLDER_PAD)
        for n, (lx, ly, r) in local.items():
            every.add(x + lx, y + ly, r, key)
            regions[n] = _Region(x + lx, y + ly, r, 0, new_count[n])
    return regions


def _placed_folders(
    regions: Mapping[str, _Region], folders: Mapping[str, str]
) -> dict[str, tuple[float, float, float]]:
    """Each folder with placed sessions: (centre, radius) of the disc around its sessions' discs
    (centre weighted by their node counts)."""
    members: dict[str, list[_Region]] = {}
    for name, region in regions.items():
        if name in folders:
            members.setdefault(folders[name], []).append(region)
    out: dict[str, tuple[float, float, float]] = {}
    for folder, rs in sorted(members.items()):
        weight = sum(r.placed for r in rs) or len(rs)
        cx = sum(r.x * (r.placed or 1) for r in rs) / max(weight, 1)
        cy = sum(r.y * (r.placed or 1) for r in rs) / max(weight, 1)
        out[folder] = (cx, cy, max(math.hypot(r.x - cx, r.y - cy) + r.radius for r in rs))
    return out


def _pack(sessions: list[tuple[str, float]]) -> dict[str, tuple[float, float, float]]:
    """Sessions' discs packed together (in the given order, each at the nearest free spot to the
    origin), re-centred on the area-weighted centre: name -> (x, y, radius)."""
    local = _Discs()
    spots: dict[str, tuple[float, float, float]] = {}
    for name, radius in sessions:
        x, y = local.free_spot((0.0, 0.0), radius)
        local.add(x, y, radius)
        spots[name] = (x, y, radius)
    area = sum(r * r for _, _, r in spots.values())
    mx = sum(x * r * r for x, _, r in spots.values()) / area
    my = sum(y * r * r for _, y, r in spots.values()) / area
    return {n: (x - mx, y - my, r) for n, (x, y, r) in spots.items()}


class _Discs:
    """Session discs in a coarse uniform grid (`DISC_CELL`), with a free-spot search by rays."""

    RAYS = 16

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[tuple[float, float, float, str | None]]] = {}
        self.reach: dict[tuple[int, int], list[float]] = {}  # target cell -> per ray, a lower bound
        self.smallest = region_radius(1)

    def _span(self, x: float, y: float, reach: float) -> Iterable[tuple[int, int]]:
        x0, x1 = math.floor((x - reach) / DISC_CELL), math.floor((x + reach) / DISC_CELL)
        y0, y1 = math.floor((y - reach) / DISC_CELL), math.floor((y + reach) / DISC_CELL)
        return ((i, j) for i in range(x0, x1 + 1) for j in range(y0, y1 + 1))

    def add(self, x: float, y: float, radius: float, tag: str | None = None) -> None:
        for cell in self._span(x, y, radius + GAP / 2):
            self.cells.setdefault(cell, []).append((x, y, radius, tag))

    def _march(
        self,
        tx: float,
        ty: float,
        ux: float,
        uy: float,
        s: float,
        radius: float,
        tag: str | None = None,
        apart: float = 0.0,
    ) -> float:
        """The first distance ≥ s along the ray t + s·u where a disc of `radius` is clear of every
        disc by GAP (by GAP + `apart` from discs whose tag is not `tag`, when `tag` is given):
        each conflicting disc is jumped past in one step (its far crossing)."""
        while True:
            x, y = tx + s * ux, ty + s * uy
            exit_at = s
            for cell in self._span(x, y, radius + GAP / 2 + apart):
                for ox, oy, orad, otag in self.cells.get(cell, ()):
                    need = radius + orad + GAP + (apart if tag is not None and otag != tag else 0.0)
                    dx, dy = ox - tx, oy - ty
                    if (x - ox) ** 2 + (y - oy) ** 2 < need * need:
                        proj = dx * ux + dy * uy
                        perp2 = dx * dx + dy * dy - proj * proj
                        exit_at = max(exit_at, proj + math.sqrt(max(need * need - perp2, 0.0)) + 1e-6)
            if exit_at == s:
                return s
            s = exit_at

    def free_spot(
        self, target: tuple[float, float], radius: float, tag: str | None = None, apart: float = 0.0
    ) -> tuple[float, float]:
        """The nearest clear spot to `target` (snapped to the STEP grid) along RAYS directions
        (`tag`, `apart`: as `_march`). Per target, each ray remembers how far no session fits
        (discs are only added, so that bound only grows; it is taken with no tag, the least
        clearance, so it bounds every query): a batch of sessions aimed at one target never
        re-walks the filled middle."""
        key = (round(target[0] / STEP), round(target[1] / STEP))
        tx, ty = key[0] * STEP, key[1] * STEP
        reach = self.reach.setdefault(key, [0.0] * self.RAYS)
        best: tuple[float, float, float] | None = None
        for ray in range(self.RAYS):
            angle = ray / self.RAYS * 2 * math.pi
            ux, uy = math.cos(angle), math.sin(angle)
            reach[ray] = self._march(tx, ty, ux, uy, reach[ray], self.smallest)
            s = (
                self._march(tx, ty, ux, uy, reach[ray], radius, tag, apart)
                if radius > self.smallest or tag is not None
                else reach[ray]
            )
            if best is None or s < best[0]:
                best = (s, tx + s * ux, ty + s * uy)
        assert best is not None
        return best[1], best[2]


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


# -- region metrics (issue 17): do sessions read as regions? ---------------------------------------
@dataclass(frozen=True)
class RegionMetrics:
    """own_share: share of session members whose nearest session centroid is their own (0..1;
    1.0 when no node has a session). overlap: Σ pairwise hull intersection areas / Σ hull areas
    (0 when no hull has area); hulls are convex, of the members grown by `pad`."""

    own_share: float
    overlap: float
    sessions: int
    nodes: int


def region_metrics(
    positions: Mapping[str, tuple[float, float]], groups: Mapping[str, str], pad: float = 0.0
) -> RegionMetrics:
    """How well sessions read as regions on a layout.

    Args:
        positions: node id -> (x, y); ids without a finite position are skipped.
        groups: node id -> session; only these nodes count.
        pad: grow every hull by this many units (the canvas pads its hulls by nodeSize × 2.4 + 8;
            with pad > 0 a session of one or two nodes has an area too), ≥ 0.

    Raises:
        ValueError: `pad` is negative or not finite.
    """
    if not math.isfinite(pad) or pad < 0:
        raise ValueError(f"pad must be a finite number ≥ 0, got {pad}")
    ids = [i for i in groups if i in positions and _finite(positions[i])]
    if not ids:
        return RegionMetrics(1.0, 0.0, 0, 0)
    codes: dict[str, int] = {}
    code = np.array([codes.setdefault(groups[i], len(codes)) for i in ids], dtype=np.intp)
    pts = np.array([positions[i] for i in ids], dtype=np.float64)
    count = np.bincount(code).astype(np.float64)
    cent = np.stack([np.bincount(code, pts[:, 0]) / count, np.bincount(code, pts[:, 1]) / count], axis=1)
    own = 0
    rows = max(1, 4_000_000 // len(cent))
    for lo in range(0, len(pts), rows):
        block = pts[lo : lo + rows]
        d2 = ((block[:, None, :] - cent[None, :, :]) ** 2).sum(axis=2)
        own += int((d2.argmin(axis=1) == code[lo : lo + rows]).sum())
    order = np.argsort(code, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(count).astype(np.intp)])
    ring = (
        np.array([(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 16, endpoint=False)]) * pad
        if pad > 0
        else np.zeros((1, 2))
    )
    hulls: list[FloatArray] = []
    for g in range(len(cent)):
        members = pts[order[bounds[g] : bounds[g + 1]]]
        grown = (members[:, None, :] + ring[None, :, :]).reshape(-1, 2)
        hull = convex_hull(grown)
        if len(hull) >= 3 and polygon_area(hull) > 0:
            hulls.append(hull)
    total = sum(polygon_area(h) for h in hulls)
    if total <= 0:
        return RegionMetrics(own / len(ids), 0.0, len(cent), len(ids))
    boxes = np.array([(h[:, 0].min(), h[:, 0].max(), h[:, 1].min(), h[:, 1].max()) for h in hulls])
    by_left = np.argsort(boxes[:, 0], kind="stable")
    shared = 0.0
    for n, a in enumerate(by_left):
        for b in by_left[n + 1 :]:
            if boxes[b, 0] > boxes[a, 1]:
                break
            if boxes[b, 2] > boxes[a, 3] or boxes[b, 3] < boxes[a, 2]:
                continue
            shared += polygon_area(_clip(hulls[a], hulls[b]))
    return RegionMetrics(own / len(ids), shared / total, len(cent), len(ids))


def convex_hull(points: FloatArray) -> FloatArray:
    """The convex hull of `(n, 2)` points, counter-clockwise, `(h, 2)` (Andrew's monotone chain;
    fewer than 3 distinct points come back as they are, deduplicated)."""
    pts = np.unique(np.asarray(points, dtype=np.float64).reshape(-1, 2), axis=0)
    if len(pts) < 3:
        return pts
    plist = pts.tolist()

    def half(seq: list[list[float]]) -> list[list[float]]:
        chain: list[list[float]] = []
        for p in seq:
            while len(chain) >= 2:
                (ax, ay), (bx, by) = chain[-2], chain[-1]
                if (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax) > 0:
                    break
                chain.pop()
            chain.append(p)
        return chain

    lower, upper = half(plist), half(plist[::-1])
    return np.array(lower[:-1] + upper[:-1], dtype=np.float64)


def polygon_area(poly: FloatArray) -> float:
    """Area of a simple polygon `(n, 2)` (shoelace; 0 for fewer than 3 vertices)."""
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))) / 2


def _clip(subject: FloatArray, window: FloatArray) -> FloatArray:
    """The intersection of two counter-clockwise convex polygons (Sutherland–Hodgman)."""
    out = subject.tolist()
    win = window.tolist()
    for i in range(len(win)):
        if not out:
            break
        (ax, ay), (bx, by) = win[i], win[(i + 1) % len(win)]

        def inside(p: list[float], ax: float = ax, ay: float = ay, bx: float = bx, by: float = by) -> bool:
            return (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax) >= 0

        def cross(
            p: list[float], q: list[float], ax: float = ax, ay: float = ay, bx: float = bx, by: float = by
        ) -> list[float]:
            dx, dy = q[0] - p[0], q[1] - p[1]
            ex, ey = bx - ax, by - ay
            denom = dx * ey - dy * ex
            t = ((ax - p[0]) * ey - (ay - p[1]) * ex) / denom if denom else 0.0
            return [p[0] + t * dx, p[1] + t * dy]

        current, out = out, []
        for j, p in enumerate(current):
            q = current[(j + 1) % len(current)]
            if inside(q):
                if not inside(p):
                    out.append(cross(p, q))
                out.append(q)
            elif inside(p):
                out.append(cross(p, q))
    return np.array(out, dtype=np.float64).reshape(-1, 2)
