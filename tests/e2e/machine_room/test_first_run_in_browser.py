"""The first screen in Chromium (issue 29, item 2): `python -m server` with no model set up.

Home offers, in this order, a subscription sign-in, a pasted key, a model server on this computer,
and (when the offline model is installed) the demo last. A model server is found on its port (the
scripted OpenAI-compatible stub standing in as Ollama, a fake LM Studio beside it), its models are
picked per slot, and a lesson runs on it. A pasted key is tested by one call to a keyed fake: a wrong
key says why in plain words (the key is not shown), the right one says it works and becomes the
teacher. A connected ChatGPT subscription (the providers' fake) is chosen to teach.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.fakes.local_model_servers import keyed_app, product_app
from tests.fakes.subscription_providers import FakeState, create_fake_providers, provider_env
from tests.livehttp import serve
from tests.procs import ServerProcess, start_server
from tests.stub_openai import create_stub

pytestmark = pytest.mark.e2e

KEY = "sk-first-screen-KEY-0123456789"


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def fakes() -> Iterator[dict[str, str]]:
    state = FakeState(interval="0.2")
    state.polls["chatgpt"] = ["granted"]
    with ExitStack() as stack:
        urls = {
            "ollama": stack.enter_context(serve(create_stub())),  # lists "scripted", and teaches
            "lmstudio": stack.enter_context(
                serve(product_app("lmstudio", ["qwen2.5-7b-instruct", "llava-v1.5-7b"]))
            ),
            "keyed": stack.enter_context(serve(keyed_app(KEY, ["gpt-4o-mini"]))),
            "providers": stack.enter_context(serve(create_fake_providers(state))),
        }
        yield urls


def _start(data_dir: Path, fakes: dict[str, str]) -> ServerProcess:
    ollama, lmstudio = _port(fakes["ollama"]), _port(fakes["lmstudio"])
    ports = f"ollama={ollama},lmstudio={lmstudio},llamacpp={_closed_port()},vllm=0,jan=0"
    return start_server(data_dir, env={**provider_env(fakes["providers"]), "LH_LOCAL_SERVER_PORTS": ports})


def test_the_first_screen_offers_the_ways_in_order_and_a_local_server_teaches(
    page: Page, fakes: dict[str, str], data_dir: Path
) -> None:
    server = _start(data_dir, fakes)
    try:
        page.goto(server.url + "/")
        screen = page.get_by_test_id("first-run")
        expect(screen).to_be_visible()
        options = screen.locator("section.first-run-option")
        expect(options.first).to_have_attribute("data-testid", "first-run-subscriptions")
        order = options.evaluate_all("els => els.map(e => e.dataset.testid)")
        assert order[:3] == ["first-run-subscriptions", "first-run-key", "first-run-local"], order
        assert order[3:] in ([], ["first-run-demo"]), "the demo, when offered, is the last way"
        expect(screen.get_by_test_id("subscription-chatgpt")).to_be_visible()
        expect(screen.get_by_test_id("subscription-github-copilot-subscription")).to_be_visible()
        expect(screen.get_by_test_id("subscription-xai-subscription")).to_be_visible()

        lmstudio = page.get_by_test_id("first-run-server-lmstudio")
        expect(lmstudio).to_contain_text("LM Studio")
        expect(lmstudio.get_by_test_id("first-run-server-lmstudio-strong").locator("option")).to_have_text(
            ["qwen2.5-7b-instruct", "llava-v1.5-7b"]
        )
        expect(lmstudio.get_by_test_id("first-run-server-lmstudio-vision").locator("option")).to_have_text(
            ["Not set", "qwen2.5-7b-instruct", "llava-v1.5-7b"]
        )
        expect(page.get_by_test_id("first-run-server-llamacpp")).to_have_count(0)  # its port is closed
        page.screenshot(path=str(data_dir.parent / "first-run.png"))
        lmstudio.scroll_into_view_if_needed()
        page.screenshot(path=str(data_dir.parent / "first-run-local.png"))

        ollama = page.get_by_test_id("first-run-server-ollama")
        expect(ollama.get_by_test_id("first-run-server-ollama-strong")).to_have_value("scripted")
        ollama.get_by_test_id("first-run-server-ollama-use").click()
        expect(page.get_by_test_id("first-run-ready-words")).to_contain_text("scripted on Ollama")
        strong = httpx.get(server.url + "/api/settings").json()["models"]["strong"]
        assert strong == {
            "provider": "openai-compatible",
            "model": "scripted",
            "baseUrl": fakes["ollama"] + "/v1",
        }
        expect(page.get_by_test_id("offline-banner")).to_have_count(0)

        page.get_by_test_id("first-run-begin").click()
        page.wait_for_url("**/chat/**", timeout=30_000)
        page.get_by_test_id("composer-input").fill("Teach me derivatives.")
        page.get_by_test_id("composer-send").click()
        expect(page.get_by_test_id("message-assistant").first).to_contain_text("is 2x", timeout=60_000)
    finally:
        server.stop()


def test_a_pasted_key_is_tested_once_and_then_teaches(
    page: Page, fakes: dict[str, str], data_dir: Path
) -> None:
    server = _start(data_dir, fakes)
    try:
        page.set_viewport_size({"width": 390, "height": 844})  # a phone: every way fits the width
        page.goto(server.url + "/")
        card = page.get_by_test_id("first-run-key")
        expect(card).to_be_visible()
        overflow = page.get_by_test_id("first-run").evaluate(
            "el => [...el.querySelectorAll('*')]"
            ".filter(e => e.getBoundingClientRect().right > innerWidth + 1)"
            ".map(e => e.tagName + '.' + e.className)"
        )
        assert overflow == [], overflow
        card.scroll_into_view_if_needed()
        page.screenshot(path=str(data_dir.parent / "first-run-narrow.png"))
        card.get_by_test_id("first-run-key-provider").select_option(label="OpenAI-compatible server")
        card.get_by_test_id("first-run-key-model").fill("gpt-4o-mini")
        card.get_by_test_id("first-run-key-baseurl").fill(fakes["keyed"] + "/v1")
        wrong = "sk-WRONG-key-000000000"
        card.get_by_test_id("first-run-key-input").fill(wrong)
        card.get_by_test_id("first-run-key-test").click()
        result = card.get_by_test_id("first-run-key-result")
        expect(result).to_have_text(
            "The provider refused the API key (HTTP 401); check the key for this provider in Settings"
        )
        assert wrong not in page.locator("body").inner_text(), "the key is never shown back"
        assert not httpx.get(server.url + "/api/settings").json()["keys"]["openai-compatible"]["set"]

        card.get_by_test_id("first-run-key-input").fill(KEY)
        card.get_by_test_id("first-run-key-test").click()
        expect(page.get_by_test_id("first-run-ready-words")).to_contain_text(
            "gpt-4o-mini via OpenAI-compatible server"
        )
        settings = httpx.get(server.url + "/api/settings").json()
        assert settings["keys"]["openai-compatible"]["set"] is True
        assert settings["resolved"]["strong"]["model"] == "gpt-4o-mini"
    finally:
        server.stop()


def test_a_connected_subscription_is_chosen_to_teach(
    page: Page, fakes: dict[str, str], data_dir: Path
) -> None:
    server = _start(data_dir, fakes)
    try:
        page.goto(server.url + "/")
        subscriptions = page.get_by_test_id("first-run-subscriptions")
        subscriptions.get_by_test_id("subscription-chatgpt-connect").click()
        expect(subscriptions.get_by_test_id("subscription-chatgpt-state")).to_contain_text(
            "Connected", timeout=15_000
        )
        expect(subscriptions.get_by_test_id("first-run-chatgpt-model")).to_have_value("gpt-5-codex")
        subscriptions.get_by_test_id("first-run-chatgpt-use").click()
        expect(page.get_by_test_id("first-run-ready-words")).to_contain_text(
            "gpt-5-codex via your ChatGPT subscription"
        )
        strong = httpx.get(server.url + "/api/settings").json()["resolved"]["strong"]
        assert strong["provider"] == "chatgpt" and strong["offline"] is False
    finally:
        server.stop()
