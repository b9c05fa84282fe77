"""What a new user noticed in a lesson's first minutes (issue 29, item 4), in real Chromium on a
scripted lesson (tests/scripts/classroom.py): the per-lesson model editor speaks Settings' words;
"Regenerate" writes the teacher's last reply again; checking a quiz by keyboard hands the focus to
the message box (then to the next question), and a skip link reaches the message box."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.classroom import lesson_reply
from tests.stub_openai import Reply, last_user_text

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


@pytest.fixture
def counting_server(data_dir: Path) -> Iterator[ServerProcess]:
    """A teacher whose every reply is numbered: a regenerated reply is a new one."""
    count = itertools.count(1)

    def reply(body: dict[str, object]) -> Reply:
        return Reply(f"Reply {next(count)} to: {last_user_text(body)}")

    with server_on_stub(data_dir, reply, delay_s=0.01) as proc:
        yield proc


def test_regenerate_writes_the_last_reply_again(page: Page, counting_server: ServerProcess) -> None:
    page.goto(counting_server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    chat_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_test_id("regenerate")).to_have_count(0)  # nothing to regenerate yet
    page.get_by_test_id("composer-input").fill("Teach me heaps")
    page.get_by_test_id("composer-send").click()
    replies = page.get_by_test_id("message-assistant")
    expect(replies.last).to_contain_text("to: Teach me heaps", timeout=20_000)
    expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
    first = replies.last.inner_text().strip()  # "Reply N to: …" (other requests, e.g. a title, count too)

    page.get_by_test_id("regenerate").click()
    expect(replies.last).not_to_have_text(first, timeout=20_000)
    expect(replies.last).to_contain_text("to: Teach me heaps")
    expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
    expect(replies).to_have_count(1)  # replaced, not added
    expect(page.get_by_test_id("message-user")).to_have_count(1)
    expect(page.get_by_test_id("regenerate")).to_be_visible()
    # the server's record agrees, and a reload shows the new reply
    record = httpx.get(f"{counting_server.url}/api/chats/{chat_id}").json()
    texts = [p.get("text", "") for m in record["messages"] for p in m["parts"] if m["role"] == "assistant"]
    second = replies.last.inner_text().strip()
    assert [t.strip() for t in texts if t.strip()] == [second]
    page.reload()
    expect(page.get_by_test_id("message-assistant")).to_have_count(1)
    expect(page.get_by_test_id("message-assistant").last).to_have_text(second)


HOLD = threading.Event()
"""Set: the teacher's requests wait for RELEASE (the test looks at the page between turns)."""
RELEASE = threading.Event()


@pytest.fixture
def held_server(data_dir: Path) -> Iterator[ServerProcess]:
    HOLD.clear()
    RELEASE.clear()

    def reply(body: dict[str, object]) -> Reply | str:
        if HOLD.is_set():
            RELEASE.wait(timeout=60)
        return lesson_reply(body)

    with server_on_stub(data_dir, reply, delay_s=0.01) as proc:
        yield proc
    RELEASE.set()


def test_keyboard_focus_after_a_quiz_and_the_skip_link(page: Page, held_server: ServerProcess) -> None:
    page.goto(held_server.url + "/")
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    page.get_by_test_id("composer-input").fill("Teach me derivatives")
    page.get_by_test_id("composer-send").click()
    dock = page.get_by_test_id("question-dock")
    expect(dock.get_by_test_id("dock-quiz")).to_be_visible(timeout=20_000)
    expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
    # the quiz took the focus; choose by keyboard and check with Enter
    focused = page.locator(":focus")
    expect(focused).to_have_attribute("data-testid", "dock-option")
    HOLD.set()  # the teacher's next reply waits: the page is looked at between the turns
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(dock.get_by_test_id("dock-verdict")).to_be_visible()
    # no other question waits: the focus is in the message box, not on the page body
    expect(page.get_by_test_id("composer-input")).to_be_focused()
    assert page.evaluate("document.activeElement !== document.body")

    # the skip link is the page's first Tab stop (before the sidebar) and reaches the message box
    tabbable = page.evaluate(
        """() => [...document.querySelectorAll('a[href], button, input, textarea, select, [tabindex]')]
            .filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0)
            .slice(0, 2).map(e => e.dataset.testid || e.tagName)"""
    )
    assert tabbable[0] == "skip-to-composer", tabbable
    page.evaluate(
        """() => [...document.querySelectorAll('a[href], button, input, textarea, select, [tabindex]')]
            .filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0)[1].focus()"""
    )
    page.keyboard.press("Shift+Tab")
    skip = page.get_by_test_id("skip-to-composer")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    expect(skip).to_have_text("Skip to the message box")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("composer-input")).to_be_focused()

    # the next question takes the focus when it comes
    RELEASE.set()
    expect(dock).to_contain_text("What do you want to learn?", timeout=20_000)
    expect(dock.locator(":focus")).to_have_count(1)
