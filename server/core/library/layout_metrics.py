"""Region metrics (issue 17): do a layout's sessions read as regions? Measured by the tests and
`tests/bench/library/bench_layout.py`, never by the server's settle."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from server.core.library.layout_regions import FloatArray, _finite


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
