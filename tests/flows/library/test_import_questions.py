"""Issue 28, items 4, 5 and 9 (`replaces`): what an import asks before it changes what the graph
already holds, over HTTP with the scripted model on real ledgers.

- Item 5: a single picked file whose name matches a note with other content is not imported until
  the learner says whether it replaces that note or is a new one; the answer is carried out.
- Item 4: after a folder is picked again in the browser, the notes gone from it are listed (nothing
  changes), and one confirmation takes out what they said.
- Item 9: a folder re-import of a changed note fills `replaces` as the single-file import does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.flows.library.test_library import Library, library  # noqa: F401 - the fixture

FIRST = b"# Heaps of the first course\nA heap keeps its minimum at the root.\n"
SECOND = b"# Graphs of the second course\nA graph has vertices and edges.\n"
THIRD = b"# Tries of the third course\nA trie stores strings by their prefixes.\n"


def pick(lib: Library, files: list[tuple[str, bytes]], **fields: str) -> httpx.Response:
    return lib.client.post(
        "/api/graph/import", files=[("files", (n, b, "text/markdown")) for n, b in files], data=fields
    )


def answered(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 202, response.text
    files: list[dict[str, Any]] = response.json()["files"]
    return files


def until(lib: Library, check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Wait for `check` (the graph catches up with a run), else fail showing the feed."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: {lib.client.get('/api/activity').json()['rows']}")
        time.sleep(0.05)


def stamped(lib: Library) -> dict[str, str]:
    """Source id -> fingerprint, for the sources whose every part merged."""
    return {k: v.fingerprint for k, v in lib.services.library.graph.sources().items() if v.fingerprint}


def names(lib: Library, source: str) -> set[str]:
    return {p["name"] for p in lib.services.library.propositions(source)}


def all_names(lib: Library) -> set[str]:
    return {n.name for n in lib.services.library.graph.nodes().values()}


def decide(name: str, choice: str, source: str | None = None) -> str:
    answer: dict[str, Any] = {"name": name, "choice": choice}
    if source is not None:
        answer["sourceId"] = source
    return json.dumps([answer])


def test_a_same_named_single_file_is_asked_about_and_the_answer_is_carried_out(library: Library) -> None:  # noqa: F811
    [first] = answered(pick(library, [("notes.md", FIRST)]))
    assert first["status"] == "queued" and first["replaces"] == "" and first["sameName"] == []
    library.settle()
    until(library, lambda: "Heaps of the first course" in names(library, first["sourceId"]), "first")
    [again] = answered(pick(library, [("notes.md", FIRST)]))
    assert again["status"] == "unchanged" and again["sourceId"] == first["sourceId"]

    # another course's notes.md: asked about, nothing done
    ledgers = {k: len(library.ledger(k)) for k in ("sources", "nodes", "sessions")}
    calls = len(library.calls)  # type: ignore[attr-defined]
    [asked] = answered(pick(library, [("notes.md", SECOND)]))
    assert asked["status"] == "ask" and asked["sourceId"] is None
    assert "already in your graph with other content" in asked["detail"], asked
    assert [s["sourceId"] for s in asked["sameName"]] == [first["sourceId"]]
    assert asked["sameName"][0]["title"] == "notes.md"
    library.settle()
    assert {k: len(library.ledger(k)) for k in ledgers} == ledgers
    assert len(library.calls) == calls  # type: ignore[attr-defined]

    # "keep both": a new note of its own, the first one untouched
    [new] = answered(pick(library, [("notes.md", SECOND)], decisions=decide("notes.md", "new")))
    assert new["status"] == "queued" and new["replaces"] == ""
    assert new["sourceId"] not in (None, first["sourceId"])
    library.settle()
    until(library, lambda: "Graphs of the second course" in names(library, new["sourceId"]), "the new note")
    assert "Heaps of the first course" in names(library, first["sourceId"])
    titles = {s["id"]: s["title"] for s in library.client.get("/api/graph/sources").json()["sources"]}
    assert titles[first["sourceId"]] == "notes.md" and titles[new["sourceId"]] == "notes.md (2)"
    # each of the two is known by its content: picking either again is a no-op
    for text, source in ((SECOND, new["sourceId"]), (FIRST, first["sourceId"])):
        [same] = answered(pick(library, [("notes.md", text)]))
        assert (same["status"], same["sourceId"]) == ("unchanged", source)

    # a third notes.md: asked about with both; "replace" the first one
    [asked] = answered(pick(library, [("notes.md", THIRD)]))
    assert asked["status"] == "ask" and "2 notes of this name" in asked["detail"]
    assert {s["sourceId"] for s in asked["sameName"]} == {first["sourceId"], new["sourceId"]}
    [replaced] = answered(
        pick(library, [("notes.md", THIRD)], decisions=decide("notes.md", "replace", first["sourceId"]))
    )
    assert replaced["status"] == "queued" and replaced["sourceId"] == first["sourceId"]
    assert replaced["replaces"] == "replaces what the earlier notes.md said"
    library.settle()
    until(
        library, lambda: "Tries of the third course" in names(library, first["sourceId"]), "the replacement"
    )
    assert "Heaps of the first course" not in all_names(library)  # replaced, not kept twice
    assert "Graphs of the second course" in names(library, new["sourceId"])  # the other one kept


def test_bad_answers_are_refused_in_plain_words_and_lose_nothing(library: Library) -> None:  # noqa: F811
    [first] = answered(pick(library, [("notes.md", FIRST)]))
    library.settle()
    sources = len(library.ledger("sources"))
    for decisions, words in (
        ("not json", "not a list of answers"),
        (json.dumps([{"name": "notes.md", "choice": "replace"}]), "names the note it replaces"),
        (json.dumps([{"name": "notes.md", "choice": "new", "sourceId": first["sourceId"]}]), "names none"),
        (json.dumps([{"name": "notes.md", "choice": "merge"}]), "not a list of answers"),
        (decide("other.md", "new"), "which this request does not send"),
        (json.dumps([{"name": "notes.md", "choice": "new"}] * 2), "twice"),
    ):
        response = pick(library, [("notes.md", SECOND)], decisions=decisions)
        assert response.status_code == 400, (decisions, response.text)
        assert response.json()["error"] == "bad_request" and words in response.json()["detail"], response.text
    assert len(library.ledger("sources")) == sources
    # an answer naming a note that is not one of that name: asked again, nothing done
    [asked] = answered(
        pick(library, [("notes.md", SECOND)], decisions=decide("notes.md", "replace", "src_" + "0" * 16))
    )
    assert asked["status"] == "ask" and [s["sourceId"] for s in asked["sameName"]] == [first["sourceId"]]
    assert len(library.ledger("sources")) == sources


def test_a_folder_reimport_of_a_changed_note_says_what_it_replaces(
    library: Library,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LH_IMPORT_ROOTS", str(tmp_path))
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "heap.md").write_bytes(FIRST)
    (vault / "graph.md").write_bytes(SECOND)

    def folder() -> dict[str, dict[str, Any]]:
        files = answered(library.client.post("/api/graph/import", json={"path": str(vault)}))
        library.settle()
        until(library, lambda: all(stamped(library).get(f["sourceId"]) for f in files), "stamped")
        return {Path(f["name"]).name: f for f in files}

    assert {f["replaces"] for f in folder().values()} == {""}
    (vault / "heap.md").write_bytes(THIRD)
    again = folder()
    assert again["heap.md"]["status"] == "queued"
    assert again["heap.md"]["replaces"] == "replaces what the earlier version of heap.md said"
    assert (again["graph.md"]["status"], again["graph.md"]["replaces"]) == ("unchanged", "")
    # the browser's folder pick (relative paths) says it too
    [web] = answered(pick(library, [("vault/heap.md", FIRST)]))
    library.settle()
    until(library, lambda: web["sourceId"] in stamped(library), "the web pick stamped")
    [edited] = answered(pick(library, [("vault/heap.md", SECOND)]))
    assert (web["replaces"], edited["replaces"]) == ("", "replaces what the earlier version of heap.md said")


def test_notes_gone_from_a_repicked_folder_are_listed_and_removed_on_one_confirmation(
    library: Library,  # noqa: F811
) -> None:
    response = pick(
        library,
        [
            ("vault/a.md", FIRST),
            ("vault/b.md", SECOND),
            ("vault/sub/c.md", THIRD),
            ("other/d.md", b"# Deques of another folder\nA deque opens at both ends.\n"),
            ("vaulted/e.md", b"# Entries of a folder named alike\nNot inside vault.\n"),
        ],
    )
    picked, import_id = answered(response), response.json()["importId"]
    library.settle()
    until(library, lambda: len(all_names(library)) >= 10, "the five notes merged")
    src = {f["name"]: f["sourceId"] for f in picked}
    nodes = len(library.ledger("nodes"))

    # the folder picked again without b.md and sub/c.md: they are listed, nothing changes
    query = {"folders": ["vault"], "present": ["vault/a.md", "vault/new.md"]}
    response = library.client.post("/api/graph/import/gone", json=query)
    assert response.status_code == 200, response.text
    gone = response.json()["gone"]
    assert [(g["path"], g["sourceId"]) for g in gone] == [
        ("vault/b.md", src["vault/b.md"]),
        ("vault/sub/c.md", src["vault/sub/c.md"]),
    ]
    assert all(g["propositions"] >= 2 for g in gone), gone
    library.settle()
    assert len(library.ledger("nodes")) == nodes and "Graphs of the second course" in all_names(library)
    assert library.client.post("/api/graph/import/gone", json=query).json()["gone"] == gone  # asked again

    # one confirmation takes out what they said, counted in the pick's summary row
    removed = library.client.post(
        "/api/graph/import/remove",
        json={"sources": [g["sourceId"] for g in gone], "importId": import_id},
    )
    assert removed.status_code == 200, removed.text
    files = removed.json()["files"]
    assert [(f["name"], f["status"]) for f in files] == [
        ("vault/b.md", "removed"),
        ("vault/sub/c.md", "removed"),
    ]
    assert "taken out of your graph" in files[0]["detail"] and removed.json()["importId"] == import_id
    library.settle()
    summary = next(r for r in library.client.get("/api/activity").json()["rows"] if r["id"] == import_id)
    assert summary["counts"]["removed"] == 2, summary
    until(library, lambda: "Graphs of the second course" not in all_names(library), "the removal")
    left = all_names(library)
    assert "Graphs of the second course" not in left and "Tries of the third course" not in left
    assert {
        "Heaps of the first course",
        "Deques of another folder",
        "Entries of a folder named alike",
    } <= left
    assert library.client.post("/api/graph/import/gone", json=query).json()["gone"] == []
    # a removed file coming back is read again
    [back] = answered(pick(library, [("vault/b.md", SECOND)]))
    assert back["status"] == "queued" and back["sourceId"] == src["vault/b.md"]
    library.settle()
    until(library, lambda: "Graphs of the second course" in all_names(library), "b.md read again")


def test_removal_refuses_what_is_not_a_gone_note_and_bad_bodies(library: Library) -> None:  # noqa: F811
    [kept] = answered(pick(library, [("vault/a.md", FIRST)]))
    library.settle()
    unknown = "src_" + "f" * 16
    response = library.client.post("/api/graph/import/remove", json={"sources": [unknown]})
    assert response.status_code == 200
    [refused] = response.json()["files"]
    assert refused["status"] == "refused" and "not a notes file in your graph" in refused["detail"]
    bodies: list[dict[str, Any]] = [
        {"sources": []},
        {"sources": ["vault/a.md"]},
        {"sources": [kept["sourceId"]], "extra": 1},
    ]
    for body in bodies:
        bad = library.client.post("/api/graph/import/remove", json=body)
        assert bad.status_code == 400, (body, bad.text)
    queries: list[dict[str, Any]] = [
        {"folders": []},
        {"folders": ["/home/me/vault"]},
        {"folders": ["a/b"]},
        {"folders": ["vault"], "present": "x"},
    ]
    for body in queries:
        bad = library.client.post("/api/graph/import/gone", json=body)
        assert bad.status_code == 400, (body, bad.text)
    library.settle()
    assert "Heaps of the first course" in all_names(library)
