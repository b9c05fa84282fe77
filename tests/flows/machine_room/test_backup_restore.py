"""Issue 31 item 4: back up a data dir through the real HTTP server while it runs, restore the
archive into a fresh data dir (check, the learner's yes, a restart), and compare every API read:
each GET route of the app (the ids of its lessons, sets and jobs filled in) answers the same on
both servers. A bad archive sent to the check is refused with its reason and changes nothing."""

from __future__ import annotations

import io
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.models.function import FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.core.contracts.jobs import DemoArtifact, JobRecord, WorkerResult
from server.core.contracts.practice import PracticeChain, PracticeParams, PracticeProposition, ProblemSet
from server.services.bootstrap import build_services
from tests.bench.library.bench_graph_read import write_graph
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT, Script, sse_chunks, turn_body
from tests.livehttp import serve

SKIPPED_READS = {
    "/api/events": "an endless stream",
    "/api/health": "names the process and its data dir",
    "/api/backup": "a new archive each time (its time stamp)",
    "/api/backup/restore": "the restore state (checked separately)",
    "/api/first-run/local-servers": "asks this machine's ports, not the data dir",
    "/api/chats/{chat_id}/stream": "a running turn's stream (none runs)",
}
"""GET routes whose answer is not a read of the data dir."""
VOLATILE = re.compile(r'"(epoch|pid|elapsedS|now|generatedAt)":\s*("[^"]*"|[0-9.]+)')
"""Fields that name the process or the moment, not the data (normalized before comparing)."""


@contextmanager
def server(data: Path, script: Script | None = None) -> Iterator[httpx.Client]:
    script = script or Script()
    services = build_services(
        DataPaths(data),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda resolved, key, url: FunctionModel(stream_function=script.stream),
    )
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


def seed(data: Path) -> None:
    """A data dir with a 300-proposition graph, a practice set and a Workbench job on disk."""
    data.mkdir(parents=True)
    (data / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    write_graph(data / "graph", 300)
    (data / "practice").mkdir()
    problem_set = ProblemSet(
        id="ps_0000000a",
        title="Heaps",
        created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-01T00:00:00Z",
        params=PracticeParams(),
        node_ids=["n_0000000000000001"],
        propositions=[
            PracticeProposition(id="n_0000000000000001", name="Heap", statement="A heap is a tree.")
        ],
        chains=[PracticeChain(id="single_n_0000000000000001", conclusion="n_0000000000000001")],
    )
    (data / "practice" / "ps_0000000a.json").write_text(problem_set.model_dump_json(by_alias=True))


def lessons(client: httpx.Client) -> list[str]:
    """Two lessons taught through the API (a turn each, one renamed) and a job of the first."""
    ids = []
    for n, question in enumerate(("What is a derivative?", "What is a heap?")):
        chat_id = client.post("/api/chats", json={}).json()["id"]
        turn = client.post("/api/chat", json=turn_body(chat_id, question))
        assert turn.status_code == 200 and "[DONE]" in sse_chunks(turn.text), turn.text
        ids.append(chat_id)
        if n == 1:
            assert client.patch(f"/api/chats/{chat_id}", json={"title": "Heaps, renamed"}).status_code == 200
    return ids


def job(data: Path, chat_id: str) -> None:
    now = datetime.now(UTC).isoformat()
    record = JobRecord(
        id="job_demo1",
        chat_id=chat_id,
        tool_call_id="call_1",
        kind="demo",
        input={"request": "x"},
        status="done",
        created_at=now,
        finished_at=now,
        result=WorkerResult(text="done", artifact=DemoArtifact(title="Box", html="<p>box</p>")),
    )
    (data / "jobs").mkdir(exist_ok=True)
    (data / "jobs" / "job_demo1.json").write_text(record.model_dump_json(by_alias=True))


def reads(client: httpx.Client, ids: dict[str, list[str]]) -> dict[str, Any]:
    """Every GET route's answer, by URL: the path's `{..._id}` filled with each id of its kind."""
    paths = client.get("/openapi.json").json()["paths"]
    out: dict[str, Any] = {}
    for path, operations in sorted(paths.items()):
        if "get" not in operations or path in SKIPPED_READS:
            continue
        names = re.findall(r"\{(\w+)\}", path)
        assert len(names) <= 1, path
        urls = [path] if not names else [path.replace(f"{{{names[0]}}}", i) for i in ids[names[0]]]
        for url in urls:
            response = client.get(url)
            kind = response.headers.get("content-type", "")
            if response.content.startswith(b"PK\x03\x04"):
                body: Any = archive_read(response.content)
            else:
                body = response.json() if "json" in kind else response.text
            out[url] = (response.status_code, VOLATILE.sub(r'"\1": 0', json.dumps(body, sort_keys=True)))
    return out


def archive_read(content: bytes) -> dict[str, str]:
    """A zip answer (a graph export) as its members: names, and the text of its notes (`.md`);
    other members (an Anki collection) hold their moment of writing, so only their names count."""
    with zipfile.ZipFile(io.BytesIO(content)) as zf:
        return {n: zf.read(n).decode() if n.endswith(".md") else "" for n in sorted(zf.namelist())}


def test_a_backup_restored_into_a_fresh_dir_answers_every_read_the_same(tmp_path: Path) -> None:
    original, fresh = tmp_path / "original", tmp_path / "fresh"
    seed(original)
    with server(original) as client:
        chat_ids = lessons(client)
    job(original, chat_ids[0])
    ids = {"chat_id": chat_ids, "set_id": ["ps_0000000a"], "job_id": ["job_demo1"]}
    with server(original) as client:
        before = reads(client, ids)
        archive = client.get("/api/backup")
        assert archive.status_code == 200, archive.text
        assert archive.headers["content-type"] == "application/zip"
        assert "learning-harness-backup-" in archive.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(archive.content)) as zf:
        assert not any(n.startswith(("secrets", "subscriptions", "logs")) for n in zf.namelist())
    assert list((original / "restore").glob("outgoing-*")) == []  # sent, then removed

    fresh.mkdir()
    (fresh / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    with server(fresh) as client:
        (other,) = lessons(client)[:1]
        checked = client.post(
            "/api/backup/check", files={"archive": ("b.zip", archive.content, "application/zip")}
        )
        assert checked.status_code == 200, checked.text
        report = checked.json()
        assert report["backup"]["counts"] == {
            "lessons": 2,
            "propositions": 300,
            "practiceSets": 1,
            "jobs": 1,
            "settings": True,
        }
        assert report["current"]["lessons"] == 2 and report["current"]["propositions"] == 0
        assert "2 lessons here, replaced by the backup's 2" in report["replaces"]
        assert any("keys" in line for line in report["keeps"])
        unconfirmed = client.post("/api/backup/restore", json={"token": report["token"], "confirmed": False})
        assert unconfirmed.status_code == 400
        assert client.get(f"/api/chats/{other}").status_code == 200  # nothing changed yet
        staged = client.post("/api/backup/restore", json={"token": report["token"], "confirmed": True})
        assert staged.status_code == 202, staged.text
        assert staged.json()["restartRequired"] is True
        assert client.get("/api/backup/restore").json()["staged"]["counts"]["lessons"] == 2
        again = client.post("/api/backup/restore", json={"token": report["token"], "confirmed": True})
        assert again.json()["error"] == "restore_unknown"
    with server(fresh) as client:  # the restart applies it
        after = reads(client, ids)
        assert client.get("/api/backup/restore").json() == {"staged": None}
        assert client.get(f"/api/chats/{other}").status_code == 404
    assert before.keys() == after.keys()
    for url in before:
        assert after[url] == before[url], url
    (aside,) = (fresh / "restore").glob("replaced-*")
    assert (aside / "chats" / f"{other}.json").exists()  # the replaced lesson kept, not deleted


def test_a_bad_archive_is_refused_over_http_and_changes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    seed(data)
    with server(data) as client:
        good = client.get("/api/backup").content
        before = sorted(p.relative_to(data) for p in data.rglob("*") if "restore" not in p.parts)
        for content, reason in (
            (good[: len(good) // 2], "cut short"),
            (b"just text", "not a Learning Harness backup"),
        ):
            refused = client.post(
                "/api/backup/check", files={"archive": ("b.zip", content, "application/zip")}
            )
            assert refused.status_code == 400
            assert refused.json()["error"] == "archive_refused" and reason in refused.json()["detail"]
        missing = client.post("/api/backup/check", files={"other": ("b.zip", good, "application/zip")})
        assert missing.status_code == 400 and "archive" in missing.json()["detail"]
        assert client.get("/api/backup/restore").json() == {"staged": None}
    assert sorted(p.relative_to(data) for p in data.rglob("*") if "restore" not in p.parts) == before
    assert list((data / "restore").iterdir()) == []  # uploads removed


def test_a_backup_taken_while_a_turn_streams_is_whole(tmp_path: Path) -> None:
    """A turn is held mid-reply (its write-ahead saved) while the backup is taken: the archive
    passes every check and holds the lesson as it stood."""
    data = tmp_path / "data"
    seed(data)
    held = threading.Event()
    started = threading.Event()
    script = Script(gate=held, before=started.set)
    with server(data, script) as client:
        chat_id = client.post("/api/chats", json={}).json()["id"]
        with ThreadPoolExecutor(1) as pool:
            turn = pool.submit(client.post, "/api/chat", json=turn_body(chat_id, "What is a heap?"))
            assert started.wait(60), "the turn never reached the model"
            archive = client.get("/api/backup")
            held.set()
            assert turn.result(timeout=60).status_code == 200
        assert archive.status_code == 200
        checked = client.post(
            "/api/backup/check", files={"archive": ("b.zip", archive.content, "application/zip")}
        )
        assert checked.status_code == 200, checked.text
        assert checked.json()["backup"]["counts"]["lessons"] == 1
    with zipfile.ZipFile(io.BytesIO(archive.content)) as zf:
        record = json.loads(zf.read(f"chats/{chat_id}.json"))
        log = zf.read(f"chats/{chat_id}.log") if f"chats/{chat_id}.log" in zf.namelist() else b""
    texts = json.dumps(record) + log.decode()
    assert "What is a heap?" in texts  # the learner's message was saved before the model was asked
