"""The notes front door in real Chromium (issue 4): pick files, import, watch each file's progress
to done, see a refusal with its reason, an unchanged re-import, and a same-named file that
replaces what the first one said once the learner says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.livehttp import serve
from tests.procs import start_on_stub
from tests.scripts.library import graph_reply
from tests.stub_openai import create_stub

pytestmark = pytest.mark.e2e
from tests.shared import NOTES  # noqa: E402


def test_import_notes_with_progress_refusal_and_no_op(page: Page, data_dir: Path) -> None:
    with serve(create_stub(graph_reply, delay_s=0)) as stub_url:
        server = start_on_stub(data_dir, stub_url)
        try:
            page.goto(server.url + "/")
            page.get_by_test_id("nav-library").click()
            files = [
                NOTES / "data-structures-heap.en.md",
                NOTES / "algorithms-math-bits.en.md",
                NOTES / "edge" / "empty.md",
            ]
            page.get_by_test_id("import-files").set_input_files([str(f) for f in files])
            page.get_by_test_id("import-submit").click()

            results = page.get_by_test_id("import-result")
            expect(results).to_have_count(3, timeout=20_000)
            refused = page.locator('[data-testid="import-result"][data-name="empty.md"]')
            expect(refused).to_have_attribute("data-status", "refused")
            expect(refused).to_contain_text("empty")
            for name in ("data-structures-heap.en.md", "algorithms-math-bits.en.md"):
                row = page.locator(f'[data-testid="import-result"][data-name="{name}"]')
                expect(row).to_have_attribute("data-status", "done", timeout=30_000)
            expect(page.get_by_test_id("graph-source")).to_have_count(2, timeout=10_000)

            page.get_by_test_id("import-files").set_input_files(str(NOTES / "data-structures-heap.en.md"))
            page.get_by_test_id("import-submit").click()
            again = page.locator(
                '[data-testid="import-result"][data-name="data-structures-heap.en.md"]'
            ).first
            expect(again).to_have_attribute("data-status", "unchanged", timeout=10_000)
            expect(again.get_by_test_id("import-replaces")).to_have_count(0)
            assert (data_dir / "graph" / "nodes.jsonl").read_text().count("\n") > 0

            # another file of the same name, picked on its own: asked about (issue 28, item 5);
            # "replace" replaces what the first one said
            other = (NOTES / "algorithms-math-bits.en.md").read_bytes()
            page.get_by_test_id("import-files").set_input_files(
                {"name": "data-structures-heap.en.md", "mimeType": "text/markdown", "buffer": other}
            )
            page.get_by_test_id("import-submit").click()
            page.get_by_test_id("import-ask").get_by_test_id("import-ask-replace").click()
            expect(page.get_by_test_id("import-ask")).to_have_count(0)
            replaced = page.locator(
                '[data-testid="import-result"][data-name="data-structures-heap.en.md"]'
            ).first
            expect(replaced.get_by_test_id("import-replaces")).to_have_text(
                "Replaces what the earlier data-structures-heap.en.md said", timeout=10_000
            )
            expect(replaced).to_have_attribute("data-status", "done", timeout=30_000)

            # issue 18: a 2.1 MB file is refused at pick time under the 2.0 MB (2,000,000 bytes) limit
            page.get_by_test_id("import-files").set_input_files(
                {"name": "big.md", "mimeType": "text/markdown", "buffer": b"a" * 2_100_000}
            )
            expect(page.get_by_test_id("import-too-large")).to_contain_text("big.md (2.1 MB)")
            expect(page.get_by_test_id("import-pick")).to_have_count(0)
            expect(page.get_by_test_id("import-submit")).to_be_disabled()

            # leaving and coming back (a reload forgets this window's state): the imports still show,
            # from the activity feed's summary rows; the graph is a link away, not "later"
            page.reload()
            expect(page.get_by_test_id("import-earlier").first).to_be_visible(timeout=10_000)
            expect(page.get_by_test_id("import-earlier").first).to_contain_text("1 done")
            expect(page.get_by_role("link", name="See the graph")).to_have_attribute("href", "/")
            expect(page.get_by_text("will come here later")).to_have_count(0)
        finally:
            assert server.stop() == 0
