"""Settings → Backup in real Chromium (issue 31 item 4): download a backup of one data dir, restore
it into another: a file that is not a backup is refused in plain words; the backup is checked and
the page says what it holds and what it replaces before anything changes; confirmed, it waits for
a restart, after which the other server serves the backed-up lessons and graph."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.bench.library.bench_graph_read import write_graph
from tests.procs import start_server

pytestmark = pytest.mark.e2e

STRONG = {"provider": "openai-compatible", "model": "scripted", "baseUrl": "http://127.0.0.1:9/v1"}


def lesson(data: Path, chat_id: str, title: str) -> None:
    record = {
        "id": chat_id,
        "title": title,
        "titleBy": "learner",
        "createdAt": "2026-12-01T00:00:00.000Z",
        "updatedAt": "2026-12-01T00:00:00.000Z",
        "model": STRONG,
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is a heap?"}]}],
    }
    (data / "chats").mkdir(parents=True, exist_ok=True)
    (data / "chats" / f"{chat_id}.json").write_text(json.dumps(record))


def titles(url: str) -> list[str]:
    return sorted(c["title"] for c in httpx.get(f"{url}/api/chats", timeout=30).json()["chats"])


def test_back_up_one_data_dir_and_restore_it_into_another(page: Page, tmp_path: Path) -> None:
    original, other = tmp_path / "original", tmp_path / "other"
    for data in (original, other):
        data.mkdir()
        (data / "settings.json").write_text(json.dumps({"models": {"strong": STRONG}}))
    lesson(original, "c_heaps", "Heaps")
    lesson(original, "c_trees", "Trees")
    write_graph(original / "graph", 50)
    lesson(other, "c_mine", "Mine")

    first = start_server(original)
    try:
        page.goto(f"{first.url}/settings")
        section = page.get_by_test_id("backup-settings")
        expect(section).to_contain_text("API keys and subscription sign-ins are never in it")
        with page.expect_download() as download:
            page.get_by_test_id("backup-download").click()
        assert download.value.suggested_filename.startswith("learning-harness-backup-")
        archive = tmp_path / download.value.suggested_filename
        download.value.save_as(archive)
        graph_before = httpx.get(f"{first.url}/api/graph", timeout=30).json()
    finally:
        assert first.stop() == 0
    with zipfile.ZipFile(archive) as zf:
        assert {"chats/c_heaps.json", "chats/c_trees.json", "graph/nodes.jsonl"} <= set(zf.namelist())

    second = start_server(other)
    try:
        page.goto(f"{second.url}/settings")
        picker = page.get_by_test_id("backup-restore-file")
        not_a_backup = tmp_path / "notes.zip"
        not_a_backup.write_text("just some notes")
        picker.set_input_files(not_a_backup)
        expect(page.get_by_test_id("backup-error")).to_contain_text(
            "notes.zip was not restored: this is not a Learning Harness backup"
        )

        picker.set_input_files(archive)
        check = page.get_by_test_id("backup-check")
        expect(check).to_contain_text("holds 2 lessons and 50 propositions")
        replaces = page.get_by_test_id("backup-replaces")
        expect(replaces).to_contain_text("1 lesson here, replaced by the backup's 2")
        expect(page.get_by_test_id("backup-error")).to_have_count(0)
        assert titles(second.url) == ["Mine"]  # nothing changed by the check

        page.get_by_test_id("backup-restore-confirm").click()
        expect(page.get_by_test_id("backup-staged")).to_contain_text("restart Learning Harness to finish")
        expect(check).to_have_count(0)
        assert titles(second.url) == ["Mine"]  # applied at the next start
    finally:
        assert second.stop() == 0

    restarted = start_server(other)
    try:
        assert titles(restarted.url) == ["Heaps", "Trees"]
        graph_after = httpx.get(f"{restarted.url}/api/graph", timeout=30).json()
        assert graph_after["nodes"] == graph_before["nodes"]
        assert sum(n["kind"] == "proposition" for n in graph_after["nodes"]) == 50
        page.goto(f"{restarted.url}/settings")
        expect(page.get_by_test_id("backup-settings")).to_be_visible()
        expect(page.get_by_test_id("backup-staged")).to_have_count(0)
    finally:
        assert restarted.stop() == 0
    assert (other / "restore").is_dir() and list((other / "restore").glob("replaced-*/chats/c_mine.json"))
