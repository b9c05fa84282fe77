"""Lessons reach the graph below the budget (issue 11, item 4): the trigger seam extracts a
lesson's uncovered teacher prose when the lesson goes idle, when the learner leaves it, and on the
explicit `POST /api/chats/{id}/graph` ("Add to my graph now"); `GET /api/chats/{id}/coverage`
says how much of it the graph holds and what runs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.models.function import FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import Services, build_services
from tests.fakes import FakeSecrets
from tests.flows.classroom.test_lesson_extraction import PROBE_DONE
from tests.flows.conftest import COMPATIBLE_SLOT, Script, turn_body
from tests.livehttp import serve
from tests.scripts.library import graph_model

SHORT_PROSE = "A binary heap keeps the smallest key at its root.\n\nEvery parent is at most its children."
IDLE_S = 0.6


def seed_short_lesson(data: Path, chat_id: str) -> None:
    """A lesson past its probe whose teacher prose is far below the 8192-token budget."""
    path = data / "chats" / f"{chat_id}.json"
    record = json.loads(path.read_text())
    record["messages"] = [
        {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Teach me heaps"}]},
        {"id": "a0", "role": "assistant", "parts": [PROBE_DONE, {"type": "text", "text": SHORT_PROSE}]},
    ]
    path.write_text(json.dumps(record))


@pytest.fixture
def app(data_dir: Path) -> Iterator[tuple[httpx.Client, Services, Script, Path]]:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    script = Script()
    services = build_services(
        DataPaths(data_dir),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda r, k, u: FunctionModel(function=graph_model, stream_function=script.stream),
    )
    services.library.idle_delay_s = IDLE_S  # the injected idle delay (the setting's default is 5 minutes)
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client, services, script, data_dir


def rows_of(client: httpx.Client, chat_id: str) -> list[dict[str, Any]]:
    return [r for r in client.get("/api/activity").json()["rows"] if r["source"] == chat_id]


def wait_done(client: httpx.Client, chat_id: str, timeout: float = 20.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = rows_of(client, chat_id)
        if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
            return rows
        time.sleep(0.05)
    raise AssertionError(f"the lesson's extraction did not settle: {rows_of(client, chat_id)}")


def node_sources(data: Path) -> set[str]:
    path = data / "graph" / "nodes.jsonl"
    if not path.exists():
        return set()
    return {s for line in path.read_text().splitlines() for s in [json.loads(line)["provenance"]["source"]]}


def test_a_short_lesson_is_extracted_when_it_goes_idle(app: Any) -> None:
    client, _services, _script, data = app
    chat_id = client.post("/api/chats", json={}).json()["id"]
    seed_short_lesson(data, chat_id)
    started = time.monotonic()
    assert client.post("/api/chat", json=turn_body(chat_id, "go on", mid="u1")).status_code == 200
    # below the budget: nothing runs yet, and the feed says the lesson waits for its idle trigger
    assert rows_of(client, chat_id) == []
    pending = client.get("/api/activity").json()["pending"]
    assert [(p["source"], p["waitingFor"]) for p in pending] == [(chat_id, "idle")]
    assert pending[0]["flushAt"].endswith("Z")
    coverage = client.get(f"/api/chats/{chat_id}/coverage").json()
    assert coverage["coveredTokens"] == 0 and coverage["uncoveredTokens"] > 0
    assert coverage["uncoveredMessages"] == 2 and coverage["pending"]["waitingFor"] == "idle"
    assert coverage["uncoveredTokens"] < coverage["budgetTokens"] == 8192

    rows = wait_done(client, chat_id)
    assert time.monotonic() - started >= IDLE_S
    assert all(r["phase"] == "done" and r["kind"] == "chat" for r in rows)
    assert chat_id in node_sources(data)
    after = client.get(f"/api/chats/{chat_id}/coverage").json()
    assert after["uncoveredTokens"] == 0 and after["coveredTokens"] == coverage["uncoveredTokens"]
    assert after["coveredMessages"] == 2 and after["pending"] is None and after["jobs"] == []
    assert client.get("/api/activity").json()["pending"] == []


def test_a_turn_before_the_idle_delay_postpones_the_idle_trigger(app: Any) -> None:
    client, services, _script, data = app
    idle = services.library.idle_delay_s = 1.2  # wide margins: the check sits half a delay off each end
    chat_id = client.post("/api/chats", json={}).json()["id"]
    seed_short_lesson(data, chat_id)
    client.post("/api/chat", json=turn_body(chat_id, "go on", mid="u1"))
    time.sleep(idle / 2)
    second = time.monotonic()
    client.post("/api/chat", json=turn_body(chat_id, "and then?", mid="u2"))
    time.sleep(idle * 0.6)  # 1.1 idle delays after the first turn, 0.6 after the second
    assert rows_of(client, chat_id) == []
    rows = wait_done(client, chat_id)
    assert time.monotonic() - second >= idle
    assert len(rows) == 1  # one run over all three teacher-prose messages
    covered = client.get(f"/api/chats/{chat_id}/coverage").json()
    assert covered["uncoveredTokens"] == 0 and covered["coveredMessages"] == 3


def test_add_to_my_graph_now_extracts_below_the_budget(app: Any) -> None:
    client, services, _script, data = app
    services.library.idle_delay_s = 3600.0  # only the explicit flush may run here
    chat_id = client.post("/api/chats", json={}).json()["id"]
    seed_short_lesson(data, chat_id)

    answer = client.post(f"/api/chats/{chat_id}/graph")
    assert answer.status_code == 202, answer.text
    assert answer.json()["status"] == "started" and answer.json()["coverage"]["running"] is True
    rows = wait_done(client, chat_id)
    assert [r["phase"] for r in rows] == ["done"]
    assert chat_id in node_sources(data)
    view = client.get("/api/graph").json()
    assert any(c["key"] == chat_id for c in view["clusters"])

    # nothing new: a second flush is a no-op that says so
    again = client.post(f"/api/chats/{chat_id}/graph", json={"trigger": "explicit"})
    assert again.status_code == 200 and again.json()["status"] == "covered"
    assert len(rows_of(client, chat_id)) == 1


def test_leaving_a_lesson_extracts_it_and_a_flush_during_a_turn_waits_for_it(app: Any) -> None:
    client, services, script, data = app
    services.library.idle_delay_s = 3600.0
    chat_id = client.post("/api/chats", json={}).json()["id"]
    seed_short_lesson(data, chat_id)
    script.gate = threading.Event()
    turn = threading.Thread(
        target=lambda: httpx.post(
            f"{client.base_url}/api/chat", json=turn_body(chat_id, "go on", mid="u1"), timeout=60
        )
    )
    turn.start()
    deadline = time.monotonic() + 10
    while not client.get(f"/api/chats/{chat_id}").json()["running"]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    left = client.post(f"/api/chats/{chat_id}/graph", json={"trigger": "leave"})
    assert left.status_code == 202 and left.json()["status"] == "deferred"
    assert left.json()["coverage"]["pending"]["waitingFor"] == "turn"
    assert rows_of(client, chat_id) == []
    script.gate.set()
    turn.join(timeout=30)
    rows = wait_done(client, chat_id)
    assert [r["phase"] for r in rows] == ["done"]
    coverage = client.get(f"/api/chats/{chat_id}/coverage").json()
    assert coverage["uncoveredTokens"] == 0 and coverage["coveredMessages"] == 2  # the reply too


def test_flush_refusals_and_empty_lessons(app: Any) -> None:
    client, _services, _script, _data = app
    missing = client.post("/api/chats/c_nope/graph")
    assert missing.status_code == 404 and set(missing.json()) == {"error", "detail"}
    assert client.get("/api/chats/c_nope/coverage").status_code == 404
    bad = client.post("/api/chats/c_nope/graph", json={"trigger": "whenever"})
    assert bad.status_code in (400, 422) and set(bad.json()) >= {"error", "detail"}

    chat_id = client.post("/api/chats", json={}).json()["id"]
    empty = client.post(f"/api/chats/{chat_id}/graph")
    assert empty.status_code == 200 and empty.json()["status"] == "empty"
    assert rows_of(client, chat_id) == []
    coverage = client.get(f"/api/chats/{chat_id}/coverage").json()
    assert coverage["totalTokens"] == 0 and coverage["running"] is False


def test_the_library_settings_round_trip(app: Any) -> None:
    client, _services, _script, data = app
    assert client.get("/api/library/settings").json() == {
        "extractionChunkTokens": 8192,
        "lessonIdleSeconds": 300.0,
        "graphTools": True,
        "graphEnabled": True,
    }
    answer = client.put("/api/library/settings", json={"extractionChunkTokens": 2000, "graphTools": False})
    assert answer.status_code == 200
    assert answer.json() == {
        "extractionChunkTokens": 2000,
        "lessonIdleSeconds": 300.0,
        "graphTools": False,
        "graphEnabled": True,
    }
    saved = json.loads((data / "settings.json").read_text())
    assert saved["graph"]["extractionChunkTokens"] == 2000 and saved["agent"]["graphTools"] is False
    off = client.put("/api/library/settings", json={"graphEnabled": False})  # graph.enabled (decision 0030)
    assert (
        off.status_code == 200 and off.json()["graphEnabled"] is False and off.json()["graphTools"] is False
    )
    saved = json.loads((data / "settings.json").read_text())
    assert saved["graph"]["enabled"] is False and saved["graph"]["extractionChunkTokens"] == 2000
    assert client.put("/api/library/settings", json={"graphEnabled": "no"}).status_code == 400
    assert saved["models"]["strong"] == COMPATIBLE_SLOT  # other sections kept
    low = client.put("/api/library/settings", json={"extractionChunkTokens": 499})
    assert low.status_code == 400 and set(low.json()) == {"error", "detail"}
    assert client.put("/api/library/settings", json={"lessonIdleSeconds": 5}).status_code == 400
