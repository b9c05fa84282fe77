"""What a new user noticed in a lesson's first minutes (issue 29, item 4), in real Chromium on a
scripted lesson (tests/scripts/classroom.py): the per-lesson model editor speaks Settings' words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.classroom import lesson_reply

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, lesson_reply, delay_s=0.01) as proc:
        yield proc


def test_the_lesson_model_editor_uses_settings_labels(page: Page, server: ServerProcess) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    # the scripted slot is an OpenAI-compatible server: named as Settings names it, never by its id
    expect(page.get_by_test_id("session-model")).to_contain_text("OpenAI-compatible server · ")
    expect(page.get_by_test_id("session-model")).not_to_contain_text("openai-compatible")
    page.get_by_test_id("session-model-edit").click()
    form = page.get_by_test_id("session-model-form")
    provider = form.get_by_label("Provider")
    expect(provider).to_have_value("openai-compatible")
    expect(provider.locator("option:checked")).to_have_text("OpenAI-compatible server")
    options = provider.locator("option").all_inner_texts()
    assert "openai-compatible" not in options and "OpenAI-compatible server" in options
    # every field has a visible label a screen reader and a newcomer can read
    expect(form.get_by_label("Model id")).to_be_visible()
    expect(form.get_by_label("Base URL")).to_be_visible()
    for field in ("Provider", "Model id", "Base URL"):
        expect(form.locator("label", has_text=field)).to_be_visible()
    provider.select_option(label="OpenAI")
    expect(form.get_by_label("Base URL")).to_have_count(0)
