"""Headless Chromium for the Workbench (seed §5.1: sub-agents verify, never one-shot).

`ChromiumHeadless` implements the `Headless` port with Playwright's async API driving the system
`chromium` (Playwright cannot download its own browser here). One browser is launched lazily and
reused by every check; each check gets its own browser context, closed afterwards; `close()`
shuts the browser down.

Untrusted HTML runs with JavaScript on and every network request aborted (only `data:`, `about:`
and `blob:` URLs load). Everything is bounded by `timeout_s`: a page that never finishes loading, or
whose script loops forever (the screenshot then never comes), reports `timed_out=True` instead of
hanging; a context that will not close takes the whole browser down (relaunched on next use).

Neither Playwright's driver nor Chromium sees our environment (issue 10, deliver 6): both get only
`core.child_env`'s variables plus their own (`BROWSER_ENV_PREFIXES`), so no API key, no desktop
token. Chromium gets its environment through `launch(env=...)`; the driver, which Playwright starts
with a copy of `os.environ` and no option to change it, through a wrapper of
`playwright._impl.transport.get_driver_env` held only while it starts (`_confined_driver_env`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.util
import logging
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from server.core.machine_room.child_env import child_environment
from server.core.workbench.png import PngUnreadable, is_uniform

log = logging.getLogger(__name__)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
]
SETTLE_S = 1.0
"""Seconds a page gets after `load` to draw (animations, timers) before the screenshot."""
CLOSE_S = 5.0
"""Seconds a context gets to close before the whole browser is shut down instead."""
MAX_NOTES = 20
"""Console errors, page errors and dialogs kept per check (each at most `MAX_NOTE` characters)."""
MAX_NOTE = 500
_ALLOWED_SCHEMES = ("data:", "about:", "blob:")
BROWSER_ENV_PREFIXES = ("PW_", "PLAYWRIGHT_", "XDG_", "FONTCONFIG_")
"""What the driver and Chromium may see besides `core.child_env`'s: Playwright's own settings, the
desktop's folders, the font configuration."""


def browser_environment() -> dict[str, str]:
    """The environment Playwright's driver and Chromium run with (see the module docstring)."""
    return child_environment(os.environ, BROWSER_ENV_PREFIXES)


@contextlib.contextmanager
def _confined_driver_env() -> Iterator[None]:
    """While held, Playwright starts its driver with `browser_environment()` plus the variables
    Playwright adds itself, instead of a copy of `os.environ`. A Playwright without the hook starts
    its driver unconfined, and this says so in the log."""
    try:
        from playwright._impl import transport
    except ImportError:  # pragma: no cover - a Playwright whose layout changed
        transport = None  # type: ignore[assignment]
    original = getattr(transport, "get_driver_env", None)
    if original is None:  # pragma: no cover - see above
        log.warning("cannot confine the environment of Playwright's driver: this Playwright has no hook")
        yield
        return

    def confined() -> dict[str, str]:
        return child_environment(original(), BROWSER_ENV_PREFIXES)

    transport.get_driver_env = confined  # type: ignore[attr-defined]
    try:
        yield
    finally:
        transport.get_driver_env = original  # type: ignore[attr-defined]


@dataclass
class HtmlCheckResult:
    """What running a page observed (the `HtmlCheck` port): console errors, uncaught page errors,
    dialogs as `"alert: text"` (every one dismissed), whether anything visible was drawn (the
    screenshot's pixels are not all alike), and whether the page ran out of time."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    visible: bool = False
    timed_out: bool = False
    png: bytes | None = None


@dataclass
class SvgRenderResult:
    """An SVG rendered to a PNG (the `SvgRender` port); `nonblank` when its pixels are not all alike."""

    png: bytes
    nonblank: bool


def _note(notes: list[str], text: str) -> None:
    if len(notes) < MAX_NOTES:
        notes.append(text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 1] + "…")


def _drawn(png: bytes) -> bool:
    try:
        return not is_uniform(png)
    except PngUnreadable as exc:
        log.warning("headless screenshot unreadable: %s", exc)
        return False


class ChromiumHeadless:
    """The `Headless` port over Playwright and the system Chromium.

    Args:
        executable: the browser binary; defaults to `chromium` on PATH.
        settle_s: seconds after `load` before the screenshot (capped by the check's timeout).
        viewport: (width, height) in CSS pixels of the page `run_html` draws into.
    """

    def __init__(
        self,
        executable: str | None = None,
        *,
        settle_s: float = SETTLE_S,
        viewport: tuple[int, int] = (800, 600),
    ) -> None:
        self.executable = executable or shutil.which("chromium")
        self.settle_s = settle_s
        self.viewport = {"width": viewport[0], "height": viewport[1]}
        self._lock = asyncio.Lock()
        self._playwright: Any = None
        self._browser: Any = None

    def available(self) -> bool:
        """Whether Chromium is on PATH (or given) and Playwright is importable."""
        return bool(self.executable) and importlib.util.find_spec("playwright") is not None

    async def _get_browser(self) -> Any:
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if not self.available():
                raise RuntimeError("Headless Chromium is not available: chromium is not on PATH.")
            from playwright.async_api import async_playwright

            if self._playwright is None:
                with _confined_driver_env():
                    self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.executable, args=CHROMIUM_ARGS, headless=True, env=browser_environment()
            )
            return self._browser

    async def _drop_browser(self) -> None:
        async with self._lock:
            browser, self._browser = self._browser, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), CLOSE_S)

    async def close(self) -> None:
        """Shut the browser and Playwright down (a later check launches them again)."""
        await self._drop_browser()
        async with self._lock:
            playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(playwright.stop(), CLOSE_S)

    async def _close_context(self, context: Any) -> None:
        try:
            await asyncio.wait_for(context.close(), CLOSE_S)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("a headless context would not close; shutting the browser down")
            await self._drop_browser()

    async def run_html(self, html: str, *, timeout_s: float = 10.0) -> HtmlCheckResult:
        """Load `html` with JavaScript on and no network, let it run `settle_s`, screenshot it.

        Raises ValueError for a non-positive timeout, RuntimeError when no browser can run.
        Returns the observations; `timed_out` when loading, settling or the screenshot outlasted
        `timeout_s` seconds (in all). Returns within about `timeout_s` + `CLOSE_S` seconds even
        when the page's script never yields.
        """
        if not timeout_s > 0:
            raise ValueError("timeout_s must be positive")
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        browser = await self._get_browser()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        result = HtmlCheckResult()

        def left() -> float:
            return max(0.01, deadline - loop.time())

        context = await browser.new_context(
            java_script_enabled=True, viewport=self.viewport, service_workers="block", accept_downloads=False
        )
        try:

            async def route(route: Any) -> None:
                if route.request.url.startswith(_ALLOWED_SCHEMES):
                    await route.continue_()
                else:
                    await route.abort()

            async def on_dialog(dialog: Any) -> None:
                _note(result.dialogs, f"{dialog.type}: {dialog.message}")
                with contextlib.suppress(Exception):
                    await dialog.dismiss()

            def on_console(message: Any) -> None:
                if message.type == "error":
                    _note(result.console_errors, message.text)

            def on_page_error(error: Any) -> None:
                _note(result.page_errors, getattr(error, "message", None) or str(error))

            await context.route("**/*", route)
            page = await context.new_page()
            page.on("dialog", on_dialog)
            page.on("console", on_console)
            page.on("pageerror", on_page_error)
            try:
                await asyncio.wait_for(
                    page.set_content(html, wait_until="load", timeout=left() * 1000), left()
                )
                await asyncio.sleep(min(self.settle_s, left()))
                png = await asyncio.wait_for(page.screenshot(type="png", timeout=left() * 1000), left())
            except (TimeoutError, PlaywrightTimeout):
                result.timed_out = True
            else:
                result.png = png
                result.visible = _drawn(png)
        finally:
            await self._close_context(context)
        return result

    async def render_svg(self, svg: str, *, width: int = 800, height: int = 600) -> SvgRenderResult:
        """Draw `svg` (already sanitized) as an `<img>` (its scripts never run) on a white page of
        `width` x `height` CSS pixels, JavaScript off, no network; a PNG of that page.

        Raises ValueError for a size outside 1-4000, RuntimeError when no browser can run,
        TimeoutError when the picture took longer than 20 s to draw.
        """
        if not (0 < width <= 4000 and 0 < height <= 4000):
            raise ValueError("width and height must be 1-4000 pixels")
        browser = await self._get_browser()
        source = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        page_html = (
            "<!doctype html><html><head><style>html,body{margin:0;background:#fff}"
            "img{display:block;object-fit:contain}</style></head><body>"
            f'<img alt="" width="{width}" height="{height}" src="data:image/svg+xml;base64,{source}">'
            "</body></html>"
        )
        context = await browser.new_context(
            java_script_enabled=False, viewport={"width": width, "height": height}, service_workers="block"
        )
        try:

            async def route(route: Any) -> None:
                if route.request.url.startswith(_ALLOWED_SCHEMES):
                    await route.continue_()
                else:
                    await route.abort()

            await context.route("**/*", route)
            page = await context.new_page()
            await asyncio.wait_for(page.set_content(page_html, wait_until="load", timeout=20_000), 20)
            png = await asyncio.wait_for(page.screenshot(type="png", timeout=20_000), 20)
        finally:
            await self._close_context(context)
        return SvgRenderResult(png=png, nonblank=_drawn(png))
