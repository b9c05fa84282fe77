"""The graph's read channel over HTTP (issue 5): the view after importing fixture notes, positions,
render settings, full-death deletion, and the 409 while an extraction of the same source runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

import server.services.library.graph as graph_service
from server.core.library.layout import settle
from server.core.library.layout_metrics import region_metrics
from server.services.library.graph import GraphService
from server.store.library.graph import FileGraphStore
from tests.fakes import FakeChatStore
from tests.flows.library.test_library import NOTES, Library, library  # noqa: F401 - the fixture


def imported(lib: Library, *names: str) -> dict[str, Any]:
    lib.upload(*(NOTES / n for n in names))
    lib.settle()
    return lib.client.get("/api/graph").json()


def test_the_view_after_an_import(library: Library) -> None:  # noqa: F811
    view = imported(library, "data-structures-heap.en.md", "algorithms-math-bits.en.md")
    props = [n for n in view["nodes"] if n["kind"] == "proposition"]
    implications = [n for n in view["nodes"] if n["kind"] == "implication"]
    assert props and implications
    chains = [json for json in library.ledger("chains")]
    assert {i["id"] for i in implications} == {c["id"] for c in chains}
    assert all("x" in n and "y" in n for n in view["nodes"])  # the layout settled after each merge
    assert len(view["clusters"]) == 2 and {c["label"] for c in view["clusters"]} == {
        "data-structures-heap.en.md",
        "algorithms-math-bits.en.md",
    }
    assert sum(c["nodeCount"] for c in view["clusters"]) == len(props)
    clusters = library.client.get("/api/graph/clusters").json()["clusters"]
    assert clusters == view["clusters"]
    before = sorted(p.name for p in (library.data / "graph").iterdir())
    library.client.get("/api/graph")
    assert sorted(p.name for p in (library.data / "graph").iterdir()) == before  # a pure read


def test_dragged_positions_persist_and_are_sanitized(library: Library) -> None:  # noqa: F811
    view = imported(library, "data-structures-heap.en.md")
    first = view["nodes"][0]["id"]
    saved = library.client.put(
        "/api/graph/positions",
        json={first: {"x": 12.5, "y": -3}, "n_unknown": [1, 2], view["nodes"][1]["id"]: {"x": None, "y": 1}},
    )
    assert saved.json() == {"saved": 1}
    bad = library.client.put("/api/graph/positions", json={view["nodes"][1]["id"]: {"x": "NaN", "y": 1}})
    assert bad.status_code == 400 and "x" in bad.json()["detail"]
    again = {n["id"]: n for n in library.client.get("/api/graph").json()["nodes"]}
    assert (again[first]["x"], again[first]["y"]) == (12.5, -3.0)
    assert library.client.put("/api/graph/positions", json=[1, 2]).status_code == 400
    settings = library.client.put("/api/graph/settings", json={"labels": False, "labelZoom": 1.5})
    assert settings.json()["settings"] == {"labels": False, "labelZoom": 1.5}
    assert library.client.get("/api/graph/settings").json()["settings"]["labelZoom"] == 1.5
    assert library.client.put("/api/graph/settings", json={"color": "red"}).status_code == 400


def test_deletion_is_full_death(library: Library) -> None:  # noqa: F811
    view = imported(library, "data-structures-heap.en.md")
    implications = [n for n in view["nodes"] if n["kind"] == "implication"]
    target = implications[0]
    response = library.client.post("/api/graph/delete", json={"ids": [target["id"]]})
    assert response.json() == {"deletedNodes": [], "deletedChains": [target["id"]]}
    after = library.client.get("/api/graph").json()
    assert {n["id"] for n in after["nodes"]} == {n["id"] for n in view["nodes"]} - {target["id"]}

    conclusion = next(n for n in after["nodes"] if n["kind"] == "implication")["conclusion"]
    referencing = {
        n["id"]
        for n in after["nodes"]
        if n["kind"] == "implication" and (n["conclusion"] == conclusion or conclusion in n["premises"])
    }
    response = library.client.post("/api/graph/delete", json={"ids": [conclusion]})
    assert response.json()["deletedNodes"] == [conclusion]
    assert set(response.json()["deletedChains"]) == referencing
    final = library.client.get("/api/graph").json()
    assert {n["id"] for n in final["nodes"]} == {n["id"] for n in after["nodes"]} - {conclusion} - referencing
    positions = (library.data / "graph" / "positions.json").read_text()
    assert conclusion not in positions
    assert library.client.post("/api/graph/delete", json={"ids": ["n_nope"]}).status_code == 404


def test_deletion_is_refused_while_the_source_is_extracted(library: Library) -> None:  # noqa: F811
    library.upload(NOTES / "data-structures-heap.en.md", names=["notes/heap.md"])
    library.settle()
    view = library.client.get("/api/graph").json()
    some = next(n for n in view["nodes"] if n["kind"] == "proposition")
    gate = library.hold_model()
    note = Path(library.data.parent / "heap.md")
    note.write_text((NOTES / "data-structures-heap.en.md").read_text() + "\nA new line.\n")
    library.upload(note, names=["notes/heap.md"])  # same path (with its folder): same source, changed
    response = library.client.post("/api/graph/delete", json={"ids": [some["id"]]})
    assert response.status_code == 409 and response.json()["error"] == "extraction_running"
    gate.set()
    library.settle()
    assert library.client.post("/api/graph/delete", json={"ids": [some["id"]]}).status_code == 200


def test_the_settle_runs_off_the_loop_and_draws_one_region_per_note(
    library: Library,  # noqa: F811
    monkeypatch: Any,
) -> None:
    """The layout settle after each merge computes in a worker thread (issue 16 item 3), with the
    birth sessions passed in, so each note's propositions form a region (issue 17 item 1)."""
    calls: list[bool] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
            calls.append(True)  # on the event loop
        except RuntimeError:
            calls.append(False)
        assert kwargs.get("groups"), "the birth sessions reach the settle"
        return settle(*args, **kwargs)

    monkeypatch.setattr(graph_service, "settle", recording)
    names = [p.name for p in sorted(NOTES.glob("*.md")) if "large" not in p.name]
    view = imported(library, *names)
    assert calls and not any(calls)
    props = [n for n in view["nodes"] if n["kind"] == "proposition"]
    positions = {n["id"]: (n["x"], n["y"]) for n in props}
    metrics = region_metrics(positions, {n["id"]: n["cluster"] for n in props}, pad=20.0)
    assert metrics.sessions == len(names)
    assert metrics.own_share >= 0.9 and metrics.overlap <= 0.1, metrics


def _no_fold() -> dict[str, Any]:
    raise AssertionError("a cold read folded the ledgers")


def test_a_cold_start_serves_the_snapshot_the_settle_wrote(library: Library) -> None:  # noqa: F811
    imported(library, "data-structures-heap.en.md")
    served = library.client.get("/api/graph").content
    root = library.data / "graph"
    assert (root / "view.snapshot").is_file()  # the settle after the merge wrote it

    store = FileGraphStore(root)  # a restart: nothing folded yet
    store.nodes = _no_fold  # type: ignore[method-assign]
    store.chains = _no_fold  # type: ignore[method-assign]
    assert GraphService(store, FakeChatStore(), None).view_json() == served  # type: ignore[arg-type]

    # a drag changes the positions: the snapshot's key is stale, so the view is derived afresh
    first = orjson.loads(served)["nodes"][0]["id"]
    saved = library.client.put("/api/graph/positions", json={first: {"x": 1.5, "y": 2.5}})
    assert saved.json() == {"saved": 1}
    cold = GraphService(FileGraphStore(root), FakeChatStore(), None).view_json()  # type: ignore[arg-type]
    assert cold == library.client.get("/api/graph").content
    moved = next(n for n in orjson.loads(cold)["nodes"] if n["id"] == first)
    assert (moved["x"], moved["y"]) == (1.5, 2.5)

    # an unreadable or torn snapshot is never served
    for junk in (b"", b"garbage", b"[1]\n", served[:100]):
        (root / "view.snapshot").write_bytes(junk)
        view = GraphService(FileGraphStore(root), FakeChatStore(), None).view_json()  # type: ignore[arg-type]
        assert view == library.client.get("/api/graph").content


def test_notes_imported_from_folders_group_by_folder(library: Library) -> None:  # noqa: F811
    """Issue 17 item 2: each file's cluster names its folder, the view lists the folders (name,
    full path, parent), files of one folder are placed together and folders apart."""
    files = {
        "vault/algorithms/dijkstra.md": "algorithms-graph-dijkstra.en.md",
        "vault/algorithms/knapsack.md": "algorithms-sets-knapsack-problem.en.md",
        "vault/algorithms/bits.md": "algorithms-math-bits.en.md",
        "vault/math/analysis.md": "analysis-1-definitions.de.md",
        "vault/math/rank.md": "rank-factorization.de.md",
        "vault/heap.md": "data-structures-heap.en.md",
    }
    library.upload(*(NOTES / f for f in files.values()), names=list(files))
    library.settle()
    view = library.client.get("/api/graph").json()
    folders = {f["path"]: f for f in view["folders"]}
    assert set(folders) == {"vault", "vault/algorithms", "vault/math"}
    assert (
        folders["vault/math"]["label"] == "math"
        and folders["vault/math"]["parent"] == folders["vault"]["key"]
    )
    of = {c["label"]: c["folder"] for c in view["clusters"]}
    assert of["dijkstra.md"] == of["bits.md"] == folders["vault/algorithms"]["key"]
    assert of["heap.md"] == folders["vault"]["key"]
    assert library.client.get("/api/graph/clusters").json()["clusters"] == view["clusters"]
    props = [n for n in view["nodes"] if n["kind"] == "proposition"]
    folder_of = {c["key"]: c["folder"] for c in view["clusters"]}
    positions = {n["id"]: (n["x"], n["y"]) for n in props}
    metrics = region_metrics(positions, {n["id"]: folder_of[n["cluster"]] for n in props}, pad=20.0)
    assert metrics.sessions == 3 and metrics.own_share >= 0.9 and metrics.overlap <= 0.1, metrics


def test_a_read_that_derives_does_so_off_the_loop(library: Library, monkeypatch: Any) -> None:  # noqa: F811
    """Issue 17, bad input: after a drag the next read derives the view (~200 ms of CPU at 100k
    propositions); `GET /api/graph` does that in a worker thread, in both forms, and serves the
    same bytes as a derivation on the caller's thread."""
    view = imported(library, "data-structures-heap.en.md")
    on_loop: list[bool] = []

    def recording(real: Any) -> Any:
        def derive(*args: Any, **kwargs: Any) -> Any:
            try:
                asyncio.get_running_loop()
                on_loop.append(True)
            except RuntimeError:
                on_loop.append(False)
            return real(*args, **kwargs)

        return derive

    monkeypatch.setattr(graph_service, "view_bytes", recording(graph_service.view_bytes))
    monkeypatch.setattr(graph_service, "compact_bytes", recording(graph_service.compact_bytes))
    first = view["nodes"][0]["id"]
    dragged = library.client.put("/api/graph/positions", json={first: {"x": 7.0, "y": 8.0}})
    assert dragged.json() == {"saved": 1}
    served = library.client.get("/api/graph")
    compact = library.client.get("/api/graph", params={"format": "compact"})
    assert served.status_code == compact.status_code == 200
    assert on_loop == [False, False]  # one derivation per form, each in a worker thread
    moved = next(n for n in served.json()["nodes"] if n["id"] == first)
    assert (moved["x"], moved["y"]) == (7.0, 8.0)
    fresh = GraphService(FileGraphStore(library.data / "graph"), FakeChatStore(), None)  # type: ignore[arg-type]
    assert fresh.view_json() == served.content
    assert library.client.get("/api/graph").content == served.content  # then served from memory
    assert on_loop == [False, False, False]  # (the fresh service's own derivation, on this thread)
