"""Deleting from the graph is all or nothing (decision 0036): one `POST /api/graph/delete` with
nodes of two notes, one of them being read again, is refused 409 and deletes none of them; the
same request after the reading deletes all of them at once."""

from __future__ import annotations

from pathlib import Path

from tests.flows.library.test_library import NOTES, Library, library  # noqa: F401 - the fixture


def test_a_refused_deletion_deletes_nothing_and_the_same_request_later_deletes_all(
    library: Library,  # noqa: F811
) -> None:
    library.upload(
        NOTES / "data-structures-heap.en.md",
        NOTES / "algorithms-math-bits.en.md",
        names=["notes/heap.md", "notes/bits.md"],
    )
    library.settle()
    view = library.client.get("/api/graph").json()
    clusters = {
        c["label"]: c["nodeIds"] for c in library.client.get("/api/graph/clusters").json()["clusters"]
    }
    heap = next(label for label in clusters if label.endswith("heap.md"))
    bits = next(label for label in clusters if label.endswith("bits.md"))
    ids = [clusters[heap][0], clusters[bits][0]]

    gate = library.hold_model()
    note = Path(library.data.parent / "heap.md")
    note.write_text((NOTES / "data-structures-heap.en.md").read_text() + "\nA new line.\n")
    library.upload(note, names=["notes/heap.md"])  # the heap note is being read again
    refused = library.client.post("/api/graph/delete", json={"ids": ids})
    assert refused.status_code == 409 and refused.json()["error"] == "extraction_running"
    assert "heap.md" in refused.json()["detail"] and "nothing was deleted" in refused.json()["detail"]
    during = library.client.get("/api/graph").json()
    assert {n["id"] for n in during["nodes"]} == {n["id"] for n in view["nodes"]}  # bits' node too
    assert (
        not (library.data / "graph" / "deleted.jsonl").exists()
        or not (library.data / "graph" / "deleted.jsonl").read_text().strip()
    )

    gate.set()
    library.settle()
    done = library.client.post("/api/graph/delete", json={"ids": ids})
    assert done.status_code == 200, done.text
    assert set(ids) <= set(done.json()["deletedNodes"])
    after = {n["id"] for n in library.client.get("/api/graph").json()["nodes"]}
    assert not set(ids) & after
    lines = (library.data / "graph" / "deleted.jsonl").read_text().strip().splitlines()
    assert len(lines) == 1  # one deletion, one line
