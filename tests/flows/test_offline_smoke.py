"""A real lesson turn against the offline model through llama.cpp (slow; CI runs it).

Fresh data dir, no key: the strong slot resolves to SmolLM2-135M-Instruct served by
llama-cpp-python's OpenAI-compatible server, and the prober runs with its tools. The content is
weak and the tiny model often fails the tools' schemas: the path must still be whole (no crash,
the record intact, failures reported honestly in the stream and the record).
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from server.config import OFFLINE_MODEL_NAME
from server.services.offline_model import offline_installed
from tests.flows.conftest import sse_chunks
from tests.procs import start_server
from tests.shared import NOTES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not offline_installed(), reason="the 'local' extra is not installed"),
]


def first_offline_turn(client: httpx.Client, text: str = "Teach me fractions.") -> dict:
    """A new lesson (stamped with the offline model) and its first turn, which must stream a
    reply from the offline model (issue 9: a 503 is a failure). Returns the created session."""
    created = client.post("/api/chats", json={}).json()
    assert created["model"]["provider"] == "local", created
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}
    response = client.post("/api/chat", json={"id": created["id"], "messages": [message]})
    assert response.status_code == 200, response.text
    assert_streamed_reply(response.text)
    return created


def assert_streamed_reply(body: str) -> None:
    """The SSE body of a turn holds the model's content (text or tool calls, valid or not),
    ends with [DONE], and any error in it says something."""
    chunks = [c for c in sse_chunks(body) if isinstance(c, dict)]
    assert sse_chunks(body)[-1] == "[DONE]"
    content = [c for c in chunks if c["type"] in ("text-delta", "tool-input-available", "tool-input-error")]
    assert content, f"the offline model streamed no content: {chunks}"
    errors = [c for c in chunks if c["type"] == "error"]
    assert all(e["errorText"].strip() for e in errors)
    assert not any("Connection error" in e["errorText"] for e in errors), errors


def test_a_real_lesson_turn_on_the_offline_model(data_dir: Path) -> None:
    server = start_server(data_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=600) as client:
            created = first_offline_turn(client)
            assert created["model"] == {"provider": "local", "model": OFFLINE_MODEL_NAME, "baseUrl": None}
            record = client.get(f"/api/chats/{created['id']}").json()
            assert record["messages"][0]["id"] == "u1"
            for part in (p for m in record["messages"][1:] for p in m["parts"]):
                if part.get("state") == "output-error":
                    assert part.get("errorText"), part  # a failed tool call says why
            assert client.get("/api/health").json()["status"] == "ok"
            assert client.get("/api/settings").json()["offline"]["running"] is True
    finally:
        assert server.stop() == 0


NOTE = NOTES / "data-structures-heap.en.md"


def test_a_real_notes_import_on_the_offline_model(data_dir: Path) -> None:
    server = start_server(data_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            response = client.post(
                "/api/graph/import", files=[("files", (NOTE.name, NOTE.read_bytes(), "text/markdown"))]
            )
            assert response.status_code == 202 and response.json()["files"][0]["status"] == "queued"
            rows: list = []
            for _ in range(1200):  # the tiny model is slow: up to 10 minutes
                rows = client.get("/api/activity").json()["rows"]
                if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
                    break
                time.sleep(0.5)
            assert rows and all(r["phase"] in ("done", "error") for r in rows), rows
            for row in rows:
                if row["phase"] == "error":
                    assert row["error"].strip()  # an honest reason, e.g. an invalid submit
                    # trial finding 1: never the model server failing the request (HTTP 500 from
                    # llama.cpp's tool_choice assertion). The tiny model may extract little, and its
                    # retries may outgrow its 4,096-token context (llama.cpp then answers 400, seen
                    # in CI): an honest failure of a weak model, not this defect.
                    assert "HTTP 500" not in row["error"], row
            assert client.get("/api/health").json()["status"] == "ok"
            assert client.get("/api/graph/sources").status_code == 200
    finally:
        assert server.stop() == 0


def test_a_note_that_still_overflows_the_offline_model_fails_plainly_and_loses_nothing(
    data_dir: Path,
) -> None:
    """One enormous CJK sentence within the chunk budget by the estimate (4 characters a token)
    but far over SmolLM2's window in its own tokens: the job says so plainly, the graph keeps
    what it had, and importing the file again runs it again (its version never completed)."""
    server = start_server(data_dir)
    sentence = ("漢字の文章は小さなモデルには長すぎる" * 200)[:2900]  # ~725 estimated tokens, one line
    files = [("files", ("overflow.md", sentence.encode(), "text/markdown"))]
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            assert client.post("/api/graph/import", files=files).json()["files"][0]["status"] == "queued"
            rows: list = []
            for _ in range(1200):
                rows = client.get("/api/activity").json()["rows"]
                if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
                    break
                time.sleep(0.5)
            jobs = [r for r in rows if r["kind"] == "notes"]
            assert len(jobs) == 1 and jobs[0]["phase"] == "error", rows
            assert "longer than the offline model can read at once" in jobs[0]["error"], rows
            assert client.get("/api/graph").json()["nodes"] == []
            again = client.post("/api/graph/import", files=files).json()["files"][0]
            assert again["status"] == "queued", again  # nothing was recorded as done: it runs again
    finally:
        assert server.stop() == 0
