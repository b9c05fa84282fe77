"""The demo screen and the demo mark in Chromium (issue 29, item 3).

No model is set up, so lessons would run on the offline demo model. "New lesson" leads to a screen
that says plainly it is a demo that gets facts wrong, and creates nothing; "Set up a real teacher"
leads to the keys; "Start a demo lesson anyway" starts the lesson; its reply carries the visible
demo mark, live and after a reload. The offline model is the scripted llama child on loopback
(tests/fakes/llama_child.py, `ok`: a one-word reply), the real model being too slow for a test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect
from pydantic_ai import models

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from server.services.machine_room.models import default_model_factory
from tests.fakes import FakeSecrets
from tests.livehttp import serve
from tests.unit.machine_room.test_offline_model import Scripted

pytestmark = pytest.mark.e2e


@pytest.fixture
def demo_url(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # its only peer: the child on loopback
    services = build_services(
        DataPaths(data_dir),
        secrets=FakeSecrets(),  # type: ignore[arg-type]
        offline_server=Scripted(tmp_path, "ok").server(),
        model_factory=default_model_factory,
    )
    with serve(create_app(services)) as url:
        yield url


def test_a_demo_lesson_starts_only_by_choice_and_its_replies_are_marked(
    page, demo_url: str, data_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    page.goto(demo_url + "/")
    expect(page.get_by_test_id("offline-banner")).to_be_visible()
    page.get_by_test_id("new-lesson").click()
    expect(page).to_have_url(re.compile(r"/demo$"))
    warning = page.get_by_test_id("demo-warning")
    expect(warning).to_contain_text("demo")
    expect(warning).to_contain_text("It gets facts wrong.")
    assert httpx.get(demo_url + "/api/chats").json()["chats"] == [], "the screen alone creates nothing"
    page.screenshot(path=str(data_dir.parent / "demo-choice.png"))

    page.get_by_test_id("demo-setup").click()
    expect(page).to_have_url(re.compile(r"/settings#api-keys$"))
    page.go_back()
    expect(page).to_have_url(re.compile(r"/demo$"))

    page.get_by_test_id("demo-start").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"), timeout=30_000)
    page.get_by_test_id("composer-input").fill("Teach me fractions.")
    page.get_by_test_id("composer-send").click()
    reply = page.get_by_test_id("message-assistant").first
    expect(reply.get_by_test_id("demo-mark")).to_have_text("Demo model: may be wrong", timeout=60_000)
    expect(page.get_by_test_id("chat-status")).to_have_text(
        re.compile(r"^\s*(ready|error)\s*$"), timeout=60_000
    )
    page.screenshot(path=str(data_dir.parent / "demo-mark.png"))
    page.reload()
    expect(page.get_by_test_id("message-assistant").first.get_by_test_id("demo-mark")).to_be_visible()
    expect(page.get_by_test_id("message-user").first.get_by_test_id("demo-mark")).to_have_count(0)


def test_while_the_demo_model_writes_the_page_shows_the_expected_wait(
    page, demo_url: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The first reply measures the speed (nothing to expect before it, and the banner says so
    while it is written); the second is held by the scripted child, and meanwhile the banner
    gives its expected wait from that speed, as `GET /api/settings` has it."""
    hold = tmp_path / "hold-chat"  # beside the scripted child's starts file: holds its replies
    page.goto(demo_url + "/demo")
    page.get_by_test_id("demo-start").click()
    expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"), timeout=30_000)
    status = page.get_by_test_id("chat-status")
    hold.touch()
    page.get_by_test_id("composer-input").fill("Teach me fractions.")
    page.get_by_test_id("composer-send").click()
    wait = page.get_by_test_id("demo-wait")
    expect(wait).to_contain_text("measured after its first reply", timeout=30_000)
    hold.unlink()
    expect(status).to_have_text(re.compile(r"^\s*(ready|error)\s*$"), timeout=60_000)
    expect(wait).to_contain_text("On this computer the demo model writes", timeout=30_000)
    offline = httpx.get(demo_url + "/api/settings").json()["offline"]
    assert offline["tokensPerSecond"] > 0 and offline["expectedWaitS"] > 0, offline

    hold.touch()
    page.get_by_test_id("composer-input").fill("Go on.")
    page.get_by_test_id("composer-send").click()
    expect(wait).to_contain_text(
        re.compile(r"The demo model is writing a reply: expect about \d+ (s|min) "), timeout=30_000
    )
    expect(wait).to_contain_text("tokens/s on this computer")
    hold.unlink()
    expect(status).to_have_text(re.compile(r"^\s*(ready|error)\s*$"), timeout=60_000)
