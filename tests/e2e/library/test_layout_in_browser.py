"""The lesson page on any screen, by keyboard, in both themes (issue 18, items 2-5), in real Chromium
against `python -m server` and a scripted model.

At 1280x800, 800x600 and 390x844, light and dark: a scripted lesson with a long quiz keeps the
composer at least 280 px wide and the dock's Check in view inside at most 40 % of the window; the
dock is one column, moves by arrow keys, collapses to a slim bar while the learner reads and
expands on focus, starts clean for every question (no verdict above the next one, none after
typing instead of answering) and the question shows once; the sidebar is a drawer under 900 px
and the plan a toggled panel; axe-core finds no serious or critical violation on the home, lesson,
library, settings and practice pages; the dark theme is dark and the Settings switch overrides the
system. Screenshots land in tests/e2e/output/ (gitignored), never in the repository."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from server.core.classroom.questions import display_order
from tests.procs import ServerProcess, server_on_stub
from tests.scripts.classroom import lesson_reply
from tests.scripts.library import graph_reply
from tests.stub_openai import Reply

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
AXE = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
OUTPUT = Path(__file__).resolve().parents[1] / "output"

VIEWPORTS = [(1280, 800), (800, 600), (390, 844)]
SCHEMES = ["light", "dark"]

# A probe quiz long enough to overflow the dock at 800x600: Check must stay in view all the same.
LONG_QUIZ = {
    "question": "Which statement about the derivative of $f(x) = x^2$ at a point $a$ is true? "
    "Think about the slope of the secant line through $(a, a^2)$ and $(a + h, (a + h)^2)$ as $h$ shrinks.",
    "options": [
        "It is $2a$, the limit of the secant slopes $\\frac{(a+h)^2 - a^2}{h} = 2a + h$ as $h \\to 0$, "
        "which is the slope of the tangent line at $a$.",
        "It is $a^2$, because the derivative of a function at a point is the value of the function there, "
        "read off the graph directly.",
        "It does not exist at $a = 0$, because the parabola has its lowest point there and a tangent line "
        "cannot touch a curve at its minimum.",
        "It is $2$, for every $a$, because the exponent comes down in front and the power drops by one.",
    ],
    "correct": 0,
    "explanation": "The secant slope is $2a + h$, which tends to $2a$.",
}
NOTE = "# Binary heap\n# Heap order\n# Root is the minimum\n"


def _answered(body: dict[str, Any]) -> set[str]:
    names: dict[str, str] = {}
    done: set[str] = set()
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
        if message.get("role") == "tool":
            done.add(names.get(message.get("tool_call_id", ""), "?"))
    return done


def reply(body: dict[str, Any]) -> Reply:
    """The scripted lesson (tests/scripts/classroom.py) with a long probe quiz; the graph's extractor."""
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "submit" in tools:
        return graph_reply(body)
    if "probe_done" in tools and "quiz" not in _answered(body):
        return Reply("Let's see where you stand.", ("quiz", LONG_QUIZ, "call_probe_quiz"))
    return lesson_reply(body)


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing ({AXE}): run `npm install` in frontend/ (make test does)")
    with server_on_stub(data_dir, reply, delay_s=0.01) as proc:
        yield proc


def shot(page: Page, name: str) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"{name}.png"))


def axe_violations(page: Page) -> list[str]:
    """Serious and critical axe-core violations on the page as shown, one line each. axe is
    evaluated through the DevTools protocol: the app's CSP (script-src 'self') refuses an injected
    inline script tag, as it should."""
    page.evaluate(AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        """async () => {
            const result = await axe.run(document, { resultTypes: ['violations'] });
            return result.violations
                .filter((v) => v.impact === 'serious' || v.impact === 'critical')
                .map((v) => `${v.impact} ${v.id}: ${v.help} -- ` +
                    v.nodes.slice(0, 4).map((n) =>
                        n.target.join(' ') + ' (' + (n.failureSummary || '').replace(/\\s+/g, ' ') + ')'
                    ).join(' | '));
        }"""
    )
    return list(found)


def assert_accessible(page: Page, where: str) -> None:
    violations = axe_violations(page)
    assert not violations, f"axe on {where}:\n" + "\n".join(violations)


def luminance_of(page: Page, selector: str, prop: str = "background-color") -> float:
    """Relative luminance (0 black .. 1 white) of an element's computed colour."""
    rgb = page.evaluate(
        "([s, p]) => getComputedStyle(document.querySelector(s)).getPropertyValue(p)", [selector, prop]
    )
    parts = [float(x) for x in re.findall(r"[\d.]+", rgb)[:3]]

    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in parts)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def box(page: Page, testid: str) -> dict[str, float]:
    found = page.get_by_test_id(testid).first.bounding_box()
    assert found is not None, f"{testid} has no box"
    return found


def in_window(page: Page, testid: str) -> bool:
    """Whether the element is fully inside the window and not clipped by any scrolling ancestor."""
    return bool(
        page.get_by_test_id(testid).first.evaluate(
            """(el) => {
                const r = el.getBoundingClientRect();
                if (r.top < -1 || r.left < -1) return false;
                if (r.bottom > innerHeight + 1 || r.right > innerWidth + 1) return false;
                for (let p = el.parentElement; p; p = p.parentElement) {
                    const s = getComputedStyle(p);
                    if (s.overflowY === 'visible' && s.overflowX === 'visible') continue;
                    const q = p.getBoundingClientRect();
                    if (r.top < q.top - 1 || r.bottom > q.bottom + 1) return false;
                    if (r.left < q.left - 1 || r.right > q.right + 1) return false;
                }
                return true;
            }"""
        )
    )


def focused_testid(page: Page) -> str | None:
    return page.evaluate("() => document.activeElement && document.activeElement.getAttribute('data-testid')")


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", VIEWPORTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_lesson_on_every_screen(
    browser: Browser, server: ServerProcess, size: tuple[int, int], scheme: str
) -> None:
    width, height = size
    narrow = width < 900
    tag = f"{width}x{height}-{scheme}"
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        dark = luminance_of(page, "html") < 0.1
        assert dark == (scheme == "dark"), f"the page follows the system's {scheme} scheme"

        # the sidebar: beside the page from 900 px, a drawer below (focus goes in, Escape closes)
        toggle = page.get_by_test_id("nav-toggle")
        if narrow:
            expect(page.get_by_test_id("sidebar")).not_to_be_visible()
            toggle.click()
            expect(page.get_by_test_id("sidebar")).to_be_visible()
            assert page.evaluate("() => document.getElementById('sidebar').contains(document.activeElement)")
            expect(page.locator("main")).to_have_attribute("inert", "")  # modal: the page behind is inert
            page.keyboard.press("Escape")
            expect(page.get_by_test_id("sidebar")).not_to_be_visible()
            assert focused_testid(page) == "nav-toggle"
            toggle.click()
        else:
            expect(toggle).not_to_be_visible()
        page.get_by_test_id("new-lesson").click()
        expect(page).to_have_url(re.compile(r"/chat/c_[0-9a-f]+$"))
        expect(page.get_by_test_id("sidebar")).to_be_visible(visible=not narrow)  # navigating closed it
        assert box(page, "composer-input")["width"] >= 280

        page.get_by_test_id("composer-input").fill("Teach me derivatives")
        page.get_by_test_id("composer-send").click()
        dock = page.get_by_test_id("question-dock")
        expect(dock.get_by_test_id("dock-quiz")).to_be_visible(timeout=20_000)
        options = dock.get_by_test_id("dock-option")
        expect(options).to_have_count(4)
        shot(page, f"layout-{tag}-quiz")

        # at most 40 % of the window, Check in view, the composer still usable, one column
        assert box(page, "question-dock")["height"] <= 0.4 * height + 1
        assert in_window(page, "dock-submit"), "Check is out of view"
        assert box(page, "composer-input")["width"] >= 280
        lefts = {round(options.nth(i).bounding_box()["x"]) for i in range(4)}  # type: ignore[index]
        assert len(lefts) == 1, f"options in more than one column: {lefts}"
        if width <= 400:  # a phone: the transcript keeps at least 40 % of the height
            assert box(page, "transcript")["height"] >= 0.4 * height, box(page, "transcript")
        # every option is visible or reachable by scrolling inside the dock, with Check in view
        scroller = dock.locator(".dock-scroll")
        for i in range(4):
            options.nth(i).scroll_into_view_if_needed()
            area = scroller.bounding_box()
            option = options.nth(i).bounding_box()
            assert area is not None and option is not None
            assert (
                option["y"] >= area["y"] - 4
                and option["y"] + option["height"] <= area["y"] + area["height"] + 4
            ), f"option {i} is clipped: {option} outside {area}"
            assert in_window(page, "dock-submit"), f"Check is out of view with option {i} shown"
        scroller.evaluate("el => { el.scrollTop = 0; }")
        # the question shows once: the transcript only points at the dock
        expect(page.get_by_test_id("quiz-pending")).to_be_visible()
        expect(page.get_by_test_id("quiz-pending")).not_to_contain_text("secant")

        # the keyboard: the options are one radio group moved by the arrow keys
        order = display_order("call_probe_quiz", 4)
        assert focused_testid(page) == "dock-option"
        page.keyboard.press("ArrowDown")
        expect(options.nth(0)).to_have_attribute("aria-checked", "true")
        page.keyboard.press("ArrowDown")
        expect(options.nth(1)).to_have_attribute("aria-checked", "true")
        expect(options.nth(0)).to_have_attribute("aria-checked", "false")
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")  # wraps to the last
        expect(options.nth(3)).to_have_attribute("aria-checked", "true")
        assert options.nth(3).get_attribute("tabindex") == "0"
        assert options.nth(0).get_attribute("tabindex") == "-1"
        page.keyboard.press("Home")
        expect(options.nth(0)).to_have_attribute("aria-checked", "true")
        assert options.nth(0).get_attribute("data-authored-index") == str(order[0])

        # reading the prose collapses the dock to a slim bar; focusing the bar expands it
        page.get_by_test_id("transcript").click(position={"x": 5, "y": 5})
        expect(dock).to_have_attribute("data-collapsed", "true")
        expect(dock.get_by_test_id("dock-submit")).to_have_count(0)
        assert box(page, "question-dock")["height"] <= 80
        shot(page, f"layout-{tag}-collapsed")
        page.get_by_test_id("dock-bar").focus()
        expect(dock).to_have_attribute("data-collapsed", "false")
        expect(options.nth(0)).to_be_focused()  # back on the chosen option, still chosen
        expect(options.nth(0)).to_have_attribute("aria-checked", "true")
        page.keyboard.press("Enter")  # Enter on the chosen option checks it

        # the next question starts clean: no verdict above it
        expect(dock).to_contain_text("What do you want to learn?", timeout=20_000)
        expect(page.get_by_test_id("dock-verdict")).to_have_count(0)
        assert in_window(page, "dock-send-answer")
        answer = dock.get_by_test_id("dock-answer-input")
        expect(answer).to_be_focused()
        answer.fill("Derivatives, for my exam")
        # the question can arrive while its turn is still settling; Answer is enabled once it has
        expect(dock.get_by_test_id("dock-send-answer")).to_be_enabled()
        answer.press("Enter")

        # the teacher's plan: beside the lesson from 900 px, a toggled panel below
        expect(dock).to_contain_text("The derivative of", timeout=30_000)
        plan = page.get_by_test_id("plan-panel")
        if narrow:
            expect(plan).not_to_be_visible()
            page.get_by_test_id("plan-toggle").click()
        else:
            expect(page.get_by_test_id("plan-toggle")).not_to_be_visible()
        expect(plan).to_be_visible()
        expect(plan.get_by_test_id("plan-node")).to_have_count(3)
        shot(page, f"layout-{tag}-plan")
        assert in_window(page, "plan-panel") or not narrow
        if narrow:
            assert_accessible(page, f"the lesson with its plan open at {tag}")
            page.keyboard.press("Escape")
            expect(plan).not_to_be_visible()
            expect(page.get_by_test_id("plan-toggle")).to_be_focused()
        assert_accessible(page, f"the lesson with a quiz open at {tag}")

        # answer by mouse (opening the plan was reading: the dock collapsed, a click on its bar
        # expands it); once the reply ends the verdict is gone, and typing does not bring it back
        if dock.get_attribute("data-collapsed") == "true":
            dock.get_by_test_id("dock-bar").click()
        teach = display_order("call_teach_quiz", 3)
        dock.locator(f'[data-testid="dock-option"][data-authored-index="{teach[0]}"]').click()
        dock.get_by_test_id("dock-submit").click()
        expect(page.get_by_test_id("message-assistant").last).to_contain_text("Well done", timeout=20_000)
        expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
        expect(page.get_by_test_id("question-dock")).to_have_count(0)
        page.get_by_test_id("composer-input").fill("Thanks, and the power rule?")
        page.get_by_test_id("composer-send").click()
        expect(page.get_by_test_id("message-user").last).to_contain_text("power rule")
        expect(page.get_by_test_id("dock-verdict")).to_have_count(0)
        expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=20_000)
        expect(page.get_by_test_id("dock-verdict")).to_have_count(0)
        assert box(page, "composer-input")["width"] >= 280
        shot(page, f"layout-{tag}-end")
    finally:
        context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_page_passes_axe(browser: Browser, server: ServerProcess, scheme: str) -> None:
    """Home (with a graph), a lesson, Import notes, Settings and Practice: no serious or critical
    violation, light and dark, wide and on a phone."""
    files = [("files", ("heap.md", NOTE.encode(), "text/markdown"))]
    assert httpx.post(f"{server.url}/api/graph/import", files=files, timeout=30).status_code == 202
    chat = httpx.post(f"{server.url}/api/chats", json={}, timeout=10).json()
    for width, height in ((1280, 800), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
        page = context.new_page()
        try:
            page.goto(server.url + "/")
            expect(page.get_by_test_id("graph-counts")).to_be_visible(timeout=30_000)
            for path, ready in (
                ("/", "graph-counts"),
                (f"/chat/{chat['id']}", "composer-input"),
                ("/library", "nav-library"),
                ("/settings", "appearance-settings"),
                ("/practice", "nav-practice"),
            ):
                page.goto(server.url + path)
                expect(page.get_by_test_id(ready)).to_be_attached(timeout=20_000)
                page.wait_for_load_state("networkidle")
                name = path.strip("/").split("/")[0] or "home"
                shot(page, f"page-{name}-{width}x{height}-{scheme}")
                assert_accessible(page, f"{path} at {width}x{height}, {scheme}")
        finally:
            context.close()


def test_the_chain_table_is_usable_on_a_phone(browser: Browser, server: ServerProcess) -> None:
    files = [("files", ("heap.md", NOTE.encode(), "text/markdown"))]
    assert httpx.post(f"{server.url}/api/graph/import", files=files, timeout=30).status_code == 202
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        expect(page.get_by_test_id("graph-counts")).to_contain_text("proposition", timeout=30_000)
        page.get_by_test_id("open-chain-table").click()
        table = page.get_by_test_id("chain-table")
        expect(table).to_be_visible()
        table.get_by_test_id("table-cluster").first.get_by_test_id("toggle-cluster").click()
        table.get_by_test_id("table-chain").first.get_by_test_id("select-chain").check()
        for testid in ("chain-table-close", "selection-generate", "toggle-cluster"):
            assert in_window(page, testid), f"{testid} is clipped on a phone"
        box_ = table.bounding_box()
        assert box_ is not None and box_["x"] >= 0 and box_["x"] + box_["width"] <= 390
        # nothing wider than the phone: no sideways scrolling to reach a row's controls
        assert page.evaluate(
            "() => { const s = document.querySelector('.chain-table-scroll');"
            " return s.scrollWidth <= s.clientWidth + 1; }"
        )
        shot(page, "chain-table-390x844")
        assert_accessible(page, "the chain table on a phone")
    finally:
        context.close()


def test_the_theme_switch_overrides_the_system_and_the_graph_follows(
    browser: Browser, server: ServerProcess
) -> None:
    files = [("files", ("heap.md", NOTE.encode(), "text/markdown"))]
    assert httpx.post(f"{server.url}/api/graph/import", files=files, timeout=30).status_code == 202
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="light")
    page = context.new_page()
    try:
        page.goto(server.url + "/settings")
        expect(page.get_by_test_id("theme-system")).to_be_checked()
        assert luminance_of(page, "html") > 0.8
        page.get_by_test_id("theme-dark").check()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        assert luminance_of(page, "html") < 0.1
        assert luminance_of(page, "html", "color") > 0.6  # light text on the dark page
        page.reload()  # kept in this browser
        expect(page.get_by_test_id("theme-dark")).to_be_checked()
        assert luminance_of(page, "html") < 0.1

        # the graph canvas draws in the theme's colours
        page.goto(server.url + "/")
        expect(page.get_by_test_id("graph-counts")).to_contain_text("proposition", timeout=30_000)
        page.wait_for_timeout(300)
        corner = page.evaluate(
            "() => Array.from(document.querySelector('canvas').getContext('2d')"
            ".getImageData(2, 2, 1, 1).data).slice(0, 3)"
        )
        assert max(corner) < 60, f"the graph's background is not dark: {corner}"

        page.goto(server.url + "/settings")
        page.get_by_test_id("theme-light").check()
        assert luminance_of(page, "html") > 0.8
        page.emulate_media(color_scheme="dark")
        assert luminance_of(page, "html") > 0.8  # the choice beats the system
        page.get_by_test_id("theme-system").check()
        expect(page.locator("html")).not_to_have_attribute("data-theme", re.compile(".*"))
        assert luminance_of(page, "html") < 0.1  # back to the system's (dark) scheme
        assert page.evaluate("() => localStorage.getItem('lh-theme')") is None
    finally:
        context.close()
