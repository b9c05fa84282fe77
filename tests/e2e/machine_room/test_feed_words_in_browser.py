"""The feed's words in real Chromium (issue 28, item 7): three small notes picked together are read
by one packed call, and each file's model use and each activity row say their share of it, never
"no model calls" beside their new propositions; a practice job's rows are "Practice", never
"Notes"; the graph counts notes files as notes, never as "sessions".

One scripted OpenAI-compatible stub plays every role (tests/scripts/practice.py: the extractor,
which reads packs, the auditor, and the practice stages); its every answer reports 10 + 10
tokens."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import FilePayload, Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.practice import practice_reply

pytestmark = pytest.mark.e2e

NOTES = {
    "heap.md": "# Binary heap\n# Heap order\n",
    "stack.md": "# Stack\n# Last in first out\n",
    "queue.md": "# Queue\n# First in first out\n",
}


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, practice_reply) as proc:
        yield proc


def test_packed_notes_practice_rows_and_graph_counts_say_what_is_true(
    page: Page, server: ServerProcess
) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("nav-library").click()
    picked: list[FilePayload] = [
        {"name": n, "mimeType": "text/markdown", "buffer": t.encode()} for n, t in NOTES.items()
    ]
    page.get_by_test_id("import-files").set_input_files(picked)
    page.get_by_test_id("import-submit").click()

    # each file: done, with its share of the pack's calls (the import list's model use)
    for name in NOTES:
        result = page.locator(f'[data-testid="import-result"][data-name="{name}"]')
        expect(result).to_have_attribute("data-status", "done", timeout=30_000)
        expect(result).to_contain_text("2 new propositions")
        usage = result.get_by_test_id("import-usage")
        expect(usage).to_contain_text("its share of")
        expect(usage).to_contain_text(f"for {len(NOTES)} notes")
        expect(usage).not_to_contain_text("no model calls")

    # the activity dock: each note's row is Notes, with its share of the pack
    page.get_by_test_id("activity-toggle").click()
    dock = page.get_by_test_id("activity-dock")
    notes_rows = dock.locator('[data-testid="activity-row"][data-source^="src_"]')
    expect(notes_rows).to_have_count(len(NOTES), timeout=10_000)
    for i in range(len(NOTES)):
        row = notes_rows.nth(i)
        expect(row).to_have_attribute("data-phase", "done")
        expect(row.get_by_test_id("activity-kind")).to_have_text("Notes")
        expect(row.get_by_test_id("activity-usage")).to_contain_text(
            f"its share of 2 model calls for {len(NOTES)} notes"
        )
        expect(row).to_contain_text("2 new propositions")
    expect(dock).not_to_contain_text("no model calls")

    # a practice set's rows are Practice, never Notes
    graph = httpx.get(f"{server.url}/api/graph", timeout=10).json()
    ids = [n["id"] for n in graph["nodes"] if not str(n["id"]).startswith("arg_")]
    created = httpx.post(f"{server.url}/api/practice/sets", json={"nodeIds": ids}, timeout=10)
    assert created.status_code == 202, created.text
    set_id = created.json()["id"]
    practice_rows = dock.locator(f'[data-testid="activity-row"][data-source^="{set_id}"]')
    expect(practice_rows.first).to_be_visible(timeout=30_000)
    kinds = practice_rows.get_by_test_id("activity-kind")
    expect(kinds.first).to_have_text("Practice")
    assert set(kinds.all_inner_texts()) == {"Practice"}
    expect(practice_rows.first.get_by_role("link")).to_have_attribute("href", "/practice")

    # the new-set dialog's picker counts picked notes files as notes, never as sessions
    page.get_by_test_id("activity-close").click()
    page.goto(server.url + "/practice")
    page.get_by_test_id("practice-new").click()
    options = page.get_by_test_id("cluster-option")
    expect(options).to_have_count(len(NOTES), timeout=10_000)
    options.nth(0).locator("input").check()
    options.nth(1).locator("input").check()
    expect(page.get_by_test_id("picked-summary")).to_have_text("2 notes · 4 nodes")
    page.keyboard.press("Escape")

    # the graph counts three notes files as notes, never as sessions
    page.goto(server.url + "/")
    expect(page.get_by_test_id("graph-counts")).to_be_visible(timeout=30_000)
    counts = page.get_by_test_id("graph-counts")
    expect(counts).to_contain_text(re.compile(r"· 3 notes$"), timeout=30_000)
    expect(counts).not_to_contain_text("session")
