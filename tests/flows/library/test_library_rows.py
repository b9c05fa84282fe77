"""Issue 11, item 5: a job waiting for a model-call permit shows `queued` (not `extracting`) and
has no `startedAt` until it starts; same-named notes files from different folders are different
sources."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.core.clock import utc_now
from server.services.bootstrap import build_services
from server.services.library.extraction import BACKGROUND_PERMITS
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT, Script
from tests.livehttp import serve
from tests.scripts.library import graph_model


@pytest.fixture
def gated(data_dir: Path) -> Iterator[tuple[httpx.Client, threading.Event]]:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    gate = threading.Event()

    async def held(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        while not gate.is_set():  # the model call holds its permit until the test opens the gate
            await asyncio.sleep(0.01)
        return graph_model(messages, info)

    services = build_services(
        DataPaths(data_dir),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda r, k, u: FunctionModel(function=held, stream_function=Script().stream),
    )
    services.extraction.pack_budget = 0  # a call per note: permits are counted (test_packed_extraction)
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        try:
            yield client, gate
        finally:
            gate.set()


def upload(client: httpx.Client, files: list[tuple[str, bytes]]) -> list[dict[str, Any]]:
    answer = client.post("/api/graph/import", files=[("files", (n, b, "text/markdown")) for n, b in files])
    assert answer.status_code == 202, answer.text
    files_: list[dict[str, Any]] = answer.json()["files"]
    return files_


def rows(client: httpx.Client) -> list[dict[str, Any]]:
    rows_: list[dict[str, Any]] = client.get("/api/activity").json()["rows"]
    return rows_


def test_a_job_waiting_for_a_permit_is_queued_and_not_yet_started(gated: Any) -> None:
    client, gate = gated
    notes = [
        (f"topic{i}/notes.md", f"# Topic {i}\nFact {i} one.\nFact {i} two.\n".encode()) for i in range(4)
    ]
    upload(client, notes)
    deadline = time.monotonic() + 10
    while sum(r["phase"] == "extracting" for r in rows(client)) < BACKGROUND_PERMITS:
        assert time.monotonic() < deadline, rows(client)
        time.sleep(0.02)
    time.sleep(0.1)
    now = rows(client)
    working = [r for r in now if r["phase"] == "extracting"]
    waiting = [r for r in now if r["phase"] == "queued"]
    assert len(working) == BACKGROUND_PERMITS and len(waiting) == 1, now
    assert all(r["queuedAt"] and r["startedAt"] and r["startedAt"] >= r["queuedAt"] for r in working)
    assert waiting[0]["queuedAt"] and waiting[0]["startedAt"] is None

    opened = utc_now()
    gate.set()
    deadline = time.monotonic() + 20
    while not all(r["phase"] == "done" for r in rows(client)):
        assert time.monotonic() < deadline, rows(client)
        time.sleep(0.05)
    done = {r["id"]: r for r in rows(client)}
    last = done[waiting[0]["id"]]
    # it started when a permit came free, once an earlier job's extraction returned (the gate
    # opened): not at its queue time. (The earlier job may still be auditing then: the auditor
    # waits for a permit of its own, and is asked even on an empty graph when a job's
    # propositions are candidates for one another, issue 16.)
    assert last["startedAt"] >= opened
    assert last["startedAt"] > last["queuedAt"]


def test_same_named_files_from_different_folders_are_different_sources(gated: Any) -> None:
    client, gate = gated
    gate.set()
    first = b"# Heaps\nA heap keeps its minimum at the root.\n"
    second = b"# Graphs\nA graph has vertices and edges.\n"
    # a picked folder sends its relative path; two folders, one file name
    by_path = upload(client, [("school/notes.md", first), ("work/notes.md", second)])
    assert len({f["sourceId"] for f in by_path}) == 2
    # a single file carries only its bare name: an edited notes.md re-imported is the same source
    bare = upload(client, [("notes.md", first)])
    assert not {f["sourceId"] for f in bare} & {f["sourceId"] for f in by_path}
    deadline = time.monotonic() + 20
    while not (rows(client) and all(r["phase"] == "done" for r in rows(client))):
        assert time.monotonic() < deadline, rows(client)
        time.sleep(0.05)
    # the same file imported again is still a no-op; other content of that name is asked about
    # (issue 28, item 5: replace that note, or keep both), and replaces it when told so
    again = upload(client, [("notes.md", first)])
    assert again[0]["status"] == "unchanged" and again[0]["sourceId"] == bare[0]["sourceId"]
    asked = upload(client, [("notes.md", second)])
    assert asked[0]["status"] == "ask" and asked[0]["sameName"][0]["sourceId"] == bare[0]["sourceId"]
    decision = [{"name": "notes.md", "choice": "replace", "sourceId": bare[0]["sourceId"]}]
    answer = client.post(
        "/api/graph/import",
        files=[("files", ("notes.md", second, "text/markdown"))],
        data={"decisions": json.dumps(decision)},
    )
    edited = answer.json()["files"]
    assert edited[0]["status"] == "queued" and edited[0]["sourceId"] == bare[0]["sourceId"]
