"""A real lesson turn against the offline model through llama.cpp (slow; CI runs it).

Fresh data dir, no key: the strong slot resolves to SmolLM2-135M-Instruct served by
llama-cpp-python's OpenAI-compatible server, and the prober runs with its tools. The content is
weak and the tiny model often fails the tools' schemas: the path must still be whole (no crash,
the record intact, failures reported honestly in the stream and the record).

No outcome here depends on the machine's load (issue 26, item 8): the model's work is bounded by
what it must do (a one-part note; a known number of requests, each cut by the server's own
first-token deadline, which for the offline model covers its whole answer), and each test's wait
and its pytest timeout are computed from those bounds, so a slow machine fails a request honestly
(the job's row says why, which the tests accept) instead of outliving the test.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import httpx
import pytest

from server.agent.library.extraction import EXTRACTOR_TURNS
from server.config import OFFLINE_MODEL_NAME
from server.core.contracts.models import ModelCallSettings
from server.services.machine_room.offline_child import offline_installed
from tests.flows.conftest import sse_chunks
from tests.procs import start_server
from tests.shared import NOTES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not offline_installed(), reason="the 'local' extra is not installed"),
]


FIRST_TOKEN_S: float = ModelCallSettings.model_fields["first_token_s"].default
"""The offline model's per-request deadline in these tests, in seconds: the learner's default
(`modelCalls.firstTokenS`, 120 s; the offline model answers whole, so it bounds each request's
whole answer). A stricter 90 s failed the first turn once on a fresh-clone CI beside seven other
test runs (load 8-9 on 2 cores: the prober's prompt alone took longer to read)."""
START_S = 2 * 60 + 30
"""The most the offline model's start can take: two tries of its 60 s readiness, and a margin."""
AUDITOR_REQUESTS = 3
"""The auditor's requests for one part at most (its first and two retries)."""
IMPORT_WAIT_S = START_S + (EXTRACTOR_TURNS + AUDITOR_REQUESTS) * FIRST_TOKEN_S
"""How long a one-part import can take on the offline model, by its bounds (seconds)."""
TEST_TIMEOUT_S = IMPORT_WAIT_S + 90
"""pytest's timeout for a test that waits `IMPORT_WAIT_S`: the server's start and stop besides."""
NOTE = NOTES / "data-structures-heap.en.md"
SMALL_NOTE = NOTE.read_text(encoding="utf-8").split("## Time Complexities")[0]
"""The heap note's introduction (~870 characters): one part for the offline model's window (the
whole note is two parts, each up to four requests, and outlived the test on a loaded machine)."""


def bounded_settings(data_dir: Path) -> None:
    """settings.json with the test's deadline and no retries of failed requests, so every request
    the offline model gets is one the bounds above count."""
    data_dir.mkdir(parents=True, exist_ok=True)
    calls = {"firstTokenS": FIRST_TOKEN_S, "idleS": FIRST_TOKEN_S, "retries": 0}
    (data_dir / "settings.json").write_text(json.dumps({"modelCalls": calls}), encoding="utf-8")


def wait_for_jobs(client: httpx.Client, seconds: float) -> list[dict]:
    """The activity rows once every one has ended, polled for at most `seconds`."""
    rows: list[dict] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rows = client.get("/api/activity").json()["rows"]
        if rows and all(r["phase"] in ("done", "error", "aborted") for r in rows):
            return rows
        time.sleep(0.5)
    raise AssertionError(f"the jobs did not end within {seconds:.0f} s, their bound: {rows}")


def first_offline_turn(client: httpx.Client, text: str = "Teach me fractions.") -> dict:
    """A new lesson (stamped with the offline model) and its first turn, which must stream a
    reply from the offline model (issue 9: a 503 is a failure). Returns the created session."""
    created = client.post("/api/chats", json={"demo": True}).json()
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


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_a_real_lesson_turn_on_the_offline_model(data_dir: Path) -> None:
    bounded_settings(data_dir)
    server = start_server(data_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=IMPORT_WAIT_S) as client:
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


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_a_real_notes_import_on_the_offline_model(data_dir: Path) -> None:
    bounded_settings(data_dir)
    server = start_server(data_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            files = [("files", ("heap.md", SMALL_NOTE.encode(), "text/markdown"))]
            response = client.post("/api/graph/import", files=files)
            assert response.status_code == 202 and response.json()["files"][0]["status"] == "queued"
            assert response.json()["files"][0]["chunks"] == 1, response.json()  # the bound's premise
            rows = wait_for_jobs(client, IMPORT_WAIT_S)
            assert all(r["phase"] in ("done", "error") for r in rows), rows
            for row in rows:
                if row["phase"] == "error":
                    assert row["error"].strip()  # an honest reason, e.g. an invalid submit
                    # trial finding 1: never the model server failing the request (HTTP 500 from
                    # llama.cpp's tool_choice assertion). The tiny model may extract little, and its
                    # retries may outgrow its 4,096-token context (llama.cpp then answers 400, seen
                    # in CI): an honest failure of a weak model, not this defect.
                    assert "HTTP 500" not in row["error"], row
                elif row["kind"] == "notes":
                    assert row["usage"]["requests"] <= EXTRACTOR_TURNS + AUDITOR_REQUESTS, row
            assert client.get("/api/health").json()["status"] == "ok"
            assert client.get("/api/graph/sources").status_code == 200
    finally:
        assert server.stop() == 0


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_a_note_that_still_overflows_the_offline_model_fails_plainly_and_loses_nothing(
    data_dir: Path,
) -> None:
    """One enormous CJK sentence within the chunk budget by the estimate (4 characters a token)
    but far over SmolLM2's window in its own tokens: the job says so plainly, the graph keeps
    what it had, and importing the file again runs it again (its version never completed)."""
    bounded_settings(data_dir)
    server = start_server(data_dir)
    sentence = ("漢字の文章は小さなモデルには長すぎる" * 200)[:2900]  # ~725 estimated tokens, one line
    files = [("files", ("overflow.md", sentence.encode(), "text/markdown"))]
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            assert client.post("/api/graph/import", files=files).json()["files"][0]["status"] == "queued"
            rows = wait_for_jobs(client, IMPORT_WAIT_S)
            jobs = [r for r in rows if r["kind"] == "notes"]
            assert len(jobs) == 1 and jobs[0]["phase"] == "error", rows
            assert "longer than the offline model can read at once" in jobs[0]["error"], rows
            assert client.get("/api/graph").json()["nodes"] == []
            again = client.post("/api/graph/import", files=files).json()["files"][0]
            assert again["status"] == "queued", again  # nothing was recorded as done: it runs again
    finally:
        assert server.stop() == 0


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_a_learners_image_never_stops_a_lesson_on_the_offline_model(data_dir: Path) -> None:
    """Issue 26, item 1: the offline model cannot read images (llama.cpp printed the image's
    base64 as text, and a 6 KB PNG overflowed its context: HTTP 400 on that turn and the next).
    It reads a placeholder instead; the turn with the image and the next plain turn both stream a
    reply, and the record keeps the image."""
    bounded_settings(data_dir)
    server = start_server(data_dir)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 24  # ~6 KB: its base64 alone outgrows the window
    image = {
        "type": "file",
        "mediaType": "image/png",
        "url": "data:image/png;base64," + base64.b64encode(png).decode(),
    }
    try:
        with httpx.Client(base_url=server.url, timeout=IMPORT_WAIT_S) as client:
            created = client.post("/api/chats", json={"demo": True}).json()
            assert created["model"]["provider"] == "local", created
            sent = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is this?"}, image]}
            response = client.post("/api/chat", json={"id": created["id"], "messages": [sent]})
            assert response.status_code == 200, response.text
            assert_streamed_reply(response.text)
            plain = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Teach me fractions."}]}
            response = client.post("/api/chat", json={"id": created["id"], "messages": [plain]})
            assert response.status_code == 200, response.text
            assert_streamed_reply(response.text)
            record = client.get(f"/api/chats/{created['id']}").json()
            assert record["messages"][0] == sent, "the record keeps the image"
    finally:
        assert server.stop() == 0
