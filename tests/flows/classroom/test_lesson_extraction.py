"""The lesson front door (issue 4): a settled turn whose uncovered teacher prose reaches
`graph.extractionChunkTokens` starts extraction of that prose; the teacher's graph tools read the
graph when `agent.graphTools` is on."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT, Script, turn_body
from tests.livehttp import serve
from tests.scripts.library import graph_model

PROBE_DONE = {
    "type": "tool-probe_done",
    "toolCallId": "call_pd",
    "state": "output-available",
    "input": {
        "topic": "heaps",
        "goal": "learn heaps",
        "floor": "arrays",
        "ceiling": "trees",
        "level": "beginner",
    },
    "output": "Final result processed.",
}
PROSE = "\n".join(
    f"Heap fact {i}: a binary heap keeps the smallest key at its root, level {i}." for i in range(40)
)


def seeded_record(data: Path, chat_id: str) -> None:
    path = data / "chats" / f"{chat_id}.json"
    record = json.loads(path.read_text())
    record["messages"] = [
        {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Teach me heaps"}]},
        {"id": "a0", "role": "assistant", "parts": [PROBE_DONE, {"type": "text", "text": PROSE}]},
    ]
    path.write_text(json.dumps(record))


@pytest.fixture
def lesson(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = {"models": {"strong": COMPATIBLE_SLOT}, "graph": {"extractionChunkTokens": 500}}
    (data_dir / "settings.json").write_text(json.dumps(settings))
    script = Script()
    services = build_services(
        DataPaths(data_dir),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda r, k, u: FunctionModel(function=graph_model, stream_function=script.stream),
    )
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client, services, script, data_dir


def settle(client: httpx.Client) -> list[dict[str, Any]]:
    for _ in range(400):
        rows = client.get("/api/activity").json()["rows"]
        if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
            return rows
        threading.Event().wait(0.05)
    raise AssertionError("no extraction settled")


def test_a_settled_turn_over_the_budget_extracts_the_teacher_prose(lesson: Any) -> None:
    client, _services, _script, data = lesson
    chat_id = client.post("/api/chats", json={}).json()["id"]
    seeded_record(data, chat_id)
    assert client.post("/api/chat", json=turn_body(chat_id, "go on", mid="u1")).status_code == 200
    rows = settle(client)
    assert {r["source"] for r in rows} == {chat_id} and {r["kind"] for r in rows} == {"chat"}
    assert all(r["phase"] == "done" for r in rows)
    # greedy batches: the long prose of a0 alone, then the new reply
    reply_id = client.get(f"/api/chats/{chat_id}").json()["messages"][-1]["id"]
    coverage = [json.loads(x) for x in (data / "graph" / "coverage.jsonl").read_text().splitlines()]
    assert {c["message"] for c in coverage} == {"a0", reply_id}  # teacher prose only, never u0/u1
    nodes = [json.loads(x) for x in (data / "graph" / "nodes.jsonl").read_text().splitlines()]
    assert nodes and {m for n in nodes for m in n["provenance"]["messages"]} <= {"a0", reply_id}
    # covered prose does not re-open: a short next turn starts nothing new
    client.post("/api/chat", json=turn_body(chat_id, "and then?", mid="u2"))
    assert len(client.get("/api/activity").json()["rows"]) == len(rows)


def test_below_the_budget_nothing_runs(lesson: Any) -> None:
    client, _, _, _ = lesson
    chat_id = client.post("/api/chats", json={}).json()["id"]
    client.post("/api/chat", json=turn_body(chat_id, "hello"))
    assert client.get("/api/activity").json()["rows"] == []


def test_the_teacher_reads_the_graph_only_when_allowed(lesson: Any) -> None:
    client, _services, script, data = lesson
    note = b"# Heaps\nA heap is a tree.\nThe root holds the minimum.\n"
    client.post("/api/graph/import", files=[("files", ("heap.md", note, "text/markdown"))])
    settle(client)
    calls: list[str] = []

    async def teacher(messages, info):  # type: ignore[no-untyped-def]
        tools = {t.name for t in info.function_tools}
        calls.append(",".join(sorted(tools)))
        returned = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart) and p.tool_name == "list_sessions"
        ]
        if "list_sessions" in tools and not returned:
            yield {0: DeltaToolCall(name="list_sessions", json_args="{}", tool_call_id="call_ls")}
        else:
            yield "Let us begin."

    script.delegate = teacher
    chat_id = client.post("/api/chats", json={}).json()["id"]
    seeded_record(data, chat_id)
    client.post("/api/chat", json=turn_body(chat_id, "what do I know?", mid="u1"))
    assert "list_sessions" in calls[0]
    record = client.get(f"/api/chats/{chat_id}").json()
    sessions = next(p for p in record["messages"][-1]["parts"] if p["type"] == "tool-list_sessions")
    assert sessions["output"][0]["title"] == "heap.md"

    settings = json.loads((data / "settings.json").read_text())
    settings["agent"] = {"graphTools": False}
    (data / "settings.json").write_text(json.dumps(settings))
    calls.clear()
    client.post("/api/chat", json=turn_body(chat_id, "again", mid="u2"))
    assert calls and "list_sessions" not in calls[0]

    # `graph.enabled` composes with it (seed §6): the graph off, the tools are not offered either
    settings["agent"] = {"graphTools": True}
    settings["graph"] = {**settings.get("graph", {}), "enabled": False}
    (data / "settings.json").write_text(json.dumps(settings))
    calls.clear()
    client.post("/api/chat", json=turn_body(chat_id, "and again", mid="u3"))
    assert calls and "list_sessions" not in calls[0]
    settings["graph"]["enabled"] = True
    (data / "settings.json").write_text(json.dumps(settings))
    calls.clear()
    client.post("/api/chat", json=turn_body(chat_id, "once more", mid="u4"))
    assert calls and "list_sessions" in calls[0]
