"""The graph home page with bad input (issue 17, "Bad input") in real Chromium against
`python -m server`: propositions with 300-character names, and a positions.json holding far-away
coordinates and entries that are not numbers (`far`), or a bare NaN token, which makes the whole
file unreadable JSON (`nan`). The canvas is not blank, Fit shows the graph (not a dot, not an
empty corner), labels are shortened and never overlap, and a node placed a billion units away
comes back next to its neighbours.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from server.core.contracts.graph import ChainLine, NodeLine, Provenance, SourceLine
from server.core.library.graph import chain_id
from server.store.ledger import append_ledger
from tests.bench.common import run_line
from tests.e2e.library.test_graph_in_browser import assert_labels_apart, inked_fraction
from tests.procs import ServerProcess, start_server

pytestmark = pytest.mark.e2e

AT = "2026-12-03T00:00:00Z"
PROPS, PER_SOURCE = 120, 40
FAR = "n_far"  # at (1e9, -1e9): far beyond the server's 1e6 limit for drags


def write_bad_graph(data_dir: Path, case: str) -> int:
    """120 propositions with 300-character names in 3 sources, 60 chains, and a positions.json
    with a billion units for one node and, for `case` "nan", a NaN for another (not JSON: the
    server cannot read the file), else junk entries. Returns the view's node count."""
    rng = random.Random(17)
    root = data_dir / "graph"
    root.mkdir(parents=True)
    ids = [FAR, *(f"n_{i:03d}" for i in range(1, PROPS))]
    nodes, positions = [], {}
    for i, nid in enumerate(ids):
        s = i // PER_SOURCE
        words = " ".join(rng.choice(["limit", "kernel", "matrix", "entropy", "theorem"]) for _ in range(60))
        name = f"Name {i} " + words
        nodes.append(
            NodeLine(
                id=nid,
                name=name[:300],
                statement=f"{name[:300]} holds.",
                provenance=Provenance(source=f"src_{s}", job="job_bad"),
                at=AT,
            )
        )
        a = i * math.pi * (3 - math.sqrt(5))
        cx, cy = 400 * math.cos(s * 2.1), 400 * math.sin(s * 2.1)
        positions[nid] = [
            cx + 8 * math.sqrt(i % PER_SOURCE) * math.cos(a),
            cy + 8 * math.sqrt(i % PER_SOURCE) * math.sin(a),
        ]
    positions[FAR] = [1e9, -1e9]
    if case == "nan":
        positions["n_005"] = [float("nan"), 3.0]
    else:
        positions["n_005"] = ["NaN", 3.0]  # type: ignore[list-item]
        positions["n_006"] = [1e300, -1e300]
    chains: list[ChainLine] = []
    for i in range(0, PROPS - 2, 2):
        premises, conclusion = [ids[i]], ids[i + 1]
        chains.append(
            ChainLine(
                id=chain_id(premises, conclusion),
                premises=premises,
                conclusion=conclusion,
                provenance=Provenance(source=f"src_{i // PER_SOURCE}", job="job_bad"),
                at=AT,
            )
        )
    sources = [SourceLine(id=f"src_{s}", kind="notes", title=f"notes/{s}.md", at=AT) for s in range(3)]
    append_ledger(root / "sources.jsonl", sources)
    append_ledger(root / "nodes.jsonl", nodes)
    append_ledger(root / "chains.jsonl", chains)
    append_ledger(root / "sessions.jsonl", [run_line("src_0", "job_bad", PROPS, len(chains))])
    (root / "positions.json").write_text(json_with_nan(positions))
    return PROPS + len(chains)


def json_with_nan(positions: dict[str, list[float]]) -> str:
    return json.dumps(positions)  # Python writes NaN as a bare `NaN` token: not JSON


@pytest.fixture(params=["far", "nan"])
def bad_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ServerProcess, int]]:
    count = write_bad_graph(tmp_path / "data", request.param)
    server = start_server(tmp_path / "data")
    try:
        yield server, count
    finally:
        server.stop()


def test_long_names_and_bad_positions_still_draw_a_readable_graph(
    page: Page, bad_server: tuple[ServerProcess, int]
) -> None:
    server, count = bad_server
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(server.url + "/")
    page.wait_for_function(
        "n => !!window.__lhGraph && window.__lhGraph.stats().nodes === n && window.__lhGraph.stats().settled",
        arg=count,
        timeout=20_000,
    )
    page.get_by_test_id("graph-fit").click()
    page.wait_for_timeout(400)
    stats: dict[str, Any] = page.evaluate("window.__lhGraph.stats()")
    # Fit shows the graph: (nearly) every node on screen at a zoom that is not a dot
    assert stats["onScreen"] >= 0.95 * count, stats["onScreen"]
    assert stats["zoom"] > 0.2, stats["zoom"]
    assert inked_fraction(page) > 0.01
    # the node the file put a billion units away was placed next to its neighbours instead
    far = page.evaluate("id => window.__lhGraph.nodeScreenPosition(id)", FAR)
    assert far is not None and 0 <= far["x"] <= 1280 and 0 <= far["y"] <= 800, far

    # at reading distance: labels shortened (36 characters at most, ~250 px) and never overlapping
    page.evaluate("id => window.__lhGraph.focus(id, 1.5)", "n_050")
    page.wait_for_timeout(400)
    stats = page.evaluate("window.__lhGraph.stats()")
    assert stats["labels"] >= 5, stats["labels"]
    assert_labels_apart(stats)
    widest = max(b[2] - b[0] for b in stats["labelBoxes"])
    assert widest < 400, widest
