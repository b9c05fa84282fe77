"""The chain table's search says why each row matched and ranks a note's own title first (issue 29,
item 4): in real Chromium against `python -m server`, searching "heap" lists the lonely "Heap"
proposition of the heap note first, and every listed row shows the text it matched with the query
marked, so no row is listed with no visible "heap" (look-alike words such as "perhaps" only count
when nothing holds the query as typed).

The extraction model is a scripted OpenAI-compatible stub: per source (known by its title line) it
returns three propositions; the heap note's "Heap" is in no chain, and the Dijkstra note's
"Priority queue" mentions a heap in its statement only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.library.test_graph_in_browser import graph, import_notes
from tests.procs import ServerProcess, server_on_stub
from tests.stub_openai import Reply, last_user_text

pytestmark = pytest.mark.e2e

NOTES = [
    "data-structures-heap.en.md",
    "algorithms-graph-dijkstra.en.md",
    "algorithms-sets-knapsack-problem.en.md",
]

# by the source's title line: (name, statement) ×3 and the chains between them (1-based)
SCRIPT: dict[str, tuple[list[tuple[str, str]], list[tuple[int, int]]]] = {
    "# Heap": (
        [
            ("Heap", "A tree where every parent orders before its children."),
            ("Complete binary tree", "Every level is full except perhaps the last."),
            ("Array layout", "The children of index i sit at 2i+1 and 2i+2."),
        ],
        [(2, 3)],
    ),
    "# Dijkstra": (
        [
            ("Dijkstra's algorithm", "It settles vertices in order of distance."),
            ("Priority queue", "The frontier is kept in a binary heap keyed by distance."),
            ("Shortest paths", "Each settled vertex has its final distance."),
        ],
        [(1, 2), (2, 3)],
    ),
    "# Knapsack": (
        [
            ("Knapsack problem", "Choose items of greatest value within a weight limit."),
            ("Dynamic programming", "A table of best values for smaller limits helps."),
            ("Optimal value", "The last cell of the table is the answer."),
        ],
        [(1, 2), (2, 3)],
    ),
}


def extractor(body: dict[str, Any]) -> Reply:
    tools = {t.get("function", {}).get("name") for t in body.get("tools", [])}
    if "find" in tools:  # the auditor
        return Reply(tool=("submit", {"links": []}, "call_audit"))
    source = last_user_text(body).split("THE SOURCE:\n", 1)[-1].lstrip()
    props, chains = next(v for k, v in SCRIPT.items() if source.startswith(k))
    return Reply(
        tool=(
            "submit",
            {
                "propositions": [
                    {"id": f"p{i + 1}", "name": n, "statement": s} for i, (n, s) in enumerate(props)
                ],
                "chains": [{"premises": [f"p{a}"], "conclusion": f"p{b}"} for a, b in chains],
            },
            "call_extract",
        )
    )


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir, extractor) as proc:
        yield proc


def test_search_marks_why_each_row_matched_and_ranks_the_title_first(
    page: Page, server: ServerProcess
) -> None:
    import_notes(server, NOTES)
    view = graph(server)
    props = {n["name"]: n for n in view["nodes"] if n["kind"] == "proposition"}
    heap = props["Heap"]
    queue = props["Priority queue"]
    queue_chains = [
        n["id"]
        for n in view["nodes"]
        if n["kind"] == "implication" and queue["id"] in [*n["premises"], n["conclusion"]]
    ]
    assert len(queue_chains) == 2

    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(server.url + "/")
    page.get_by_test_id("open-chain-table").click()
    table = page.get_by_test_id("chain-table")
    table.get_by_test_id("chain-search").fill("heap")

    rows = table.get_by_test_id("table-chain")
    # the note's own title first: its row, in its cluster, tops the table
    expect(rows.first).to_have_attribute("data-chain-id", heap["id"])
    first_why = rows.first.get_by_test_id("chain-match")
    expect(first_why).to_have_attribute("data-field", "title")
    expect(first_why.locator("mark")).to_have_text("Heap")
    expect(table.get_by_test_id("table-cluster").first).to_have_attribute("data-cluster-key", heap["cluster"])

    # the chains through "Priority queue" are listed and say it was its statement that matched
    for chain_id in queue_chains:
        row = table.locator(f'[data-testid="table-chain"][data-chain-id="{chain_id}"]')
        expect(row).to_be_visible()
        why = row.get_by_test_id("chain-match")
        expect(why).to_contain_text("statement of Priority queue")
        expect(why.locator("mark")).to_have_text("heap")

    # every row listed shows why: a visible marked match, none listed with no visible reason
    # and rows that merely look alike ("perhaps", "helps") are not listed when "heap" is found as typed
    expect(rows).to_have_count(3)
    count = rows.count()
    for i in range(count):
        why = rows.nth(i).get_by_test_id("chain-match")
        expect(why).to_be_visible()
        expect(why.locator("mark").first).to_be_visible()
    page.screenshot(path="/tmp/graph-shots/e2e-search-why.png", animations="disabled")

    # clearing the search lists no reasons
    table.get_by_test_id("chain-search").fill("")
    expect(table.get_by_test_id("chain-match")).to_have_count(0)
