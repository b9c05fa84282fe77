"""Two windows on one data dir follow each other through the events channel, without reloading
(issue 12, item 1, done-when): a turn started in one appears live in the other (its running dot,
then its stream, attached); a rename and a delete show in the other's session list; an import's
activity rows and the merged graph appear on the other's home page. Exactly one EventSource per
window; no page is reloaded.

One scripted OpenAI-compatible stub plays every role (the prober hands over at once; the teacher
streams a long reply word by word, so the second window can attach mid-turn)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.classroom import ASSESSMENT
from tests.scripts.library import graph_reply
from tests.shared import NOTES
from tests.stub_openai import Reply

pytestmark = pytest.mark.e2e

TEACHING = " ".join(f"Heaps keep order, step {i}." for i in range(40))

COUNT_EVENT_SOURCES = """(() => {
  window.__eventSources = 0;
  const Original = window.EventSource;
  window.EventSource = class extends Original {
    constructor(...args) { super(...args); window.__eventSources += 1; }
  };
})();"""


def reply(body: dict[str, Any]) -> Reply:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "submit" in tools:
        return graph_reply(body)
    if "probe_done" in tools:
        return Reply("", ("probe_done", ASSESSMENT, "call_probe_done"))
    return Reply(TEACHING)


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, reply, delay_s=0.08) as proc:
        yield proc


def window(browser: Browser, url: str) -> Page:
    page = browser.new_context().new_page()
    page.add_init_script(COUNT_EVENT_SOURCES)
    page.goto(url)
    page.evaluate("window.__same = 1")  # a reload or a full navigation would lose it
    return page


def test_a_second_window_follows_turns_renames_deletes_imports_and_merges(
    browser: Browser, server: ServerProcess
) -> None:
    a = window(browser, server.url + "/")
    b = window(browser, server.url + "/")
    expect(b.get_by_test_id("graph-empty")).to_be_visible()

    a.get_by_test_id("begin-lesson").click()
    expect(a).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
    chat_id = a.url.rsplit("/", 1)[1]
    row_in_b = b.locator(f'[data-testid="session-row"][data-chat-id="{chat_id}"]')
    expect(row_in_b).to_be_visible(timeout=5_000)  # chats-changed: the new lesson is listed

    # B opens the lesson; A starts a turn; B sees it start and attaches to its stream
    row_in_b.get_by_test_id("session-link").click()
    expect(b.get_by_test_id("composer-input")).to_be_visible()
    a.get_by_test_id("composer-input").fill("Teach me heaps")
    a.get_by_test_id("composer-send").click()
    expect(row_in_b.get_by_test_id("session-running")).to_be_visible(timeout=5_000)
    expect(b.get_by_test_id("chat-status")).to_have_text("streaming", timeout=5_000)
    expect(b.get_by_test_id("message-assistant").last).to_contain_text("step 39", timeout=20_000)
    expect(b.get_by_test_id("chat-status")).to_have_text("ready", timeout=10_000)
    expect(row_in_b.get_by_test_id("session-running")).to_have_count(0)
    expect(b.get_by_test_id("message-user")).to_have_count(1)

    # a rename and a delete made elsewhere
    httpx.patch(f"{server.url}/api/chats/{chat_id}", json={"title": "Heaps, renamed"}).raise_for_status()
    expect(row_in_b).to_contain_text("Heaps, renamed", timeout=5_000)

    # an import elsewhere: B's activity dock shows its rows, B's home page the merged graph
    b.get_by_role("link", name="Learning Harness").click()  # home, inside the app: no reload
    expect(b.get_by_test_id("graph-counts")).to_have_count(0)  # nothing in the graph yet
    b.get_by_test_id("activity-toggle").click()
    note = sorted(NOTES.glob("*.md"))[0]
    files = [("files", (note.name, note.read_bytes(), "text/markdown"))]
    assert httpx.post(f"{server.url}/api/graph/import", files=files, timeout=30).status_code == 202
    expect(b.get_by_test_id("activity-row").first).to_be_visible(timeout=5_000)
    expect(b.locator('[data-testid="activity-row"][data-phase="done"]').first).to_be_visible(timeout=30_000)
    expect(b.get_by_test_id("graph-counts")).to_contain_text("proposition", timeout=10_000)

    httpx.delete(f"{server.url}/api/chats/{chat_id}").raise_for_status()
    expect(a.locator(f'[data-testid="session-row"][data-chat-id="{chat_id}"]')).to_have_count(
        0, timeout=5_000
    )
    expect(b.locator(f'[data-testid="session-row"][data-chat-id="{chat_id}"]')).to_have_count(
        0, timeout=5_000
    )

    assert a.evaluate("window.__same") == 1 and b.evaluate("window.__same") == 1  # never reloaded
    assert a.evaluate("window.__eventSources") == 1  # one EventSource per window, never more
    assert b.evaluate("window.__eventSources") == 1
