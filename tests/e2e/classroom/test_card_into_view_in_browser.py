"""A Workbench card that arrives is scrolled into view (issue 29, item 4), in real Chromium: the
learner has scrolled up to read; the demo the teacher had built arrives and is brought into the
transcript's view, not left below the fold under the composer. The scripted teacher and
demo-builder are the Workbench test's (tests/e2e/workbench/test_workbench_in_browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.workbench import test_workbench_in_browser as workbench
from tests.livehttp import serve
from tests.procs import scripted_slot, start_server, write_settings
from tests.stub_openai import create_stub

pytestmark = pytest.mark.e2e


@pytest.fixture
def teacher_url() -> Iterator[str]:
    workbench.QUIZ_ASKED.clear()
    workbench.HOLD_DEMO.clear()
    workbench.TEACHER_TOOLS.clear()
    with serve(create_stub(workbench.reply, delay_s=0.0)) as url:
        yield url


def test_an_arriving_card_is_scrolled_into_view(page: Page, data_dir: Path, teacher_url: str) -> None:
    page.set_viewport_size({"width": 1000, "height": 600})
    write_settings(data_dir, scripted_slot(teacher_url))
    server = start_server(data_dir)
    try:
        chat_id = workbench.teaching_lesson(server)
        page.goto(f"{server.url}/chat/{chat_id}")
        page.get_by_test_id("composer-input").fill("Show me a demo of tangents")
        page.get_by_test_id("composer-send").click()
        expect(page.get_by_text("Meanwhile: the slope")).to_be_visible(timeout=30_000)
        # the learner scrolls up to read: the transcript no longer follows the bottom
        transcript = page.get_by_test_id("transcript")
        transcript.evaluate("el => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); }")
        room = transcript.evaluate("el => el.scrollHeight - el.clientHeight - el.scrollTop")
        # a card added now starts at least `room` px below the fold
        assert room > 100, f"the lesson must be longer than its view for this test ({room} px)"
        artifact = page.locator("[data-testid=artifact-card][data-kind=demo]")
        expect(artifact).to_have_count(1, timeout=60_000)
        # brought into the transcript's view: its frame is seen, not cut off below the fold
        expect(artifact.get_by_test_id("demo-frame")).to_be_in_viewport(ratio=0.9, timeout=10_000)
        box = artifact.bounding_box()
        view = transcript.bounding_box()
        assert box is not None and view is not None
        assert box["y"] + min(box["height"], view["height"]) <= view["y"] + view["height"] + 1
    finally:
        assert server.stop() == 0
