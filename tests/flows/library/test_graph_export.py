"""The graph's exports over real HTTP (issue 31 item 2), after a real import of fixture notes from
folders (scripted model): the Obsidian vault's zip (a folder per source folder, an index note
each, every wiki link resolving, each proposition once with its id), the Anki deck read back with
SQLite (a note per proposition and chain, the same guids in a second export), the chain table's
selection (POST), and refusals that send nothing."""

from __future__ import annotations

import io
import re
import sqlite3
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml

from server.core.library.graph_export_anki import DECK_ID, guid
from tests.flows.library.test_library import Library, library  # noqa: F401 - the fixture
from tests.shared import NOTES

FILES = {
    "vault/algorithms/dijkstra.md": "algorithms-graph-dijkstra.en.md",
    "vault/algorithms/bits.md": "algorithms-math-bits.en.md",
    "vault/math/rank.md": "rank-factorization.de.md",
    "vault/heap.md": "data-structures-heap.en.md",
}
LINK = re.compile(r"\[\[([^\]|]+)(?:\|[^\]]*)?\]\]")


def imported(lib: Library) -> dict[str, Any]:
    lib.upload(*(NOTES / f for f in FILES.values()), names=list(FILES))
    lib.settle()
    view: dict[str, Any] = lib.client.get("/api/graph").json()
    return view


def unzip(body: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert archive.testzip() is None
        return {name: archive.read(name).decode() for name in archive.namelist()}


def note_ids(files: dict[str, str]) -> list[str]:
    return [
        yaml.safe_load(text.split("---\n")[1])["id"] for text in files.values() if text.startswith("---\n")
    ]


def deck(body: bytes, tmp: Path) -> sqlite3.Connection:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        archive.extract("collection.anki2", tmp)
    return sqlite3.connect(tmp / "collection.anki2")


def test_the_graph_downloads_as_an_obsidian_vault(library: Library) -> None:  # noqa: F811
    view = imported(library)
    props = {n["id"] for n in view["nodes"] if n["kind"] == "proposition"}
    chains = [n for n in view["nodes"] if n["kind"] == "implication"]
    assert len(props) >= 8 and chains
    with library.client.stream("GET", "/api/graph/export/vault.zip") as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"] == "application/zip"
        name = unquote(response.headers["content-disposition"].split("filename*=UTF-8''", 1)[1])
        assert name == "Learning Harness graph.zip"
        body = response.read()
    files = unzip(body)
    assert sorted(note_ids(files)) == sorted(props)  # each proposition once
    folders = {str(Path(p).parent) for p in files}
    root = "Learning Harness graph"
    assert {f"{root}/vault", f"{root}/vault/algorithms", f"{root}/vault/math"} <= folders
    for folder in folders - {root}:
        assert f"{folder}/{Path(folder).name} (index).md" in files
    stems = {Path(p).stem for p in files}
    links = [target for text in files.values() for target in LINK.findall(text)]
    assert links and set(links) <= stems  # every link resolves
    assert sum(text.count("- from [[") for text in files.values()) == len(chains)


def test_the_graph_downloads_as_an_anki_deck_with_stable_ids(library: Library, tmp_path: Path) -> None:  # noqa: F811
    view = imported(library)
    props = [n["id"] for n in view["nodes"] if n["kind"] == "proposition"]
    chains = [n["id"] for n in view["nodes"] if n["kind"] == "implication"]
    first = library.client.get("/api/graph/export/deck.apkg")
    assert first.status_code == 200, first.text
    assert first.headers["content-type"] == "application/apkg"
    db = deck(first.content, tmp_path / "1")
    guids = {g for (g,) in db.execute("SELECT guid FROM notes")}
    assert len(guids) == len(props) + len(chains) == db.execute("SELECT count(*) FROM cards").fetchone()[0]
    assert guids == {guid(i) for i in props + chains}
    assert {d for (d,) in db.execute("SELECT did FROM cards")} == {DECK_ID}
    tags = " ".join(t for (t,) in db.execute("SELECT tags FROM notes"))
    assert "source::dijkstra.md" in tags and "source::heap.md" in tags
    second = library.client.get("/api/graph/export/deck.apkg")
    again = {g for (g,) in deck(second.content, tmp_path / "2").execute("SELECT guid FROM notes")}
    assert again == guids
    assert not list(Path(tmp_path).glob("lh-anki-*"))


def test_the_selection_exports_the_same_way(library: Library, tmp_path: Path) -> None:  # noqa: F811
    view = imported(library)
    chain = next(n for n in view["nodes"] if n["kind"] == "implication")
    members = {link["source"] for link in view["links"] if link["target"] == chain["id"]} | {
        link["target"] for link in view["links"] if link["source"] == chain["id"]
    }
    vault = library.client.post("/api/graph/export/vault.zip", json={"ids": sorted(members)})
    assert vault.status_code == 200, vault.text
    files = unzip(vault.content)
    assert sorted(note_ids(files)) == sorted(members)
    assert sum(text.count("- from [[") for text in files.values()) >= 1
    anki = library.client.post("/api/graph/export/deck.apkg", json={"ids": [chain["id"]]})
    assert anki.status_code == 200, anki.text
    got = {g for (g,) in deck(anki.content, tmp_path).execute("SELECT guid FROM notes")}
    assert {guid(m) for m in members} | {guid(chain["id"])} <= got


def test_bad_selections_are_refused_in_plain_words(library: Library) -> None:  # noqa: F811
    view = imported(library)
    one = next(n["id"] for n in view["nodes"] if n["kind"] == "proposition")
    response = library.client.post("/api/graph/export/vault.zip", json={"ids": [one, "n_gone"]})
    assert response.status_code == 404 and "'n_gone' is not in the graph" in response.json()["detail"]
    bodies: list[dict[str, Any]] = [{"ids": []}, {"ids": [""]}, {}, {"ids": [one], "format": "x"}]
    for body in bodies:
        response = library.client.post("/api/graph/export/deck.apkg", json=body)
        assert response.status_code == 400, (body, response.text)


def test_an_empty_graph_exports_an_empty_vault_and_deck(library: Library, tmp_path: Path) -> None:  # noqa: F811
    files = unzip(library.client.get("/api/graph/export/vault.zip").content)
    assert list(files) == ["Learning Harness graph/Index.md"]
    assert "0 propositions, 0 chains." in files["Learning Harness graph/Index.md"]
    db = deck(library.client.get("/api/graph/export/deck.apkg").content, tmp_path)
    assert db.execute("SELECT count(*) FROM notes").fetchone() == (0,)
