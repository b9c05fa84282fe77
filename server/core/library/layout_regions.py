"""The layout's scale and its regions: the constants every step of `core.library.layout.settle`
shares, and step 1, where each birth session (and each folder of them) gets its disc (the
free-spot search, `_Discs`). The algorithm as a whole is described in `layout`'s docstring."""

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
