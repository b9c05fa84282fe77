"""Settings > Subscriptions in real Chromium (issue 19 item 2), web mode: `python -m server` against a
loopback fake of the providers. Connect shows the device code large with the verification link;
once the fake grants the login, the events channel's `subscriptions-changed` brings "Connected as
…" without a reload; Disconnect forgets it; the slot picker names the subscription providers."""

from __future__ import annotations

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
