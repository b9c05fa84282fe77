"""The per-lesson model editor (issue 29, item 4) in real Chromium on a scripted lesson: it offers the
providers Settings offers, in Settings' words (one ProviderSelect), and it switches a lesson to the
offline demo model only after a plain confirmation that the demo gets facts wrong (the server
refuses the switch without it: tests/flows/classroom/test_lesson_model_demo.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.classroom import lesson_reply

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, lesson_reply, delay_s=0.01) as proc:
        yield proc


def _provider(server: ServerProcess, chat_id: str) -> str:
    return str(httpx.get(f"{server.url}/api/chats/{chat_id}", timeout=30).json()["model"]["provider"])


def test_the_lesson_and_settings_offer_the_same_providers(page: Page, server: ServerProcess) -> None:
    page.goto(server.url + "/settings")
    slot = page.get_by_test_id("slot-strong-provider")
    expect(slot).to_have_value("openai-compatible")
    in_settings = slot.locator("option").all_inner_texts()
    assert in_settings[0] == "Not set" and "OpenAI-compatible server" in in_settings

    page.goto(server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    page.get_by_test_id("session-model-edit").click()
    in_lesson = page.get_by_test_id("session-model-provider").locator("option").all_inner_texts()
    assert in_lesson == in_settings[1:], (in_lesson, in_settings)


def test_switching_a_lesson_to_the_demo_model_asks_first(page: Page, server: ServerProcess) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    chat_id = page.url.rsplit("/", 1)[1]
    page.get_by_test_id("session-model-edit").click()
    form = page.get_by_test_id("session-model-form")
    form.get_by_label("Provider").select_option(label="Local offline demo model")
    form.get_by_label("Model id").fill("SmolLM2-135M-Instruct")
    form.get_by_test_id("session-model-save").click()

    confirm = page.get_by_test_id("session-model-demo-confirm")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("gets facts wrong")
    assert _provider(server, chat_id) == "openai-compatible", (
        "nothing is switched before the learner says yes"
    )

    # "Pick another model" keeps the form open and the lesson as it was
    confirm.get_by_test_id("session-model-demo-no").click()
    expect(confirm).to_have_count(0)
    expect(form).to_be_visible()
    assert _provider(server, chat_id) == "openai-compatible"

    form.get_by_test_id("session-model-save").click()
    expect(confirm).to_be_visible()
    confirm.get_by_test_id("session-model-demo-yes").click()
    expect(page.get_by_test_id("session-model")).to_have_text(
        "Local offline demo model · SmolLM2-135M-Instruct"
    )
    expect(form).to_have_count(0)
    assert _provider(server, chat_id) == "local"

    # already on the demo model: saving it again asks nothing
    page.get_by_test_id("session-model-edit").click()
    page.get_by_test_id("session-model-save").click()
    expect(page.get_by_test_id("session-model-form")).to_have_count(0)
    expect(page.get_by_test_id("session-model-demo-confirm")).to_have_count(0)
