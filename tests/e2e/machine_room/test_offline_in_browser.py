"""First launch in a real browser with no key: the offline model answers (issue 9, done-when).

`python -m server` on a fresh data dir (no key, no settings) runs SmolLM2 through llama.cpp; in
Debian's Chromium a learner starts a lesson, sends "Teach me fractions." and the first turn
streams a reply from the offline model: an assistant message with content, no "Connection
error" and no crash (the tiny model may still end its turn with an honest error, such as invalid
tool calls), and the banner names the demo model. Slow (a real model).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from server.services.machine_room.offline_child import offline_installed
from tests.procs import start_server

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not offline_installed(), reason="the 'local' extra is not installed"),
]


def test_a_first_lesson_on_the_offline_model_in_the_browser(page, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    server = start_server(data_dir)
    try:
        page.goto(server.url + "/")
        expect(page.get_by_test_id("offline-banner")).to_contain_text("SmolLM2-135M-Instruct")
        # "add your own API key in Settings" leads to the keys, not the top of Settings (a new
        # user's trial landed on the model slots and had to look for them)
        page.get_by_test_id("offline-banner").get_by_role("link", name="Settings").click()
        expect(page).to_have_url(re.compile(r"/settings#api-keys$"))
        expect(page.locator("#api-keys h2")).to_be_in_viewport()
        page.goto(server.url + "/")
        page.get_by_test_id("new-lesson").click()
        expect(page).to_have_url(re.compile(r"/demo$"))  # the demo screen first (issue 29, item 3)
        page.get_by_test_id("demo-start").click()
        expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
        page.get_by_test_id("composer-input").fill("Teach me fractions.")
        page.get_by_test_id("composer-send").click()
        expect(page.get_by_test_id("message-user")).to_have_text("Teach me fractions.")
        reply = page.get_by_test_id("message-assistant").first
        expect(reply).to_be_visible(timeout=120_000)
        expect(reply).not_to_have_text("", timeout=120_000)
        # the turn settles: ready, or an honest error of the tiny model (e.g. invalid tool calls)
        status = page.get_by_test_id("chat-status")
        expect(status).to_have_text(re.compile(r"^\s*(ready|error)\s*$"), timeout=180_000)
        if "error" in status.inner_text():
            banner = page.get_by_test_id("error-banner").inner_text()
            assert banner.strip() and "Connection error" not in banner, banner
            assert "crashed" not in banner, banner
        page.screenshot(path=str(data_dir.parent / "offline-first-turn.png"), full_page=True)
    finally:
        assert server.stop() == 0
