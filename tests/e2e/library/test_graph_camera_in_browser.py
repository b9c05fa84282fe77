"""The graph's camera is kept per device (seed §6: "the camera persists per-device in
localStorage"; issue 30 item 6), in real Chromium against `python -m server`.

A window pans and zooms the home graph; after a reload the same browser profile (this device)
shows exactly that view, while a fresh profile (another device) gets the whole graph fitted; the
server keeps no camera (render settings and positions are shared, the view is not)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.library.test_graph_in_browser import graph, graph_reply, import_notes, wait_rendered
from tests.procs import ServerProcess, server_on_stub

pytestmark = pytest.mark.e2e

CAMERA_KEY = "lh.graph.camera.v1"  # frontend/src/components/library/graph/renderer.ts
NOTES = ["data-structures-heap.en.md"]
SAVED = """([key, want]) => {
  const c = JSON.parse(localStorage.getItem(key) || 'null');
  return !!c && Object.entries(want).every(([name, v]) => Math.abs(c[name] - v) < 0.02);
}"""
"""True once the stored camera has every value of `want` (x, y in px to 0.02, k)."""


@pytest.fixture
def graph_server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, graph_reply) as server:
        yield server


def open_home(page: Page, server: ServerProcess, count: int) -> dict[str, Any]:
    page.set_viewport_size({"width": 1200, "height": 800})
    page.goto(server.url + "/")
    return wait_rendered(page, count)


def stored(page: Page) -> dict[str, float] | None:
    raw = page.evaluate("key => localStorage.getItem(key)", CAMERA_KEY)
    return json.loads(raw) if raw else None


def screen(page: Page, node_id: str) -> tuple[float, float]:
    pos = page.evaluate("id => window.__lhGraph.nodeScreenPosition(id)", node_id)
    assert pos is not None, node_id
    return pos["x"], pos["y"]


def test_the_camera_is_kept_per_device_and_not_on_the_server(
    browser: Browser, graph_server: ServerProcess, data_dir: Path
) -> None:
    import_notes(graph_server, NOTES)
    nodes = graph(graph_server)["nodes"]
    node = next(n for n in nodes if n["kind"] == "proposition")["id"]

    this_device = browser.new_context()
    other_device = browser.new_context()
    try:
        page = this_device.new_page()
        fitted = open_home(page, graph_server, len(nodes))["zoom"]
        # zoom in on a node, then pan: this device's own view, saved (a 250 ms debounce) each time
        page.evaluate("([id, k]) => window.__lhGraph.focus(id, k)", [node, fitted * 2.5])
        page.wait_for_function(SAVED, arg=[CAMERA_KEY, {"k": fitted * 2.5}], timeout=10_000)
        zoomed = stored(page)
        assert zoomed is not None
        page.evaluate("() => window.__lhGraph.panBy(90, -60)")
        target = {"x": zoomed["x"] + 90, "y": zoomed["y"] - 60, "k": zoomed["k"]}
        page.wait_for_function(SAVED, arg=[CAMERA_KEY, target], timeout=10_000)
        camera = stored(page)
        assert camera is not None and abs(camera["k"] - fitted * 2.5) < 1e-3
        where = screen(page, node)

        page.reload()  # the same device: the same view
        again = wait_rendered(page, len(nodes))
        assert abs(again["zoom"] - camera["k"]) < 1e-3, (again["zoom"], camera)
        x, y = screen(page, node)
        assert abs(x - where[0]) < 3 and abs(y - where[1]) < 3, ((x, y), where)
        assert stored(page) == camera  # restoring did not overwrite it with a fit

        other = other_device.new_page()  # another device: its own camera, a fit of the whole graph
        assert abs(open_home(other, graph_server, len(nodes))["zoom"] - fitted) < 1e-3
        assert abs(other.evaluate("() => window.__lhGraph.stats().zoom") - camera["k"]) > 0.1
    finally:
        this_device.close()
        other_device.close()

    settings = httpx.get(graph_server.url + "/api/graph/settings", timeout=10).json()
    assert "camera" not in json.dumps(settings).lower()
    kept = [
        p for p in data_dir.rglob("*") if p.is_file() and "camera" in p.read_text(errors="ignore").lower()
    ]
    assert kept == []  # nothing of the view reached the server's data
