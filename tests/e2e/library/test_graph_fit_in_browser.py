"""The home graph fitted on small screens (issue 29, item 4), in real Chromium against `python -m
server`: at 390x844 and 800x600 a fresh fit leaves every cluster (each node with its hull's
padding) inside the canvas and out from under the page's chrome over the graph (the title card,
the tools, the hint at the bottom); every drawn label (node and cluster) lies whole inside the
canvas and not under the chrome; no two labels overlap; cluster labels show. "Fit" after zooming
in does the same.

The notes are read by the scripted extractor of test_graph_in_browser (three propositions per
note, named after its first lines: long labels, as real notes give).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.library.test_graph_in_browser import (
    NOTES,
    assert_labels_apart,
    graph,
    graph_reply,
    import_notes,
    wait_rendered,
)
from tests.procs import ServerProcess, server_on_stub

pytestmark = pytest.mark.e2e

SHOTS = Path("/tmp/graph-shots")
HULL_PAD = 5 * 2.4 + 8


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, graph_reply) as proc:
        import_notes(proc, NOTES)
        yield proc


def chrome_boxes(page: Page) -> list[dict[str, float]]:
    """The boxes of the chrome over the graph, in canvas px."""
    boxes: list[dict[str, float]] = page.evaluate(
        """() => {
          const c = document.querySelector('[data-testid="graph-canvas"]').getBoundingClientRect();
          return [...document.querySelectorAll('[data-graph-chrome]')].map((el) => {
            const r = el.getBoundingClientRect();
            const [x0, y0] = [r.left - c.left, r.top - c.top];
            return { name: el.className, x0, y0, x1: r.right - c.left, y1: r.bottom - c.top };
          });
        }"""
    )
    assert {b["name"] for b in boxes} >= {"graph-title", "graph-tools", "graph-hint"}, boxes
    return boxes


def assert_fitted(page: Page, view: dict[str, Any], label: str) -> None:
    stats = wait_rendered(page, len(view["nodes"]))
    canvas = page.get_by_test_id("graph-canvas").bounding_box()
    assert canvas is not None
    width, height = canvas["width"], canvas["height"]
    chrome = chrome_boxes(page)
    for c in chrome:  # the title, every tool and the hint whole on the canvas
        assert c["x0"] >= 0 and c["x1"] <= width and c["y0"] >= 0 and c["y1"] <= height, (label, c)
    boxes = stats["labelBoxes"]
    assert stats["hullLabels"] and stats["labels"] > 0, stats
    assert_labels_apart(stats)
    for x0, y0, x1, y1 in boxes:
        assert x0 >= 0 and y0 >= 0 and x1 <= width and y1 <= height, (label, (x0, y0, x1, y1), width, height)
        for c in chrome:
            overlap = x0 < c["x1"] and x1 > c["x0"] and y0 < c["y1"] and y1 > c["y0"]
            assert not overlap, (label, (x0, y0, x1, y1), c)
    # a cluster's hull reaches HULL_PAD world units beyond its nodes (draw.ts hullPad, node size 5)
    pad = HULL_PAD * stats["zoom"]
    for node in view["nodes"]:
        pos = page.evaluate("id => window.__lhGraph.nodeScreenPosition(id)", node["id"])
        x, y = pos["x"] - canvas["x"], pos["y"] - canvas["y"]
        hull = (x - pad, y - pad, x + pad, y + pad)
        assert hull[0] >= 0 and hull[1] >= 0 and hull[2] <= width and hull[3] <= height, (
            label,
            node["id"],
            hull,
            width,
            height,
        )
        for c in chrome:
            overlap = hull[0] < c["x1"] and hull[2] > c["x0"] and hull[1] < c["y1"] and hull[3] > c["y0"]
            assert not overlap, (label, node["id"], hull, c)


@pytest.mark.parametrize(("width", "height"), [(390, 844), (800, 600)])
def test_the_graph_is_fitted_on_small_screens(
    browser: Browser, server: ServerProcess, width: int, height: int
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    view = graph(server)
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(server.url + "/")
        assert_fitted(page, view, f"first fit {width}x{height}")
        page.screenshot(path=str(SHOTS / f"fit-{width}x{height}.png"))

        # zoomed in far, then "Fit": the same
        box = page.get_by_test_id("graph-canvas").bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        for _ in range(6):
            page.mouse.wheel(0, -240)
        page.wait_for_function("() => window.__lhGraph.stats().settled")
        page.get_by_test_id("graph-fit").click()
        page.wait_for_function("() => window.__lhGraph.stats().settled")
        assert_fitted(page, view, f"Fit {width}x{height}")
    finally:
        context.close()
