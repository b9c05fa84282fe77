"""The notes front door and the extraction pipeline over HTTP with a scripted model (issue 4)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.models.function import FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.core.library.simplify import chain_key
from server.services.bootstrap import Services, build_services
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT
from tests.livehttp import serve
from tests.scripts.library import graph_model
from tests.shared import NOTES

GOOD = sorted(p for p in NOTES.glob("*.md"))
EDGE = sorted((NOTES / "edge").glob("*.md"))


class Library:
    def __init__(
        self, url: str, services: Services, data: Path, client: httpx.Client, loop_holder: dict
    ) -> None:
        self.url, self.services, self.data, self.client = url, services, data, client
        self.loop_holder = loop_holder

    def upload(self, *paths: Path, names: list[str] | None = None) -> httpx.Response:
        files = [
            ("files", (names[i] if names else p.name, p.read_bytes(), "text/markdown"))
            for i, p in enumerate(paths)
        ]
        return self.client.post("/api/graph/import", files=files)

    def settle(self, timeout: float = 60) -> list[dict[str, Any]]:
        for _ in range(int(timeout * 20)):
            rows = self.client.get("/api/activity").json()["rows"]
            if all(r["phase"] in ("done", "error", "aborted") for r in rows):
                return [r for r in rows if r["kind"] != "import"]  # job rows (not import summaries)
            threading.Event().wait(0.05)
        raise AssertionError("extraction did not settle")

    def hold_model(self) -> threading.Event:
        """Make background jobs wait for their model until the returned event is set."""
        gate = threading.Event()
        original = self.services.extraction.model_for

        async def held():  # type: ignore[no-untyped-def]
            while not gate.is_set():
                await asyncio.sleep(0.01)
            return await original()

        self.services.extraction.model_for = held
        return gate

    def ledger(self, name: str) -> list[dict[str, Any]]:
        path = self.data / "graph" / f"{name}.jsonl"
        return (
            [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            if path.exists()
            else []
        )


@pytest.fixture
def library(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    calls: list[str] = []

    def factory(resolved, key, url):  # type: ignore[no-untyped-def]
        def counted(messages, info):  # type: ignore[no-untyped-def]
            calls.append("call")
            return graph_model(messages, info)

        return FunctionModel(function=counted)

    services = build_services(
        DataPaths(data_dir), offline=False, secrets=FakeSecrets(), model_factory=factory
    )
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        lib = Library(url, services, data_dir, client, {})
        lib.calls = calls  # type: ignore[attr-defined]
        yield lib


def test_importing_every_fixture_note(library: Library) -> None:
    response = library.upload(*GOOD)
    assert response.status_code == 202
    statuses = {f["name"]: f for f in response.json()["files"]}
    assert all(f["status"] == "queued" for f in statuses.values())
    assert statuses["system-design-primer.large.en.md"]["chunks"] >= 3
    rows = library.settle()
    assert all(r["phase"] == "done" for r in rows), [r for r in rows if r["phase"] != "done"]
    big = [r for r in rows if r["label"].startswith("system-design-primer.large.en.md")]
    assert len(big) == statuses["system-design-primer.large.en.md"]["chunks"]
    assert all(r["usage"]["requests"] >= 2 for r in rows)  # a refused first submit, then the fix

    nodes, chains, runs = library.ledger("nodes"), library.ledger("chains"), library.ledger("sessions")
    coverage, sources = library.ledger("coverage"), library.ledger("sources")
    assert len(runs) == len(rows) and len(coverage) == len(rows)
    assert {s["id"] for s in sources if s.get("fingerprint")} == {f["sourceId"] for f in statuses.values()}
    keys = Counter((tuple(sorted(c["premises"])), c["conclusion"]) for c in chains)
    ids_by_key: dict[tuple, set[str]] = {}
    for c in chains:
        ids_by_key.setdefault(chain_key(c["premises"], c["conclusion"]), set()).add(c["id"])
    assert all(len(ids) == 1 for ids in ids_by_key.values())  # no duplicate chains
    node_ids = {n["id"] for n in nodes}
    assert all(set(c["premises"]) | {c["conclusion"]} <= node_ids for c in chains)
    # the redundant p1 ∧ p2 ⟹ p3 was simplified away wherever p2 ⟹ p3 stands
    by_conclusion: dict[str, list[set[str]]] = {}
    for premises, conclusion in keys:
        by_conclusion.setdefault(conclusion, []).append(set(premises))
    for groups in by_conclusion.values():
        assert not any(a < b for a in groups for b in groups)
    assert any(r["stats"]["droppedChains"] for r in rows)
    # later stretches of a source leaned on its graph so far: a chain whose premise an earlier job minted
    born = {}
    for n in nodes:
        born.setdefault(n["id"], n["provenance"]["job"])
    big_source = statuses["system-design-primer.large.en.md"]["sourceId"]
    assert any(
        born[p] != c["provenance"]["job"]
        for c in chains
        if c["provenance"]["source"] == big_source
        for p in c["premises"]
    )
    sources_view = library.client.get("/api/graph/sources").json()["sources"]
    assert {s["title"] for s in sources_view} >= {p.name for p in GOOD}


def test_a_reimport_is_a_true_no_op_and_a_change_reruns(library: Library, tmp_path: Path) -> None:
    note = tmp_path / "heap.md"
    note.write_bytes((NOTES / "data-structures-heap.en.md").read_bytes())
    library.upload(note, names=["notes/heap.md"])
    library.settle()
    calls, lines = len(library.calls), len(library.ledger("nodes"))  # type: ignore[attr-defined]
    again = library.upload(note, names=["notes/heap.md"])
    assert again.status_code == 202 and again.json()["files"][0]["status"] == "unchanged"
    assert len(library.calls) == calls and len(library.ledger("nodes")) == lines  # type: ignore[attr-defined]
    assert len(library.ledger("usage")) == 1  # no usage for a no-op
    note.write_text("# Heaps, revised\n\nA heap is a tree.\n\nThe root is the minimum.\n")
    changed = library.upload(note, names=["notes/heap.md"])
    assert changed.json()["files"][0]["status"] == "queued"
    assert changed.json()["files"][0]["sourceId"] == again.json()["files"][0]["sourceId"]
    library.settle()
    assert len(library.calls) > calls  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", EDGE, ids=lambda p: p.name)
def test_every_edge_file_gets_a_clear_refusal_or_a_clean_import(library: Library, path: Path) -> None:
    before = {name: library.ledger(name) for name in ("nodes", "sources")}
    response = library.upload(path)
    if response.status_code == 400:
        body = response.json()
        assert body["error"] == "refused" and path.name in body["detail"]
        assert body["files"][0]["status"] == "refused"
        assert {name: library.ledger(name) for name in ("nodes", "sources")} == before  # nothing written
    else:
        assert response.status_code == 202 and response.json()["files"][0]["status"] == "queued"
        rows = library.settle()
        assert all(r["phase"] == "done" for r in rows)


def test_refusals_name_the_problem(library: Library) -> None:
    cases = {
        "empty.md": "empty",
        "whitespace-only.md": "empty",
        "binary-disguised.md": "binary",
        "latin1-invalid-utf8.md": "line 1, column 6",
        "one-huge-line.md": "2 MB",
    }
    for name, words in cases.items():
        detail = library.upload(NOTES / "edge" / name).json()["detail"]
        assert words in detail, (name, detail)
    assert library.client.post("/api/graph/import", json={"path": "relative/folder"}).status_code == 400
    assert (
        library.client.post(
            "/api/graph/import", content=b"x", headers={"content-type": "text/plain"}
        ).status_code
        == 400
    )


def test_a_folder_import_for_the_desktop_case(library: Library, tmp_path: Path) -> None:
    folder = tmp_path / "vault"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Alpha\n\nAlpha is first.\n\nBeta follows alpha.\n")
    (folder / "sub" / "b.txt").write_text("Gamma\nDelta\nEpsilon\n")
    (folder / "skip.png").write_bytes(b"\x89PNG")
    response = library.client.post("/api/graph/import", json={"path": str(folder)})
    assert response.status_code == 202
    assert sorted(Path(f["name"]).name for f in response.json()["files"]) == ["a.md", "b.txt"]
    library.settle()
    assert len(library.ledger("sessions")) == 2


def test_abort_is_source_wide_and_checkpoints_nothing_for_the_aborted_job(library: Library) -> None:
    gate = library.hold_model()
    response = library.upload(NOTES / "system-design-primer.large.en.md")
    source = response.json()["files"][0]["sourceId"]
    assert library.client.post("/api/activity/abort", json={"source": source}).json() == {"aborted": True}
    gate.set()
    rows = library.settle()
    assert rows and all(r["phase"] == "aborted" for r in rows)
    assert library.ledger("coverage") == [] and library.ledger("nodes") == []
    assert library.client.post("/api/activity/abort", json={"source": source}).json() == {"aborted": False}


def test_an_imports_summary_keeps_why_files_were_refused(library: Library) -> None:
    """Issue 20 item 4: after a reload (a new GET of the feed) the batch still says why its refused
    files were refused, not only the upload's answer did."""
    edge = NOTES / "edge"
    response = library.upload(
        NOTES / "rank-factorization.de.md", edge / "binary-disguised.md", edge / "empty.md"
    )
    refused = {f["name"]: f["detail"] for f in response.json()["files"] if f["status"] == "refused"}
    assert set(refused) == {"binary-disguised.md", "empty.md"}, response.json()
    library.settle()
    [summary] = [r for r in library.client.get("/api/activity").json()["rows"] if r["kind"] == "import"]
    assert summary["refusals"] == refused
    assert summary["counts"]["refused"] == 2 and "2 were refused" in summary["error"]
