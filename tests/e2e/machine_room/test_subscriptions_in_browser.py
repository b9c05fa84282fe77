"""Settings > Subscriptions in real Chromium (issue 19 item 2), web mode: `python -m server` against a
loopback fake of the providers. Connect shows the device code large with the verification link;
once the fake grants the login, the events channel's `subscriptions-changed` brings "Connected as
…" without a reload; Disconnect forgets it; the slot picker names the subscription providers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.fakes.subscription_providers import EMAIL, FakeState, create_fake_providers, provider_env
from tests.livehttp import serve
from tests.procs import start_server

pytestmark = pytest.mark.e2e


@pytest.fixture
def fake() -> Iterator[tuple[str, FakeState]]:
    state = FakeState(interval="0.2")
    state.polls["chatgpt"] = ["pending"]
    with serve(create_fake_providers(state)) as url:
        yield url, state


def test_connect_a_chatgpt_subscription_in_settings(
    page: Page, fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    server = start_server(data_dir, env=provider_env(url))
    try:
        page.goto(f"{server.url}/settings")
        section = page.get_by_test_id("subscription-settings")
        expect(section).to_be_visible()
        expect(page.get_by_test_id("subscription-chatgpt-state")).to_have_text("Not connected")
        options = page.get_by_test_id("slot-strong-provider").locator("option")
        expect(options.filter(has_text="ChatGPT subscription")).to_have_count(1)
        expect(options.filter(has_text="GitHub Copilot subscription")).to_have_count(1)
        expect(options.filter(has_text="xAI subscription")).to_have_count(1)

        page.get_by_test_id("subscription-chatgpt-connect").click()
        code = page.get_by_test_id("subscription-chatgpt-code")
        expect(code).to_have_text("CHAT-1234")
        assert float(code.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")) >= 24
        expect(page.get_by_test_id("subscription-chatgpt-link")).to_have_attribute(
            "href", f"{url}/codex/device"
        )
        expect(page.get_by_test_id("subscription-chatgpt-cancel")).to_be_visible()

        state.polls["chatgpt"] = ["granted"]  # the learner entered the code
        expect(page.get_by_test_id("subscription-chatgpt-state")).to_have_text(
            f"Connected as {EMAIL}", timeout=10_000
        )
        assert (data_dir / "subscriptions" / "chatgpt.json").exists()

        page.get_by_test_id("subscription-chatgpt-disconnect").click()
        expect(page.get_by_test_id("subscription-chatgpt-state")).to_have_text("Not connected")
        assert not (data_dir / "subscriptions" / "chatgpt.json").exists()
    finally:
        assert server.stop() == 0


def test_background_consent_switch_beside_each_subscription(page: Page, data_dir: Path) -> None:
    """Issue 30 item 1 (decision 0030): each subscription has its own background switch, on by
    default; switching one off is saved (settings.json `backgroundConsent`), leaves the others on,
    survives a reload, and the words say results wait."""
    server = start_server(data_dir)
    try:
        page.goto(f"{server.url}/settings")
        switches = {
            p: page.get_by_test_id(f"subscription-{p}-background")
            for p in ("chatgpt", "github-copilot-subscription", "xai-subscription")
        }
        for switch in switches.values():
            expect(switch).to_be_checked()
        switches["github-copilot-subscription"].uncheck()
        expect(
            page.get_by_test_id("subscription-github-copilot-subscription-background-words")
        ).to_contain_text("nothing is lost")

        def saved() -> dict[str, bool]:
            path = data_dir / "settings.json"
            return json.loads(path.read_text()).get("backgroundConsent", {}) if path.exists() else {}

        deadline = time.monotonic() + 10
        while saved().get("github-copilot-subscription") is not False and time.monotonic() < deadline:
            time.sleep(0.05)
        assert saved() == {"chatgpt": True, "github-copilot-subscription": False, "xai-subscription": True}
        page.reload()
        expect(switches["github-copilot-subscription"]).not_to_be_checked()
        expect(switches["chatgpt"]).to_be_checked()
        expect(switches["xai-subscription"]).to_be_checked()
        switches["github-copilot-subscription"].check()
        expect(
            page.get_by_test_id("subscription-github-copilot-subscription-background-words")
        ).to_contain_text("on their own")
        deadline = time.monotonic() + 10
        while saved().get("github-copilot-subscription") is not True and time.monotonic() < deadline:
            time.sleep(0.05)
        assert saved()["github-copilot-subscription"] is True
    finally:
        assert server.stop() == 0
