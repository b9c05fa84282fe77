"""Settings > Model for each job in real Chromium (issue 30 item 2, seed §7): every model-using
role listed once with its default and what it runs; an override chosen, saved, kept on reload,
refused in plain words when incomplete (nothing written), and set back to the default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.core.contracts.models import ROLE_NAMES
from tests.procs import start_server

pytestmark = pytest.mark.e2e

STRONG = {"provider": "openai-compatible", "model": "scripted", "baseUrl": "http://127.0.0.1:9/v1"}


def test_override_a_roles_model_in_settings(page: Page, data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    settings_path = data_dir / "settings.json"
    settings_path.write_text(json.dumps({"models": {"strong": STRONG}}))
    server = start_server(data_dir)
    try:
        page.goto(f"{server.url}/settings")
        section = page.get_by_test_id("role-models")
        expect(section).to_be_visible()
        expect(section.locator("li.role-row")).to_have_count(len(ROLE_NAMES))
        expect(page.get_by_test_id("role-grader")).to_contain_text("Scores your practice answers.")
        expect(page.get_by_test_id("role-grader-runs")).to_have_text("Runs scripted via openai-compatible")
        expect(page.get_by_test_id("role-teacher-runs")).to_contain_text("each lesson's own model")
        grader = page.get_by_test_id("role-grader-provider")
        expect(grader.locator("option").first).to_have_text("Default: the Strong model")
        expect(page.get_by_test_id("role-naming-provider").locator("option").first).to_have_text(
            "Default: the Cheap model"
        )

        # an incomplete override is refused in plain words, naming the job; nothing is written
        before = settings_path.read_text()
        page.get_by_test_id("role-naming-provider").select_option("openai-compatible")
        page.get_by_test_id("role-naming-model").fill("llama3")
        page.get_by_test_id("role-models-save").click()
        expect(page.get_by_test_id("role-models-error")).to_contain_text("Lesson names: an OpenAI-compatible")
        assert settings_path.read_text() == before
        page.get_by_test_id("role-naming-baseurl").fill("http://127.0.0.1:11434/v1")

        grader.select_option("openai")
        page.get_by_test_id("role-grader-model").fill("gpt-grade")
        page.get_by_test_id("role-models-save").click()
        expect(page.get_by_test_id("role-models-saved")).to_have_text("Saved.")
        # no OpenAI key: the grader's line says so, naming the job and what to set
        expect(page.get_by_test_id("role-grader-runs")).to_contain_text(
            "Grader override: no API key for openai"
        )
        expect(page.get_by_test_id("role-naming-runs")).to_have_text("Runs llama3 via openai-compatible")
        saved = json.loads(settings_path.read_text())
        assert saved["roles"]["problemGenerator"] is None
        assert saved["roles"]["grader"]["model"] == "gpt-grade"
        assert saved["models"]["strong"]["model"] == "scripted"  # the slots are untouched

        page.reload()
        expect(page.get_by_test_id("role-grader-provider")).to_have_value("openai")
        expect(page.get_by_test_id("role-grader-model")).to_have_value("gpt-grade")

        page.get_by_test_id("role-grader-provider").select_option("")  # back to the default
        expect(page.get_by_test_id("role-grader-model")).to_have_count(0)
        page.get_by_test_id("role-models-save").click()
        expect(page.get_by_test_id("role-grader-runs")).to_have_text("Runs scripted via openai-compatible")
        assert json.loads(settings_path.read_text())["roles"]["grader"] is None
    finally:
        assert server.stop() == 0
