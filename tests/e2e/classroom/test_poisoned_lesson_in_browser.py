"""A lesson an older build poisoned, in real Chromium (issue 26, item 1): a learner message that
holds parts the app never sends (a `reasoning`, a `step-start`, a `file:` URL) opens, shows its
text with a note naming the parts the tutor does not read (kept in the record, never dropped
silently), and the next message the learner types turns to a reply."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from server.config import DataPaths
from server.services.stores import build_stores
from tests.livehttp import serve
from tests.procs import learner_turn, scripted_slot, start_server, write_settings
from tests.stub_openai import create_stub

pytestmark = pytest.mark.e2e

ODD_PARTS = [
    {"type": "reasoning", "text": "a thought the composer never sends"},
    {"type": "step-start"},
    {"type": "file", "mediaType": "image/png", "url": "file:///etc/passwd"},
]


def test_a_poisoned_lesson_opens_says_what_the_tutor_did_not_read_and_turns(
    page: Page, data_dir: Path
) -> None:
    with serve(create_stub(delay_s=0.01)) as stub_url:
        write_settings(data_dir, scripted_slot(stub_url))
        server = start_server(data_dir)
        try:
            with httpx.Client(base_url=server.url, timeout=30) as client:
                chat_id = client.post("/api/chats", json={}).json()["id"]
                first = client.post("/api/chat", json=learner_turn(chat_id, "Teach me heaps."))
                assert first.status_code == 200
        finally:
            assert server.stop() == 0
        # what an older build let in, written as it would have saved it
        chats = build_stores(DataPaths(data_dir)).chats
        record = chats.get(chat_id)
        assert record is not None
        poisoned = {
            "id": "u_old",
            "role": "user",
            "parts": [{"type": "text", "text": "And what about this?"}, *ODD_PARTS],
        }
        chats.save(record.model_copy(update={"messages": [*record.messages, poisoned]}))
        del chats

        server = start_server(data_dir)
        try:
            page.goto(f"{server.url}/chat/{chat_id}")
            bubble = page.locator('[data-message-id="u_old"]')
            expect(bubble).to_contain_text("And what about this?", timeout=15_000)
            note = bubble.get_by_test_id("unread-parts")
            expect(note).to_have_text(
                re.compile(r"^3 parts of this message \(reasoning, step-start, file\) are kept but not read")
            )
            page.get_by_test_id("composer-input").fill("Go on, please.")
            page.get_by_test_id("composer-send").click()
            expect(page.get_by_test_id("message-assistant")).to_have_count(2, timeout=20_000)
            expect(page.get_by_test_id("unread-parts")).to_have_count(1)
            # the reply is drawn as it streams and saved once it ends: wait for the settled record
            deadline = time.monotonic() + 60
            saved = httpx.get(f"{server.url}/api/chats/{chat_id}").json()
            while saved["running"] and time.monotonic() < deadline:
                time.sleep(0.1)
                saved = httpx.get(f"{server.url}/api/chats/{chat_id}").json()
            assert poisoned in saved["messages"], "the record keeps the parts"
            assert saved["messages"][-1]["role"] == "assistant", saved["messages"][-1]
        finally:
            assert server.stop() == 0
