"""Math on the graph page in real Chromium against `python -m server` (issue 28, items 6 and 9):
the canvas's visible labels show their math typeset by KaTeX (not raw TeX, not a plain spelling),
and a `\\[`…`\\]` inside a `$$…$$` formula (notes converted by tools that escape brackets) stays
part of the formula: the chain table and the node card show it with no red KaTeX error.

The graph is written straight into the data dir's ledgers (two notes sources of 20 propositions
whose names hold formulas, chains within each source), as the bench does.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from server.core.contracts.graph import ChainLine, NodeLine, Provenance, SourceLine
from server.core.library.graph import chain_id
from server.store.ledger import append_ledger
from tests.bench.common import run_line
from tests.e2e.library.test_graph_in_browser import BACKGROUND, SHOTS, assert_labels_apart
from tests.procs import ServerProcess, start_server

pytestmark = pytest.mark.e2e

AT = "2026-12-06T00:00:00Z"
PER_SOURCE = 20
FORMULAS = [
    r"\frac{a+b}{2} \ge \sqrt{ab}",
    r"\sigma^{-1}(321)\sigma(123)=(r23)",
    r"\sum_{k=1}^{n} k = \frac{n(n+1)}{2}",
    r"\int_0^1 x^2\,dx",
]
BRACKETS = "n_brackets"  # its name and statement escape the brackets of [0,1] inside the formula
BRACKETS_NAME = r"Continuity on $\[0,1\]$"
BRACKETS_STATEMENT = r"$$f\colon \[0,1\] \to \mathbb{R}$$ is continuous, so it is bounded on $\[0,1\]$."


def write_math_graph(data_dir: Path) -> int:
    """2 sources × 20 propositions named with formulas (one with escaped brackets), a chain from
    each proposition to the next within its source. Returns the view's node count."""
    root = data_dir / "graph"
    root.mkdir(parents=True)
    nodes, positions, chains = [], {}, []
    for s in range(2):
        ids = [BRACKETS if s == 0 and i == 0 else f"n_{s}_{i:02d}" for i in range(PER_SOURCE)]
        for i, nid in enumerate(ids):
            if nid == BRACKETS:
                name, statement = BRACKETS_NAME, BRACKETS_STATEMENT
            else:
                name = f"Rule {s}.{i} ${FORMULAS[i % len(FORMULAS)]}$"
                statement = f"{name} holds."
            nodes.append(
                NodeLine(
                    id=nid,
                    name=name,
                    statement=statement,
                    provenance=Provenance(source=f"src_{s}", job="job_m"),
                    at=AT,
                )
            )
            a = i * math.pi * (3 - math.sqrt(5))
            positions[nid] = [
                s * 700 + 30 * math.sqrt(i + 1) * math.cos(a),
                30 * math.sqrt(i + 1) * math.sin(a),
            ]
        for premise, conclusion in itertools.pairwise(ids):
            cid = chain_id([premise], conclusion)
            chains.append(
                ChainLine(
                    id=cid,
                    premises=[premise],
                    conclusion=conclusion,
                    provenance=Provenance(source=f"src_{s}", job="job_m"),
                    at=AT,
                )
            )
            positions[cid] = [
                (positions[premise][0] + positions[conclusion][0]) / 2 + 4,
                positions[premise][1] + 4,
            ]
    append_ledger(
        root / "sources.jsonl",
        [SourceLine(id=f"src_{s}", kind="notes", title=f"notes/m{s}.md", at=AT) for s in range(2)],
    )
    append_ledger(root / "nodes.jsonl", nodes)
    append_ledger(root / "chains.jsonl", chains)
    append_ledger(root / "sessions.jsonl", [run_line("src_0", "job_m", len(nodes), len(chains))])
    (root / "positions.json").write_text(json.dumps(positions))
    return len(nodes) + len(chains)


@pytest.fixture
def math_server(tmp_path: Path) -> Iterator[tuple[ServerProcess, int]]:
    count = write_math_graph(tmp_path / "data")
    server = start_server(tmp_path / "data")
    try:
        yield server, count
    finally:
        server.stop()


def open_graph(page: Page, server: ServerProcess, count: int) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(server.url + "/")
    page.wait_for_function(
        "n => !!window.__lhGraph && window.__lhGraph.stats().nodes === n && window.__lhGraph.stats().settled",
        arg=count,
        timeout=30_000,
    )


def label_ink(page: Page, box: list[float]) -> float:
    """The share of a label box's canvas pixels that are not background."""
    return float(
        page.evaluate(
            """([box, bg]) => {
              const c = document.querySelector('[data-testid="graph-canvas"]');
              const r = window.devicePixelRatio || 1;
              const [x0, y0, x1, y1] = box.map((v) => Math.round(v * r));
              const w = Math.max(1, x1 - x0);
              const h = Math.max(1, y1 - y0);
              const d = c.getContext('2d').getImageData(x0, y0, w, h).data;
              let inked = 0;
              for (let i = 0; i < d.length; i += 4) {
                const off = Math.abs(d[i] - bg[0]) + Math.abs(d[i + 1] - bg[1]) + Math.abs(d[i + 2] - bg[2]);
                if (off > 24) inked++;
              }
              return inked / (d.length / 4);
            }""",
            [box, list(BACKGROUND)],
        )
    )


def test_canvas_labels_show_typeset_math(page: Page, math_server: tuple[ServerProcess, int]) -> None:
    server, count = math_server
    open_graph(page, server, count)
    # reading distance on the first source: its labels show
    page.evaluate("id => window.__lhGraph.focus(id, 1.6)", "n_0_05")
    # (plain text for a frame or two, typeset once their bitmaps are ready): in the end every node
    # label drawn is typeset (every name here holds a formula)...
    page.wait_for_function(
        "() => { const s = window.__lhGraph.stats(); return s.labels >= 5 && s.mathLabels === s.labels; }",
        timeout=30_000,
    )
    stats: dict[str, Any] = page.evaluate("window.__lhGraph.stats()")
    assert_labels_apart(stats)
    # ...and set as math, not as one line of text: fractions and sums stand taller than the 14 px
    # of a plain label (and the 15 px of a session's)
    heights = sorted(b[3] - b[1] for b in stats["labelBoxes"])
    assert heights[-1] > 18, heights
    # with ink in them (a blank bitmap would pass the rest)
    tallest = max(stats["labelBoxes"], key=lambda b: b[3] - b[1])
    assert label_ink(page, tallest) > 0.05, tallest
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "e2e-math-labels.png"))


def test_escaped_brackets_inside_a_formula_render_without_error(
    page: Page, math_server: tuple[ServerProcess, int]
) -> None:
    server, count = math_server
    open_graph(page, server, count)
    # the node card: its statement's display formula and inline formula typeset whole
    page.evaluate("id => window.__lhGraph.focus(id, 1)", BRACKETS)
    page.wait_for_function("() => window.__lhGraph.stats().settled")
    pos = page.evaluate("id => window.__lhGraph.nodeScreenPosition(id)", BRACKETS)
    page.mouse.click(pos["x"], pos["y"])
    card = page.get_by_test_id("node-card")
    expect(card).to_have_attribute("data-node-id", BRACKETS)
    expect(card.get_by_test_id("node-statement").locator(".katex")).to_have_count(2)
    expect(card.get_by_test_id("node-statement")).to_contain_text("[0,1]")
    expect(page.locator(".katex-error")).to_have_count(0)
    card.get_by_test_id("node-card-close").click()

    # the chain table: the chain's statements shown, every formula typeset, none in red
    page.get_by_test_id("open-chain-table").click()
    table = page.get_by_test_id("chain-table")
    table.get_by_test_id("toggle-cluster").first.click()
    row = table.locator('[data-testid="table-chain"]', has=page.locator(f'[data-node-id="{BRACKETS}"]')).first
    row.get_by_test_id("toggle-chain").click()
    statement = table.locator(f'[data-testid="table-statement"][data-node-id="{BRACKETS}"]')
    expect(statement).to_be_visible()
    expect(statement.locator(".statement-text .katex")).to_have_count(2)
    expect(statement).to_contain_text("[0,1]")
    expect(page.locator(".katex-error")).to_have_count(0)
    assert page.locator(".katex").count() > 10
