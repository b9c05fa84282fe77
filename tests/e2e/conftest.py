"""Real headless Chromium (Debian's `chromium`) driven by Playwright for Python."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from server.agent.workbench.headless import CHROMIUM_ARGS  # the flags the app's own headless uses


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One Chromium per test module: Playwright's sync API keeps an event loop running in the main
    thread while it is open, which would break the asyncio tests that run after the e2e modules."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.fail("Debian's chromium is required for e2e tests: apt-get install -y chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser) -> Iterator[object]:  # type: ignore[no-untyped-def]
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()
