"""Folder clusters in real Chromium (issue 17 item 2): notes imported from a folder read as the
folder's table of contents. At Fit the canvas draws the folder hulls with the folders' names and
no file label; zoomed into a folder the files' labels appear; the chain table groups the files
under collapsible folder rows, operable from the keyboard.

The fixture notes are read from /work/shared/fixtures/notes (tests/shared.py; not copied) and
uploaded under folder paths, as a picked folder sends them; the extractor is the scripted stub of
test_graph_in_browser (three propositions per file, two chains).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.library.test_graph_in_browser import NOTES_DIR, graph, graph_reply, wait_rendered
from tests.procs import ServerProcess, server_on_stub

pytestmark = pytest.mark.e2e

FILES = {
    "vault/algorithms/dijkstra.md": "algorithms-graph-dijkstra.en.md",
    "vault/algorithms/knapsack.md": "algorithms-sets-knapsack-problem.en.md",
    "vault/algorithms/bits.md": "algorithms-math-bits.en.md",
    "vault/math/analysis.md": "analysis-1-definitions.de.md",
    "vault/math/rank.md": "rank-factorization.de.md",
    "vault/structures/heap.md": "data-structures-heap.en.md",
}
FOLDERS = {"algorithms", "math", "structures"}
SHOTS = Path("/tmp/graph-shots")  # screenshots for a look; not committed


@pytest.fixture
def graph_server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, graph_reply) as server:
        yield server


def import_folder(server: ServerProcess) -> None:
    files = [
        ("files", (path, (NOTES_DIR / name).read_bytes(), "text/markdown")) for path, name in FILES.items()
    ]
    answer = httpx.post(server.url + "/api/graph/import", files=files, timeout=30)
    assert answer.status_code == 202, answer.text
    sources = {f["sourceId"] for f in answer.json()["files"]}
    assert len(sources) == len(FILES)
    deadline = time.monotonic() + 40
    mine: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        rows = httpx.get(server.url + "/api/activity", timeout=10).json()["rows"]
        mine = [r for r in rows if r["source"] in sources]
        assert not [r for r in mine if r["phase"] in ("failed", "aborted", "lost")], mine
        if {r["source"] for r in mine} == sources and all(r["phase"] == "done" for r in mine):
            return
        time.sleep(0.2)
    raise AssertionError(f"the extractions did not finish: {mine}")


def test_folders_read_at_fit_and_files_when_zoomed(page: Page, graph_server: ServerProcess) -> None:
    import_folder(graph_server)
    view = graph(graph_server)
    assert {f["label"] for f in view["folders"]} == FOLDERS
    assert all(c["folder"] for c in view["clusters"])
    files = {c["label"] for c in view["clusters"]}
    assert files == {p.rsplit("/", 1)[1] for p in FILES}

    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(graph_server.url + "/")
    wait_rendered(page, len(view["nodes"]))
    page.evaluate("window.__lhGraph.fit()")
    page.wait_for_function("() => window.__lhGraph.stats().settled")
    page.wait_for_function("n => window.__lhGraph.stats().folderLabels.length === n", arg=len(FOLDERS))
    stats = page.evaluate("window.__lhGraph.stats()")
    assert set(stats["folderLabels"]) == FOLDERS, stats["hullLabels"]
    assert stats["fileLabels"] == [] and not set(stats["hullLabels"]) & files, stats["hullLabels"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "e2e-folders-fit.png"))
    boxes = stats["labelBoxes"]
    for i, a in enumerate(boxes):  # no two labels overlap
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)

    # zoomed into one folder: its files' hulls and labels appear
    inside = [
        n for n in view["nodes"] if n["kind"] == "proposition" and n["cluster"] in _keys(view, "algorithms")
    ]
    cx = sum(n["x"] for n in inside) / len(inside)
    cy = sum(n["y"] for n in inside) / len(inside)
    middle = min(inside, key=lambda n: (n["x"] - cx) ** 2 + (n["y"] - cy) ** 2)
    page.evaluate("id => window.__lhGraph.focus(id, 2.5)", middle["id"])
    page.wait_for_function("() => window.__lhGraph.stats().fileLabels.length > 0", timeout=10_000)
    zoomed = page.evaluate("window.__lhGraph.stats()")
    page.screenshot(path=str(SHOTS / "e2e-folders-zoomed.png"))
    in_algorithms = {"dijkstra.md", "knapsack.md", "bits.md"}
    shown = set(zoomed["fileLabels"])
    assert shown <= files and shown & in_algorithms, zoomed["hullLabels"]

    # a folder of one file: the file's label goes under its hull (the folder's takes the top)
    heap = next(
        n for n in view["nodes"] if n["kind"] == "proposition" and n["cluster"] in _keys(view, "structures")
    )
    page.evaluate("id => window.__lhGraph.focus(id, 2.5)", heap["id"])
    page.wait_for_function("() => window.__lhGraph.stats().fileLabels.includes('heap.md')", timeout=10_000)
    alone = page.evaluate("window.__lhGraph.stats()")
    assert "structures" in alone["folderLabels"], alone["hullLabels"]

    # the chain table: one row per folder, files under it, collapsible from the keyboard
    page.get_by_test_id("open-chain-table").click()
    folders = page.get_by_test_id("table-folder")
    expect(folders).to_have_count(len(FOLDERS))
    expect(page.get_by_test_id("table-cluster")).to_have_count(len(FILES))
    algorithms = page.locator('[data-testid="table-folder"]', has_text="algorithms").get_by_test_id(
        "toggle-folder"
    )
    expect(algorithms).to_have_attribute("title", "vault/algorithms")
    algorithms.focus()
    page.keyboard.press("Enter")
    expect(algorithms).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_test_id("table-cluster")).to_have_count(len(FILES) - 3)
    page.keyboard.press("Space")
    expect(algorithms).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_test_id("table-cluster")).to_have_count(len(FILES))


def _keys(view: dict[str, Any], folder: str) -> set[str]:
    return {c for f in view["folders"] if f["label"] == folder for c in f["clusters"]}
