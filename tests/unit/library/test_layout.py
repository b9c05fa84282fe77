"""The scalable, region-drawing layout settle and its region metrics (issues 16 item 3, 17 item 1)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from server.core.library.layout import settle
from server.core.library.layout_metrics import convex_hull, polygon_area, region_metrics
from server.core.library.layout_regions import GAP, region_radius
from tests.synthetic_layout import synthetic_graph


def _finite(positions: dict[str, tuple[float, float]]) -> bool:
    return all(math.isfinite(x) and math.isfinite(y) for x, y in positions.values())


def test_settle_is_deterministic_and_existing_nodes_never_move() -> None:
    g = synthetic_graph(600, 25, seed=3)
    first = settle({}, g.ids, g.links, groups=g.groups)
    assert settle({}, g.ids, g.links, groups=g.groups) == first
    assert set(first) == set(g.ids) and _finite(first)
    more = synthetic_graph(120, 6, seed=4, prefix="n")
    ids, links = g.ids + more.ids, g.links + more.links + [(g.ids[5], more.ids[0])]
    groups = {**g.groups, **more.groups, "n_extra": "s1"}  # a new member of an existing session
    ids.append("n_extra")
    second = settle(first, ids, links, groups=groups)
    assert all(second[k] == v for k, v in first.items())  # existing nodes never move
    assert set(second) == set(ids) and _finite(second)
    assert settle(first, ids, links, groups=groups) == second
    assert settle(second, ids, links, groups=groups) == second  # nothing new: nothing moves


def test_non_finite_or_far_positions_are_survived() -> None:
    existing = {"a": (float("nan"), 0.0), "b": (1e6, -1e6), "c": (0.0, float("inf"))}
    out = settle(existing, ["a", "b", "c", "d"], [("a", "d"), ("b", "d")], groups={"a": "s", "d": "t"})
    assert out["b"] == (1e6, -1e6)
    assert set(out) == {"a", "b", "c", "d"} and _finite(out)  # the non-finite ones are placed again


def test_settle_refuses_negative_iterations() -> None:
    with pytest.raises(ValueError, match="iterations"):
        settle({}, ["a"], [], iterations=-1)


def test_a_new_session_lands_near_the_session_it_shares_a_chain_with() -> None:
    """Two placed sessions far apart; a new session chained to the second one's node lands next
    to it, clear of it by the gap."""
    far = {f"l{i}": (-5000.0 + 10 * i, 0.0) for i in range(5)}
    near = {f"r{i}": (5000.0 + 10 * i, 0.0) for i in range(5)}
    groups = {**{k: "left" for k in far}, **{k: "right" for k in near}, "x1": "new", "x2": "new"}
    ids = [*far, *near, "x1", "x2", "arg"]
    links = [("x1", "arg"), ("arg", "r0"), ("x2", "x1")]
    out = settle({**far, **near}, ids, links, groups=groups)
    centre = np.mean([out["x1"], out["x2"]], axis=0)
    assert math.dist(centre, (5020, 0)) < math.dist(centre, (-4980, 0))
    assert math.dist(centre, (5020, 0)) >= region_radius(2) + GAP  # its own region, not inside


def test_placing_1000_new_into_10000_stays_under_100_mb() -> None:
    """Memory ∝ new × all before (a 1,000 × 11,000 × 2 delta array alone is 176 MB)."""
    g = synthetic_graph(10_000, 400, seed=11)
    existing = settle({}, g.ids, g.links, groups=g.groups, iterations=2)
    more = synthetic_graph(1_000, 40, seed=12, prefix="n")
    ids = g.ids + more.ids
    links = g.links + more.links + [(g.ids[i * 9], more.ids[i]) for i in range(100)]
    groups = {**g.groups, **more.groups}
    tracemalloc.start()
    try:
        out = settle(existing, ids, links, groups=groups)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    assert len(out) == len(ids) and _finite(out)


def test_sessions_read_as_regions_on_a_fixed_seed_graph() -> None:
    """All at once, then a second batch into it: nearest-centroid share ≥ 0.9 and hull overlap ≤ 0.1,
    on raw hulls and on hulls padded as the canvas draws them (nodeSize 5 → 20 units)."""
    g = synthetic_graph(2_000, 80, seed=5)
    first = settle({}, g.ids, g.links, groups=g.groups)
    for pad in (0.0, 20.0):
        m = region_metrics(first, g.groups, pad=pad)
        assert m.own_share >= 0.9 and m.overlap <= 0.1, m
    more = synthetic_graph(300, 12, seed=6, prefix="n")
    groups = {**g.groups, **more.groups}
    links = g.links + more.links + [(g.ids[i * 13], more.ids[i]) for i in range(40)]
    second = settle(first, g.ids + more.ids, links, groups=groups)
    m = region_metrics(second, groups, pad=20.0)
    assert m.sessions == 92 and m.nodes == 2_300
    assert m.own_share >= 0.9 and m.overlap <= 0.1, m


def test_region_metrics_measure_what_they_say() -> None:
    square = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0), (5.0, 5.0)]
    apart = {f"a{i}": p for i, p in enumerate(square)} | {
        f"b{i}": (x + 100, y) for i, (x, y) in enumerate(square)
    }
    groups = {k: k[0] for k in apart}
    assert region_metrics(apart, groups).own_share == 1.0
    assert region_metrics(apart, groups).overlap == 0.0
    shifted = {**apart, **{f"b{i}": (x + 5, y) for i, (x, y) in enumerate(square)}}
    m = region_metrics(shifted, groups)
    assert m.overlap == pytest.approx(50 / 200)  # a 5 × 10 overlap over two 100-unit squares
    assert m.own_share < 1.0  # the middle point (5, 5) of a sits nearer b's centroid
    mixed = {"a0": (0.0, 0.0), "a1": (10.0, 0.0), "b0": (1.0, 0.0), "b1": (9.0, 0.0)}
    assert region_metrics(mixed, {k: k[0] for k in mixed}).own_share == 0.5
    assert region_metrics({}, {}).own_share == 1.0
    with pytest.raises(ValueError, match="pad"):
        region_metrics(apart, groups, pad=-1)


def test_convex_hull_and_area() -> None:
    pts = np.array([(0, 0), (4, 0), (4, 3), (0, 3), (2, 1), (1, 2)], dtype=float)
    hull = convex_hull(pts)
    assert len(hull) == 4 and polygon_area(hull) == 12.0
    assert polygon_area(convex_hull(np.array([(0, 0), (1, 1), (2, 2)], dtype=float))) == 0.0
