"""The graph's exports from the page (issue 31 item 2), in Chromium: the home toolbar's Export
menu downloads the whole graph as an Obsidian vault (a zip whose every wiki link resolves, a note
per proposition) and as an Anki deck (a note per proposition and per chain); the chain table's
selection bar exports the selected propositions and the chains among them the same way."""

from __future__ import annotations

import io
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.library.test_graph_in_browser import NOTES, graph, graph_server, import_notes, wait_rendered  # noqa: F401
from tests.procs import ServerProcess

pytestmark = pytest.mark.e2e
LINK = re.compile(r"\[\[([^\]|]+)(?:\|[^\]]*)?\]\]")


def vault_ids(path: Path) -> list[str]:
    """The ids in the notes' front matter; asserts every wiki link resolves to a note."""
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as archive:
        files = {n: archive.read(n).decode() for n in archive.namelist()}
    stems = {Path(n).stem for n in files}
    assert set(LINK.findall("".join(files.values()))) <= stems
    return [m.group(1) for t in files.values() if (m := re.match(r'---\nid: "([^"]+)"', t))]


def deck_guids(path: Path, tmp: Path) -> int:
    with zipfile.ZipFile(path) as archive:
        archive.extract("collection.anki2", tmp)
    count: int = sqlite3.connect(tmp / "collection.anki2").execute("SELECT count(*) FROM notes").fetchone()[0]
    return count


def test_the_home_page_and_the_selection_export_the_graph(
    page: Page,
    graph_server: ServerProcess,  # noqa: F811
    tmp_path: Path,
) -> None:
    import_notes(graph_server, NOTES)
    view = graph(graph_server)
    props = sorted(n["id"] for n in view["nodes"] if n["kind"] == "proposition")
    chains = [n for n in view["nodes"] if n["kind"] == "implication"]
    page.goto(graph_server.url + "/")
    wait_rendered(page, len(view["nodes"]))

    # the whole graph, from the toolbar
    page.get_by_test_id("graph-export").click()
    menu = page.get_by_test_id("graph-export-menu")
    expect(menu).to_contain_text("Obsidian vault (.zip)")
    expect(menu).to_contain_text("Anki deck (.apkg)")
    with page.expect_download() as started:
        menu.get_by_test_id("graph-export-vault").click()
    vault = started.value
    assert vault.suggested_filename == "Learning Harness graph.zip"
    assert sorted(vault_ids(Path(vault.path()))) == props
    expect(menu).to_have_count(0)  # the menu closed
    page.get_by_test_id("graph-export").click()
    with page.expect_download() as started:
        page.get_by_test_id("graph-export-deck").click()
    deck = started.value
    assert deck.suggested_filename == "Learning Harness graph.apkg"
    assert deck_guids(Path(deck.path()), tmp_path / "all") == len(props) + len(chains)

    # the chain table's selection: one chain's two propositions
    page.get_by_test_id("open-chain-table").click()
    table = page.get_by_test_id("chain-table")
    table.get_by_test_id("table-cluster").first.get_by_test_id("toggle-cluster").click()
    table.get_by_test_id("table-chain").first.get_by_test_id("select-chain").check()
    bar = page.get_by_test_id("selection-bar")
    expect(bar.get_by_test_id("selection-summary")).to_have_text("2 nodes → 1 chain")
    # Export sits among the safe actions, before the fence and Delete
    order = bar.evaluate(
        "bar => [...bar.querySelectorAll('[data-testid]')].map(e => e.dataset.testid)"
        ".filter(t => ['selection-generate', 'selection-export', 'selection-fence',"
        " 'selection-delete'].includes(t))"
    )
    assert order == ["selection-generate", "selection-export", "selection-fence", "selection-delete"]
    bar.get_by_test_id("selection-export").click()
    expect(bar.get_by_test_id("selection-export-words")).to_have_text(
        "Export 2 propositions and the chain among them"
    )
    with page.expect_download() as started:
        bar.get_by_test_id("selection-export-vault").click()
    picked = started.value
    assert picked.suggested_filename == "Learning Harness graph.zip"
    assert len(vault_ids(Path(picked.path()))) == 2
    bar.get_by_test_id("selection-export").click()
    with page.expect_download() as started:
        bar.get_by_test_id("selection-export-deck").click()
    assert deck_guids(Path(started.value.path()), tmp_path / "picked") == 3  # 2 propositions, 1 chain
    expect(bar.get_by_test_id("selection-export-error")).to_have_count(0)
