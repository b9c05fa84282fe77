"""The compact graph view and its since-protocol over HTTP (issue 17 item 5): the compact form
stands for the full view, a reader holding a version fetches only what changed after a merge, a
drag or a deletion, and a `since` the server cannot diff from gets the whole compact view."""

from __future__ import annotations

from typing import Any

import orjson

from server.services.library.graph import GraphService
from server.store.library.graph import FileGraphStore
from tests.fakes import FakeChatStore
from tests.flows.library.test_library import NOTES, Library, library  # noqa: F401 - the fixture
from tests.unit.library.test_graph_view import _same, apply_delta, expand


def compact(lib: Library, since: str | None = None) -> dict[str, Any]:
    params = {"format": "compact", **({"since": since} if since else {})}
    answer = lib.client.get("/api/graph", params=params)
    assert answer.status_code == 200, answer.text
    view: dict[str, Any] = orjson.loads(answer.content)
    return view


def full(lib: Library) -> dict[str, Any]:
    view: dict[str, Any] = lib.client.get("/api/graph").json()
    return view


def test_a_reader_follows_merges_drags_and_deletions_by_deltas(library: Library) -> None:  # noqa: F811
    library.upload(NOTES / "data-structures-heap.en.md")
    library.settle()
    first = compact(library)
    assert first["full"] is True and first["props"] and first["chains"]
    _same(expand(first), full(library))
    assert len(library.client.get("/api/graph", params={"format": "compact"}).content) < len(
        library.client.get("/api/graph").content
    )
    same = compact(library, first["version"])  # nothing changed: an empty delta
    assert same["full"] is False and same["props"] == same["chains"] == same["removed"] == []

    library.upload(NOTES / "algorithms-math-bits.en.md")  # a merge
    library.settle()
    delta = compact(library, first["version"])
    assert delta["full"] is False and delta["since"] == first["version"]
    whole = compact(library)
    assert delta["version"] == whole["version"] != first["version"]
    assert len(delta["props"]) < len(whole["props"])  # the heap's rows did not travel again
    view = apply_delta(first, delta)
    _same(expand(view), expand(whole))
    _same(expand(view), full(library))

    moved = view["props"][0][0]  # a drag: one row changes
    library.client.put("/api/graph/positions", json={moved: {"x": 7.5, "y": -2.0}})
    dragged = compact(library, view["version"])
    assert [r[0] for r in dragged["props"]] == [moved] and dragged["chains"] == []
    assert dragged["props"][0][-2:] == [7.5, -2.0]
    view = apply_delta(view, dragged)

    gone = view["chains"][0][0]  # a deletion: the chain's id is removed
    assert library.client.post("/api/graph/delete", json={"ids": [gone]}).status_code == 200
    deleted = compact(library, view["version"])
    assert deleted["removed"] == [gone] and deleted["props"] == []
    _same(expand(apply_delta(view, deleted)), full(library))


def test_a_since_the_server_cannot_diff_from_gets_the_whole_view(library: Library) -> None:  # noqa: F811
    library.upload(NOTES / "data-structures-heap.en.md")
    library.settle()
    now = compact(library)
    for unknown in ("00000000-1", now["version"].split("-")[0] + "-999999"):
        again = compact(library, unknown)  # another process's, or not (yet) one of this one's
        assert again["full"] is True and again["version"] == now["version"]
        _same(expand(again), expand(now))
    for bad, where in (
        ({"format": "compact", "since": "x; drop"}, "since"),
        ({"format": "compact", "since": "ab-" + "1" * 40}, "since"),
        ({"format": "bogus"}, "format"),
        ({"since": now["version"]}, "format=compact"),
        ({"format": "compact", "extra": "1"}, "extra"),
    ):
        answer = library.client.get("/api/graph", params=bad)
        assert answer.status_code == 400 and where in answer.json()["detail"], (bad, answer.text)
    schema = library.client.get("/openapi.json").json()["paths"]["/api/graph"]["get"]
    assert {p["name"] for p in schema["parameters"]} == {"format", "since"}


def _no_fold() -> dict[str, Any]:
    raise AssertionError("a cold read folded the ledgers")


def test_a_cold_start_serves_the_compact_snapshot(library: Library) -> None:  # noqa: F811
    library.upload(NOTES / "data-structures-heap.en.md")
    library.settle()
    served = library.client.get("/api/graph", params={"format": "compact"}).content
    root = library.data / "graph"
    assert (root / "view-compact.snapshot").is_file()  # the settle after the merge wrote it
    store = FileGraphStore(root)  # a restart: nothing folded yet
    store.nodes = _no_fold  # type: ignore[method-assign]
    store.chains = _no_fold  # type: ignore[method-assign]
    service = GraphService(store, FakeChatStore(), None)  # type: ignore[arg-type]
    assert service.compact_json() == served
    version = orjson.loads(served)["version"]
    assert service.compact_json(version) == served  # no rows to cut a delta from: the whole view
    for junk in (b"", b"garbage", b"[1]\n", served[:100]):  # a torn snapshot is never served
        (root / "view-compact.snapshot").write_bytes(junk)
        fresh = GraphService(FileGraphStore(root), FakeChatStore(), None)  # type: ignore[arg-type]
        _same(expand(orjson.loads(fresh.compact_json())), full(library))
