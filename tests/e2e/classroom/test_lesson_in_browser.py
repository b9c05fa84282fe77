"""A learner's first lesson in real Chromium against `python -m server` (issue 2, done-when).

The model is a scripted OpenAI-compatible server on loopback, so the whole production path
(useChat -> FastAPI -> pydantic-ai -> openai SDK -> HTTP) runs; only the words are scripted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from server.store.classroom.chats import read_record_data
from tests.livehttp import serve
from tests.procs import start_on_stub, start_server
from tests.stub_openai import create_stub

pytestmark = pytest.mark.e2e


def test_type_see_the_reply_stream_reload_and_find_it_persisted(page, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    stub = create_stub(delay_s=0.08)
    with serve(stub) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            page.goto(server.url + "/")
            page.get_by_test_id("new-lesson").click()
            expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
            page.get_by_test_id("composer-input").fill("What is the derivative of x squared?")
            page.get_by_test_id("composer-send").click()

            expect(page.get_by_test_id("message-user")).to_have_text("What is the derivative of x squared?")
            reply = page.get_by_test_id("message-assistant")
            # streaming: the reply is visible while the status still says streaming
            expect(page.get_by_test_id("chat-status")).to_have_text("streaming")
            expect(reply).to_contain_text("You asked")
            expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
            expect(reply).to_contain_text("The derivative of")
            expect(reply.locator(".katex").first).to_be_visible()  # math rendered by KaTeX
            expect(page.get_by_test_id("session-link").first).to_contain_text("What is the derivative")

            chat_id = page.url.rsplit("/", 1)[1]
            page.reload()
            expect(page.get_by_test_id("message-user")).to_have_text("What is the derivative of x squared?")
            expect(page.get_by_test_id("message-assistant")).to_contain_text("The derivative of")
            record = read_record_data(data_dir / "chats", chat_id) or {}
            assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
        finally:
            assert server.stop() == 0


def test_settings_page_stores_a_key_without_writing_it_to_settings(page, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    server = start_server(data_dir)
    try:
        page.goto(server.url + "/settings")
        page.get_by_test_id("slot-strong-provider").select_option("openrouter")
        page.get_by_test_id("slot-strong-model").fill("anthropic/claude-sonnet-4")
        page.get_by_test_id("settings-save").click()
        expect(page.get_by_test_id("settings-saved")).to_be_visible()
        page.get_by_test_id("key-openrouter-input").fill("sk-or-v1-e2e-secret-0123456789")
        page.get_by_test_id("key-openrouter-store").click()
        expect(page.get_by_test_id("key-openrouter-status")).to_contain_text("file")
        settings = (data_dir / "settings.json").read_text()
        assert "anthropic/claude-sonnet-4" in settings and "e2e-secret" not in settings
    finally:
        assert server.stop() == 0


def test_settings_page_sets_the_graph_budget_and_the_teachers_graph_tools(page, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 11, item 5: `graph.extractionChunkTokens` and `agent.graphTools` are set in the
    Settings form, saved, and read back from the settings API, settings.json and a reload."""
    server = start_server(data_dir)
    try:
        before = httpx.get(server.url + "/api/library/settings").json()
        assert before["extractionChunkTokens"] != 2048
        page.goto(server.url + "/settings")
        tokens = page.get_by_test_id("library-chunk-tokens")
        expect(tokens).to_have_value(str(before["extractionChunkTokens"]))
        tokens.fill("2048")
        tools = page.get_by_test_id("library-graph-tools")
        expect(tools).to_be_checked(checked=before["graphTools"])
        tools.set_checked(not before["graphTools"])
        page.get_by_test_id("library-settings-save").click()
        expect(page.get_by_test_id("library-settings-saved")).to_be_visible()

        after = httpx.get(server.url + "/api/library/settings").json()
        assert after["extractionChunkTokens"] == 2048 and after["graphTools"] is (not before["graphTools"])
        assert after["lessonIdleSeconds"] == before["lessonIdleSeconds"]  # untouched
        stored = json.loads((data_dir / "settings.json").read_text())
        assert stored["graph"]["extractionChunkTokens"] == 2048
        assert stored["agent"]["graphTools"] is (not before["graphTools"])
        page.reload()
        expect(page.get_by_test_id("library-chunk-tokens")).to_have_value("2048")
        expect(page.get_by_test_id("library-graph-tools")).to_be_checked(checked=not before["graphTools"])

        # `graph.enabled` (issue 30 item 3, decision 0030): off, the graph-tools switch is off too
        enabled = page.get_by_test_id("library-graph-enabled")
        expect(enabled).to_be_checked()
        enabled.uncheck()
        expect(page.get_by_test_id("library-graph-tools")).to_be_disabled()
        page.get_by_test_id("library-settings-save").click()
        expect(page.get_by_test_id("library-settings-saved")).to_be_visible()
        stored = json.loads((data_dir / "settings.json").read_text())
        assert stored["graph"]["enabled"] is False and stored["graph"]["extractionChunkTokens"] == 2048
        page.reload()
        expect(page.get_by_test_id("library-graph-enabled")).not_to_be_checked()
        expect(page.get_by_test_id("library-graph-tools")).to_be_disabled()
    finally:
        assert server.stop() == 0


def test_research_settings_refuse_a_google_choice_without_its_cx_then_save_it(page, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """The web-research form (useDraftSave): a draft that fails its check shows the problem and
    sends nothing; Discard goes back to the saved draft; a whole draft is saved and read back."""
    server = start_server(data_dir)
    try:
        page.goto(server.url + "/settings")
        provider = page.get_by_test_id("research-provider")
        expect(provider).to_have_value("")
        provider.select_option("google")
        page.get_by_test_id("research-settings-save").click()
        expect(page.get_by_test_id("research-settings-error")).to_have_text(
            "Google Programmable Search needs its search engine id (cx)."
        )
        assert httpx.get(server.url + "/api/settings/research").json()["provider"] is None
        page.get_by_test_id("research-settings").get_by_role("button", name="Discard changes").click()
        expect(provider).to_have_value("")
        provider.select_option("google")
        page.get_by_test_id("research-google-cx").fill("e2e-engine-0123")
        expect(page.get_by_test_id("research-settings-error")).to_have_count(0)  # an edit clears the error
        page.get_by_test_id("research-settings-save").click()
        expect(page.get_by_test_id("research-settings-saved")).to_have_text("Saved.")
        saved = httpx.get(server.url + "/api/settings/research").json()
        assert saved["provider"] == "google" and saved["googleCx"] == "e2e-engine-0123"
    finally:
        assert server.stop() == 0


def test_deleting_a_lesson_asks_first_and_cancel_keeps_it(page, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """The sidebar's confirm-before-delete (useConfirmDelete): Cancel keeps the lesson; Delete
    removes it, closes the dialog and leaves the open lesson for the home page."""
    stub = create_stub()
    with serve(stub) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            page.goto(server.url + "/")
            page.get_by_test_id("new-lesson").click()
            expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
            rows = page.get_by_test_id("session-row")
            expect(rows).to_have_count(1)
            page.get_by_test_id("session-delete").click()
            dialog = page.get_by_test_id("confirm-dialog")
            expect(dialog).to_contain_text("Delete this lesson?")
            page.get_by_test_id("confirm-cancel").click()
            expect(dialog).to_have_count(0)
            expect(rows).to_have_count(1)
            page.get_by_test_id("session-delete").click()
            page.get_by_test_id("confirm-delete").click()
            expect(dialog).to_have_count(0)
            expect(rows).to_have_count(0)
            expect(page).to_have_url(server.url + "/")
            assert httpx.get(server.url + "/api/chats").json()["chats"] == []
        finally:
            assert server.stop() == 0
