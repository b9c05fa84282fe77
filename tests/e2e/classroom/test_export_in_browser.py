"""Exports from the page (issue 31, items 1 and 3), in Chromium: the lesson menu's "Export as
Markdown" downloads the lesson (`<title>.md`: the plan, the quiz with the learner's answer and
grade, usage) and the exam page's "Export as Markdown" downloads the set (problems, the answer,
the grade, the model solution of what was answered, never of what was not)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.unit.classroom.test_session_markdown import full_lesson
from tests.unit.practice.test_set_markdown import GRADED, UNANSWERED, problem_set

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir) as proc:
        yield proc


def test_the_lesson_menu_downloads_the_lesson_as_markdown(
    page: Page, server: ServerProcess, data_dir: Path
) -> None:
    chat_id = httpx.post(server.url + "/api/chats", json={}).json()["id"]
    path = data_dir / "chats" / f"{chat_id}.json"
    record = json.loads(path.read_text())
    lesson = full_lesson()
    record.pop("logGeneration", None)
    record["title"] = "Derivatives"
    record["messages"] = lesson.messages
    record["usage"] = [u.model_dump(by_alias=True) for u in lesson.usage]
    path.write_text(json.dumps(record))

    page.goto(f"{server.url}/chat/{chat_id}")
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("After the fence.", timeout=20_000)
    page.get_by_test_id("session-menu").click()
    item = page.get_by_test_id("export-lesson")
    expect(item).to_have_text("Export as Markdown")
    with page.expect_download() as started:
        item.click()
    download = started.value
    assert download.suggested_filename == "Derivatives.md"
    document = Path(download.path()).read_text(encoding="utf-8")
    assert document.startswith('---\ntitle: "Derivatives"\n')
    assert "```mermaid\ngraph TD\n" in document and "Derivative · current" in document
    assert "> **Quiz** (plan: Derivative)" in document and "incorrect ✗" in document
    assert "## Usage" in document
    expect(page.get_by_test_id("session-menu-popover")).to_have_count(0)  # the menu closed


def test_the_exam_page_downloads_the_set_as_markdown(
    page: Page, server: ServerProcess, data_dir: Path
) -> None:
    value = problem_set([GRADED, UNANSWERED]).model_copy(update={"id": "ps_00112233aabbccdd"})
    root = data_dir / "practice"
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{value.id}.json").write_text(json.dumps(value.model_dump(mode="json", by_alias=True)))

    page.goto(f"{server.url}/practice/{value.id}")
    expect(page.get_by_test_id("exam-title")).to_have_text("Limits: practice", timeout=20_000)
    with page.expect_download() as started:
        page.get_by_test_id("export-set").click()
    download = started.value
    assert download.suggested_filename == "Limits- practice.md"
    document = Path(download.path()).read_text(encoding="utf-8")
    assert "## Problem 1: A root exists" in document and "**8/10**" in document
    assert "### Model solution" in document and "SECRET" not in document
