"""The trash in real Chromium (issue 31 item 6, decision 0043): Undo in the toast that confirms a
lesson's deletion brings it back; Settings → Trash lists what was deleted, restores it and empties
the trash; a graph deletion undone within its seconds sends nothing and changes nothing, and one
not undone is sent when its seconds are up."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, Request, expect

from tests.bench.library.bench_graph_read import write_graph
from tests.e2e.machine_room.test_backup_in_browser import STRONG, lesson, titles
from tests.flows.machine_room.test_backup_restore import seed
from tests.procs import start_server

pytestmark = pytest.mark.e2e


def trash_ids(url: str) -> list[str]:
    return [e["id"] for e in httpx.get(f"{url}/api/trash", timeout=30).json()["entries"]]


def node_ids(url: str) -> set[str]:
    """The graph's propositions and implications (chains) by id."""
    return {n["id"] for n in httpx.get(f"{url}/api/graph", timeout=30).json()["nodes"]}


def delete_lesson(page: Page, title: str) -> None:
    page.get_by_test_id("sidebar").get_by_role("button", name=f"Delete “{title}”").click()
    dialog = page.get_by_test_id("confirm-dialog")
    expect(dialog).to_contain_text("trash")
    dialog.get_by_test_id("confirm-delete").click()
    expect(dialog).to_have_count(0)


def test_undo_in_the_toast_and_settings_restore_and_empty(page: Page, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"models": {"strong": STRONG}}))
    lesson(data, "c_heaps", "Heaps")
    lesson(data, "c_trees", "Trees")
    server = start_server(data)
    try:
        page.goto(f"{server.url}/")
        sidebar = page.get_by_test_id("sidebar")
        expect(sidebar.get_by_test_id("session-row")).to_have_count(2)

        # Undo in the toast: the lesson is back, whole, and the trash is empty again
        delete_lesson(page, "Heaps")
        expect(sidebar.get_by_test_id("session-row")).to_have_count(1)
        assert titles(server.url) == ["Trees"] and trash_ids(server.url) == ["c_heaps"]
        toast = page.get_by_test_id("toast")
        expect(toast).to_contain_text("Deleted “Heaps”")
        toast.get_by_test_id("toast-action").click()
        expect(toast).to_have_count(0)
        expect(sidebar.get_by_test_id("session-row")).to_have_count(2)
        assert titles(server.url) == ["Heaps", "Trees"] and trash_ids(server.url) == []
        page.get_by_role("button", name="Delete “Heaps”").wait_for()
        assert httpx.get(f"{server.url}/api/chats/c_heaps", timeout=30).json()["messages"][0]["id"] == "u1"

        # Settings → Trash lists a deleted lesson and restores it
        delete_lesson(page, "Trees")
        page.get_by_test_id("toast").get_by_role("button", name="Close").click()
        page.get_by_test_id("settings-link").click()
        section = page.get_by_test_id("trash-settings")
        row = section.get_by_test_id("trash-row")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("Trees")
        expect(row).to_contain_text("Lesson · removed for good in 30 days")
        row.get_by_test_id("trash-restore").click()
        expect(section.get_by_test_id("trash-empty")).to_be_visible()
        expect(sidebar.get_by_test_id("session-row")).to_have_count(2)
        assert titles(server.url) == ["Heaps", "Trees"]

        # Empty the trash: asked first, then removed for good
        # deleted in the sidebar while Settings is open: the trash shows them without a reload
        delete_lesson(page, "Heaps")
        delete_lesson(page, "Trees")
        expect(section.get_by_test_id("trash-row")).to_have_count(2)
        section.get_by_test_id("trash-empty-button").click()
        dialog = page.get_by_test_id("confirm-dialog")
        expect(dialog).to_contain_text("2 items are removed for good")
        dialog.get_by_test_id("confirm-delete").click()
        expect(section.get_by_test_id("trash-empty")).to_be_visible()
        assert trash_ids(server.url) == [] and titles(server.url) == []
        assert list((data / "trash").iterdir()) == []
    finally:
        server.stop()


def test_a_graph_deletion_undone_in_its_seconds_sends_nothing(page: Page, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"models": {"strong": STRONG}}))
    write_graph(data / "graph", 30)
    server = start_server(data)
    deletes: list[str] = []

    def seen(request: Request) -> None:
        if request.url.endswith("/api/graph/delete"):
            deletes.append(request.method)

    page.on("request", seen)
    try:
        page.goto(f"{server.url}/")
        page.get_by_test_id("open-chain-table").click()
        table = page.get_by_test_id("chain-table")
        table.get_by_test_id("table-cluster").first.get_by_test_id("toggle-cluster").click()
        row = table.get_by_test_id("table-chain").first
        chain_id = row.get_attribute("data-chain-id")
        before = node_ids(server.url)
        assert chain_id in node_ids(server.url)

        row.get_by_test_id("chain-delete").click()
        dialog = page.get_by_test_id("delete-dialog")
        expect(dialog.get_by_test_id("delete-permanence")).to_contain_text("Undo is offered")
        dialog.get_by_test_id("delete-confirm").click()
        toast = page.get_by_test_id("toast")
        expect(toast).to_contain_text("Deleting 1 chain from the graph")
        toast.get_by_test_id("toast-action").click()
        expect(toast).to_have_count(0)
        # absence needs its time: past the 6 s hold (GRAPH_UNDO_MS) nothing was sent or written
        page.wait_for_timeout(8_000)
        assert deletes == []
        assert node_ids(server.url) == before
        assert not (data / "graph" / "deleted.jsonl").exists()

        # not undone: sent when its seconds are up, and the chain goes
        row = table.locator(f'[data-testid="table-chain"][data-chain-id="{chain_id}"]')
        row.get_by_test_id("chain-delete").click()
        page.get_by_test_id("delete-dialog").get_by_test_id("delete-confirm").click()
        expect(page.get_by_test_id("toast")).to_contain_text("Deleting 1 chain")
        deadline = time.monotonic() + 60
        while chain_id in node_ids(server.url):
            assert time.monotonic() < deadline, "the held deletion was never sent"
            page.wait_for_timeout(200)  # not time.sleep: request events arrive in Playwright calls
        # the server may have answered before Playwright handed this script the request's event
        while not deletes and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        assert deletes == ["POST"] and node_ids(server.url) == before - {chain_id}
        expect(row).to_have_count(0)
    finally:
        server.stop()


def test_undo_in_the_toast_brings_a_problem_set_back(page: Page, tmp_path: Path) -> None:
    data = tmp_path / "data"
    seed(data)  # a problem set "Heaps" on disk
    record = json.loads((data / "practice" / "ps_0000000a.json").read_text())
    record["status"] = "error"  # ended: nothing resumes it at start
    (data / "practice" / "ps_0000000a.json").write_text(json.dumps(record))
    server = start_server(data)
    try:
        page.goto(f"{server.url}/practice")
        rows = page.get_by_test_id("practice-row")
        expect(rows).to_have_count(1)
        rows.get_by_test_id("practice-delete").click()
        dialog = page.get_by_test_id("practice-delete-dialog")
        expect(dialog).to_contain_text("go to the trash for 30 days")
        dialog.get_by_test_id("practice-delete-confirm").click()
        expect(rows).to_have_count(0)
        assert trash_ids(server.url) == ["ps_0000000a"]
        toast = page.get_by_test_id("toast")
        expect(toast).to_contain_text("Deleted “Heaps”")
        toast.get_by_test_id("toast-action").click()
        expect(rows).to_have_count(1)
        assert trash_ids(server.url) == []
        answer = httpx.get(f"{server.url}/api/practice/sets/ps_0000000a", timeout=30)
        assert answer.status_code == 200 and answer.json()["title"] == "Heaps"
    finally:
        server.stop()
