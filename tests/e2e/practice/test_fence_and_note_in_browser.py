"""The chain table's selection bar and the practice note in real Chromium (issue 30 item 5).

- Delete is fenced at the bar's right end (seed §6): the bar's last item, after a divider that
  follows the safe actions, red (the destructive pair: red fill and red border) with a trash icon,
  and it opens the full-death confirm dialog.
- A practice note over 2,000 characters is not refused (seed §7): the dialog says only the first
  2,000 are kept, Create stays enabled, and the set keeps exactly those characters.

One scripted OpenAI-compatible stub plays every role (tests/scripts/practice.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import FloatRect, Locator, Page, expect

from tests.procs import ServerProcess, server_on_stub
from tests.scripts.practice import practice_reply

pytestmark = pytest.mark.e2e

NOTE = "# Binary heap\n# Heap order\n# Root is the minimum\n"
LEARNER_NOTE = "Make me face heap order before sortedness. " * 60  # 2,580 characters
MAX_NOTE = 2_000


def box(locator: Locator) -> FloatRect:
    found = locator.bounding_box()
    assert found is not None, locator
    return found


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, practice_reply) as proc:
        yield proc


def test_delete_is_fenced_at_the_bar_end_and_a_long_note_is_capped(page: Page, server: ServerProcess) -> None:
    files = [("files", ("heap.md", NOTE.encode(), "text/markdown"))]
    assert httpx.post(f"{server.url}/api/graph/import", files=files, timeout=30).status_code == 202
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(server.url + "/")
    expect(page.get_by_test_id("graph-counts")).to_contain_text("3 propositions", timeout=30_000)
    page.get_by_test_id("open-chain-table").click()
    table = page.get_by_test_id("chain-table")
    table.get_by_test_id("table-cluster").first.get_by_test_id("toggle-cluster").click()
    table.get_by_test_id("table-chain").first.get_by_test_id("select-chain").check()
    bar = page.get_by_test_id("selection-bar")
    expect(bar).to_be_visible()

    # -- the fence: order, place, colour, icon
    order = bar.evaluate("el => [...el.children].map(c => c.dataset.testid || c.className)")
    assert order[-2:] == ["selection-fence", "selection-delete"], order
    assert order.index("selection-clear") < order.index("selection-fence")
    assert order.index("selection-generate") < order.index("selection-fence")
    parts = ("selection-generate", "selection-fence", "selection-delete")
    generate, fence, delete = (box(bar.get_by_test_id(name)) for name in parts)
    outer = box(bar)
    assert generate["x"] + generate["width"] <= fence["x"] < delete["x"]  # safe | fence | delete
    assert fence["width"] <= 3 and fence["height"] >= 0.5 * delete["height"]  # a thin divider
    assert outer["x"] + outer["width"] - (delete["x"] + delete["width"]) < 16  # at the right end
    style = bar.get_by_test_id("selection-delete").evaluate(
        "el => { const s = getComputedStyle(el); const probe = document.createElement('i');"
        " probe.style.color = 'var(--danger)'; document.body.append(probe);"
        " const danger = getComputedStyle(probe).color; probe.remove();"
        " return {bg: s.backgroundColor, border: s.borderTopColor, danger}; }"
    )
    assert style["bg"] == style["danger"] and style["border"] == style["danger"], style  # the red pair
    red, green, blue = (int(v) for v in re.findall(r"\d+", style["danger"])[:3])
    assert red > green + 60 and red > blue + 60, style  # red, whatever the theme
    expect(bar.get_by_test_id("selection-delete").locator("svg")).to_have_count(1)  # the trash icon
    expect(bar.get_by_test_id("selection-delete")).to_have_accessible_name("Delete")
    expect(page.get_by_role("separator")).to_have_count(1)
    bar.get_by_test_id("selection-delete").click()
    expect(page.get_by_test_id("delete-dialog")).to_be_visible()
    page.get_by_test_id("delete-cancel").click()
    expect(page.get_by_test_id("delete-dialog")).to_have_count(0)

    # -- a note over the cap: said, not refused; the set keeps its first 2,000 characters
    bar.get_by_test_id("selection-generate").click()
    dialog = page.get_by_test_id("create-dialog")
    dialog.get_by_test_id("note-input").fill("  " + LEARNER_NOTE)
    expect(dialog.get_by_test_id("note-counter")).to_contain_text(f"{len(LEARNER_NOTE.strip())}/{MAX_NOTE}")
    expect(dialog.get_by_test_id("note-capped")).to_contain_text("only the first 2,000 characters are kept")
    expect(dialog.get_by_test_id("create-submit")).to_be_enabled()
    dialog.get_by_test_id("create-submit").click()
    expect(page).to_have_url(re.compile(r"/practice/ps_[0-9a-f]+$"), timeout=10_000)
    set_id = page.url.rsplit("/", 1)[1]
    kept = httpx.get(f"{server.url}/api/practice/sets/{set_id}", timeout=10).json()["note"]
    assert kept == LEARNER_NOTE.strip()[:MAX_NOTE].rstrip()
