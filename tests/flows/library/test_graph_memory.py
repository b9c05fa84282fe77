"""What the graph's read side keeps in memory (issue 28, item 3: a 100k-proposition graph served in
< 400 MB; the figures are `tests/bench/library/bench_import_memory.py`'s). Above
`FULL_KEPT_BELOW` propositions the full view is derived when read and not kept, and the settle
derives and snapshots the compact form alone; what is served stays byte-equal."""

from __future__ import annotations

from typing import Any

import server.services.library.graph as graph_service
from server.services.library.graph import GraphService
from server.store.library.graph import FileGraphStore
from tests.fakes import FakeChatStore
from tests.flows.library.test_graph_read import imported
from tests.flows.library.test_library import Library, library  # noqa: F401 - the fixture


def _fresh(lib: Library) -> GraphService:
    """A service over the same files with nothing derived: what a cold process serves."""
    return GraphService(FileGraphStore(lib.data / "graph"), FakeChatStore(), None)  # type: ignore[arg-type]


def test_a_large_graph_keeps_only_the_compact_form(library: Library, monkeypatch: Any) -> None:  # noqa: F811
    monkeypatch.setattr(graph_service, "FULL_KEPT_BELOW", 1)  # every graph is "large"
    monkeypatch.setattr(graph_service, "FULL_KEPT_BYTES", 1)
    view = imported(library, "data-structures-heap.en.md")
    assert [n for n in view["nodes"] if n["kind"] == "proposition"]
    root = library.data / "graph"
    assert (root / "view-compact.snapshot").is_file()  # the settle wrote the compact form
    assert not (root / "view.snapshot").exists()  # and not the full one
    service = library.services.graph
    assert service._view_cache is None and service._rows is None  # the full read kept nothing
    full = library.client.get("/api/graph").content
    monkeypatch.setattr(graph_service, "FULL_KEPT_BELOW", 20_000)
    monkeypatch.setattr(graph_service, "FULL_KEPT_BYTES", 16_000_000)
    assert full == _fresh(library).view_json()  # byte-equal to a derivation that keeps its form
    compact = library.client.get("/api/graph", params={"format": "compact"}).json()
    assert {row[0] for row in compact["props"]} == {
        n["id"] for n in view["nodes"] if n["kind"] == "proposition"
    }


def test_a_small_graph_keeps_both_forms(library: Library) -> None:  # noqa: F811
    imported(library, "data-structures-heap.en.md")
    root = library.data / "graph"
    assert (root / "view.snapshot").is_file() and (root / "view-compact.snapshot").is_file()
    service = library.services.graph
    assert service._view_cache is not None and service._rows is not None  # patched after a merge
