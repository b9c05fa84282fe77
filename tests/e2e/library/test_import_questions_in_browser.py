"""What the Import notes page asks before it changes what the graph holds, in real Chromium
(issue 28, items 4 and 5), against the real server and the scripted extractor over HTTP.

- Item 4: a folder picked again after notes were deleted from it lists the notes that are gone;
  nothing is removed until the learner confirms once, then what they said leaves the graph.
- Item 5: a single file whose name matches a note with other content is asked about; "keep both"
  makes a new note beside the first, "replace" replaces the one chosen.

The notes are small texts written under tmp_path (the folder the browser picks), not fixtures.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.livehttp import serve
from tests.procs import ServerProcess, start_on_stub
from tests.scripts.library import graph_reply
from tests.stub_openai import create_stub

pytestmark = pytest.mark.e2e
SHOTS = Path("/tmp/import-shots")  # screenshots for a look; not committed

NOTES = {
    "a.md": "# Alpha heaps\nA heap keeps its minimum at the root.\n",
    "b.md": "# Beta graphs\nA graph has vertices and edges.\n",
    "sub/c.md": "# Gamma tries\nA trie stores strings by their prefixes.\n",
}


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with serve(create_stub(graph_reply, delay_s=0)) as stub_url:
        process = start_on_stub(data_dir, stub_url)
        try:
            yield process
        finally:
            process.stop()


def sources(server: ServerProcess) -> dict[str, dict[str, Any]]:
    """The graph's sources by title."""
    listed = httpx.get(server.url + "/api/graph/sources", timeout=10).json()["sources"]
    return {s["title"]: s for s in listed}


def wait_for(check: Any, what: str, timeout: float = 40) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def open_import(page: Page, server: ServerProcess) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("nav-library").click()


def result(page: Page, name: str) -> Any:
    return page.locator(f'[data-testid="import-result"][data-name="{name}"]').first


def test_notes_gone_from_a_repicked_folder_are_removed_on_one_confirmation(
    page: Page, server: ServerProcess, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    open_import(page, server)
    page.get_by_test_id("import-folder").set_input_files(str(vault))
    expect(page.get_by_test_id("import-pick")).to_have_count(3)
    page.get_by_test_id("import-submit").click()
    for rel in NOTES:
        expect(result(page, f"vault/{rel}")).to_have_attribute("data-status", "done", timeout=40_000)
    expect(page.get_by_test_id("import-gone")).to_have_count(0)  # nothing is gone yet
    wait_for(lambda: {"a.md", "b.md", "c.md"} <= set(sources(server)), "the three notes in the graph")

    # b.md and sub/c.md deleted; the folder picked again
    (vault / "b.md").unlink()
    (vault / "sub" / "c.md").unlink()
    page.get_by_test_id("import-folder").set_input_files(str(vault))
    expect(page.get_by_test_id("import-pick")).to_have_count(1)
    page.get_by_test_id("import-submit").click()
    gone = page.get_by_test_id("import-gone")
    expect(gone).to_be_visible(timeout=20_000)
    expect(gone).to_contain_text("2 notes are no longer in vault")
    expect(gone.get_by_test_id("import-gone-note")).to_have_text(
        [re.compile(r"^vault/b\.md"), re.compile(r"^vault/sub/c\.md")]
    )
    expect(result(page, "vault/a.md")).to_have_attribute("data-status", "unchanged")
    SHOTS.mkdir(exist_ok=True)
    gone.screenshot(path=str(SHOTS / "import-gone.png"))
    # listed, not removed: what they said is still in the graph
    held = sources(server)
    assert held["b.md"]["propositions"] > 0 and held["c.md"]["propositions"] > 0, held

    # the one confirmation
    gone.get_by_test_id("import-gone-remove").click()
    expect(page.get_by_test_id("import-gone")).to_have_count(0)
    for name in ("vault/b.md", "vault/sub/c.md"):
        expect(result(page, name)).to_have_attribute("data-status", "removed", timeout=10_000)
        expect(result(page, name)).to_contain_text("taken out of your graph")
    wait_for(
        lambda: {"b.md", "c.md"}.isdisjoint(sources(server)) and "a.md" in sources(server),
        "the removed notes' propositions to leave the graph",
    )

    # picked again: nothing more is gone, so nothing is asked
    page.get_by_test_id("import-folder").set_input_files(str(vault))
    page.get_by_test_id("import-submit").click()
    # (the page checks what is gone before it shows the summary)
    expect(page.get_by_test_id("import-summary")).to_contain_text("1 unchanged", timeout=10_000)
    expect(page.get_by_test_id("import-gone")).to_have_count(0)


def test_a_same_named_single_file_is_asked_about(page: Page, server: ServerProcess) -> None:
    open_import(page, server)

    def pick(text: str) -> None:
        page.get_by_test_id("import-files").set_input_files(
            {"name": "notes.md", "mimeType": "text/markdown", "buffer": text.encode()}
        )
        page.get_by_test_id("import-submit").click()

    pick("# Heaps of one course\nA heap keeps its minimum at the root.\n")
    expect(result(page, "notes.md")).to_have_attribute("data-status", "done", timeout=40_000)

    # another course's notes.md: asked, nothing imported until answered
    pick("# Graphs of another course\nA graph has vertices and edges.\n")
    ask = page.get_by_test_id("import-ask")
    expect(ask).to_contain_text("A note named notes.md is already in your graph with other content")
    expect(page.get_by_test_id("import-summary")).to_contain_text("answer the question below")
    assert set(sources(server)) == {"notes.md"}
    ask.get_by_test_id("import-ask-new").click()
    expect(page.get_by_test_id("import-ask")).to_have_count(0)
    expect(result(page, "notes.md")).to_have_attribute("data-status", "done", timeout=40_000)
    both = wait_for(
        lambda: {"notes.md", "notes.md (2)"} <= set(sources(server)) and sources(server), "two notes"
    )
    first = both["notes.md"]["id"]

    # a third one: both notes of that name offered; "replace" the first
    pick("# Tries of a third course\nA trie stores strings by their prefixes.\n")
    buttons = page.get_by_test_id("import-ask").get_by_test_id("import-ask-replace")
    expect(buttons).to_have_count(2)
    SHOTS.mkdir(exist_ok=True)
    page.get_by_test_id("import-ask").screenshot(path=str(SHOTS / "import-ask.png"))
    page.locator(f'[data-testid="import-ask-replace"][data-source-id="{first}"]').click()
    replaced = result(page, "notes.md")
    expect(replaced.get_by_test_id("import-replaces")).to_have_text(
        "Replaces what the earlier notes.md said", timeout=10_000
    )
    expect(replaced).to_have_attribute("data-status", "done", timeout=40_000)
    names = wait_for(
        lambda: (lambda s: s if len(s) == 2 and s["notes.md"]["id"] == first else None)(sources(server)),
        "the replaced note",
    )
    assert set(names) == {"notes.md", "notes.md (2)"}

    # a fourth, left out: nothing imported
    pick("# Queues of a fourth course\nA queue is first in, first out.\n")
    page.get_by_test_id("import-ask").get_by_test_id("import-ask-skip").click()
    expect(page.get_by_test_id("import-summary")).to_have_text("notes.md was not imported.")
    assert len(sources(server)) == 2
