"""`GET /api/events` and its emitter laws (seed §10, issue 12 item 1), over real HTTP.

Laws pinned here: notify-after-write (a listener that reads the store when the event arrives sees
the write), present-entry gating (a mutation that changed nothing emits nothing), the silence law
(content writers: a session's model pick, settings, a turn's message saves), reads never emit. The
transport: events as SSE, `: ping` heartbeats, listeners removed on disconnect (50 reconnects
leave none behind), a backlog that collapses into `resync`, and a shutdown that does not wait for
open streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.models.function import FunctionModel

from server.api.app import create_app
from server.api.routes import events as events_route
from server.config import DataPaths
from server.services.bootstrap import Services, build_services
from tests.fakes import FakeSecrets
from tests.flows.conftest import COMPATIBLE_SLOT, Live, Script, turn_body
from tests.flows.workbench.test_workbench import Bench, delivered
from tests.livehttp import serve
from tests.scripts.library import graph_model
from tests.shared import NOTES


class Recorder:
    """Subscribes to the server's bus; `probe(event)` runs at emit time (notify-after-write)."""

    def __init__(self, services: Services, probe: Any = None) -> None:
        self.got: list[tuple[str, dict[str, Any]]] = []
        self.probes: list[Any] = []
        self.probe = probe
        self.stop = services.events.subscribe(self._on)

    def _on(self, event: str, data: dict[str, Any]) -> None:
        self.got.append((event, data))
        if self.probe is not None:
            self.probes.append((event, self.probe(event, data)))

    def names(self) -> list[str]:
        return [e for e, _ in self.got]


def wait_for(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def test_reads_never_emit(live: Live) -> None:
    chat_id = live.new_chat()
    live.client.post("/api/chat", json=turn_body(chat_id))
    recorder = Recorder(live.services)
    paths = live.client.get("/openapi.json").json()["paths"]  # every GET route of the app
    routes = [
        (path.replace("{chat_id}", chat_id), ops["get"])
        for path, ops in paths.items()
        if "get" in ops and path != "/api/events"
    ]
    assert len(routes) >= 10
    for path, op in routes:
        # a route keyed by something this lesson does not hold reads a missing record: 404, silent too
        wanted = (200, 204, 404) if "{" in path else (200, 204)
        concrete = re.sub(r"\{[a-z_]+\}", "missing-0000", path)
        # a required query parameter gets a plain value (`GET /api/search?q=heap`)
        query = {
            p["name"]: "1" if p.get("schema", {}).get("type") == "integer" else "heap"
            for p in op.get("parameters", [])
            if p.get("in") == "query" and p.get("required")
        }
        assert live.client.get(concrete, params=query).status_code in wanted, (path, query)
    live.client.get("/openapi.json")
    assert recorder.got == []


def test_list_shape_writes_notify_after_the_write_and_content_writes_stay_silent(live: Live) -> None:
    store = live.services.stores.chats
    recorder = Recorder(live.services, probe=lambda e, d: [r.title for r in store.list()])
    chat_id = live.new_chat()
    assert recorder.got == [("chats-changed", {})]
    assert recorder.probes[0][1] == ["New lesson"]  # the new record was on disk when it fired
    live.client.patch(f"/api/chats/{chat_id}", json={"title": "Heaps"})
    assert recorder.got[-1] == ("chats-changed", {}) and recorder.probes[-1][1] == ["Heaps"]
    n = len(recorder.got)
    # the silence law: a session's model pick and the settings are content writes
    assert (
        live.client.put(f"/api/chats/{chat_id}/settings", json={"model": COMPATIBLE_SLOT}).status_code == 200
    )
    settings = live.client.get("/api/settings").json()
    assert live.client.put("/api/settings", json={"models": settings["models"]}).status_code == 200
    assert len(recorder.got) == n
    # present-entry gating: a delete of a session that does not exist changes nothing, says nothing
    assert live.client.delete("/api/chats/c_missing_0000").status_code == 404
    assert len(recorder.got) == n
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    assert recorder.got[-1] == ("chats-changed", {}) and recorder.probes[-1][1] == []


def test_a_turn_emits_started_then_settled_after_its_reply_is_saved(live: Live) -> None:
    chat_id = live.new_chat()
    store = live.services.stores.chats

    def probe(event: str, data: dict[str, Any]) -> Any:
        record = store.get(chat_id)
        return [m["role"] for m in record.messages] if record else None

    recorder = Recorder(live.services, probe=probe)
    gate = threading.Event()
    live.script.gate = gate
    result: dict[str, httpx.Response] = {}
    thread = threading.Thread(
        target=lambda: result.setdefault(
            "r", httpx.post(f"{live.url}/api/chat", json=turn_body(chat_id), timeout=30)
        )
    )
    thread.start()
    wait_for(lambda: live.script.seen)
    # a second begin while the first runs is refused, silently
    assert live.client.post("/api/chat", json=turn_body(chat_id, "again", mid="u9")).status_code == 409
    gate.set()
    thread.join(10)
    assert result["r"].status_code == 200
    assert recorder.names() == ["turn-started", "chats-changed", "turn-settled"]  # chats: the title
    assert recorder.got[0] == ("turn-started", {"chatId": chat_id})
    assert recorder.got[-1] == ("turn-settled", {"chatId": chat_id})
    assert recorder.probes[-1][1] == ["user", "assistant"]  # the reply was saved before it fired
    live.services.registry.end(chat_id)  # nothing to release: silent
    assert len(recorder.got) == 3


def test_job_writes_emit_jobs_changed_after_the_write_and_no_op_job_writes_stay_silent(live: Live) -> None:
    """The Workbench's emitter (seed §10.2): every job-store write emits `jobs-changed {chatId}`
    after the write (a listener reading the store then sees it); a row coming or going also emits
    `activity-changed`. A second acknowledgement and a discard that removes nothing write nothing
    and say nothing (present-entry gating); a discard that removes emits once."""
    bench = Bench(live)
    chat_id = bench.lesson()
    jobs = live.services.stores.jobs

    def probe(event: str, data: dict[str, Any]) -> Any:
        if event != "jobs-changed":
            return None
        return [(j.status, j.delivery.status if j.delivery else None) for j in jobs.list(data["chatId"])]

    recorder = Recorder(live.services, probe=probe)
    assert bench.say(chat_id, "Show me a demo", "u1").status_code == 200
    wait_for(lambda: not live.services.registry.running(chat_id))
    # the spawn: the record is on disk when the event fires; a Background agents row came
    spawned = recorder.got.index(("jobs-changed", {"chatId": chat_id}))
    assert recorder.got[spawned + 1] == ("activity-changed", {})
    assert [p for e, p in recorder.probes if e == "jobs-changed"] == [[("running", None)]]
    outcome = len(recorder.got)

    bench.release()
    wait_for(lambda: delivered(bench, chat_id))
    wait_for(lambda: not live.services.registry.running(chat_id))
    seen = [p for e, p in recorder.probes if e == "jobs-changed"]
    # the outcome (with its pending delivery; the row went), then the acknowledgement
    assert seen == [[("running", None)], [("done", "pending")], [("done", "delivered")]]
    finished = recorder.got.index(("jobs-changed", {"chatId": chat_id}), outcome)
    assert recorder.got[finished + 1] == ("activity-changed", {})  # the row went
    assert all(d == {"chatId": chat_id} for e, d in recorder.got if e == "jobs-changed")

    [job] = jobs.list(chat_id)
    n = len(recorder.got)
    assert live.services.jobs.acknowledge(job.id) is None  # already delivered: no write
    assert live.services.jobs.discard("c_without_jobs_0000") == 0  # nothing to remove
    assert len(recorder.got) == n  # silence
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    assert ("jobs-changed", {"chatId": chat_id}) in recorder.got[n:]
    assert [p for e, p in recorder.probes[n:] if e == "jobs-changed"] == [[]]  # removed before it fired


@pytest.fixture
def graph_app(data_dir: Path) -> Iterator[tuple[httpx.Client, Services]]:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    script = Script()
    services = build_services(
        DataPaths(data_dir),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda r, k, u: FunctionModel(function=graph_model, stream_function=script.stream),
    )
    with serve(create_app(services)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client, services


def test_an_import_emits_activity_and_graph_changes_after_each_write(graph_app: Any) -> None:
    client, services = graph_app
    recorder = Recorder(services, probe=lambda e, d: len(services.stores.graph.nodes()))
    note = sorted(NOTES.glob("*.md"))[0]
    response = client.post(
        "/api/graph/import", files=[("files", (note.name, note.read_bytes(), "text/markdown"))]
    )
    assert response.status_code == 202, response.text
    wait_for(lambda: "graph-changed" in recorder.names())
    wait_for(lambda: all(r["phase"] == "done" for r in client.get("/api/activity").json()["rows"]))
    assert "activity-changed" in recorder.names()
    first_graph = recorder.names().index("graph-changed")
    assert recorder.probes[first_graph][1] > 0  # the merged nodes were readable when it fired
    n = len(recorder.got)
    node = next(iter(services.stores.graph.nodes()))
    assert client.post("/api/graph/delete", json={"ids": [node]}).status_code == 200
    assert recorder.got[n:] == [("graph-changed", {})]
    assert client.post("/api/graph/delete", json={"ids": [node]}).status_code == 404  # gone: silent
    assert len(recorder.got) == n + 1


# -- the transport -------------------------------------------------------------------------------
class Stream:
    """A live `GET /api/events` on a raw socket (so closing it from the test's thread really
    drops the connection, as a closed tab does): its SSE blocks, decoded from the chunked body."""

    def __init__(self, url: str) -> None:
        self.blocks: list[str] = []
        self.headers = ""
        self.ended = threading.Event()
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        raw, body, text = b"", b"", ""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return
                raw += data
                if not self.headers:
                    if b"\r\n\r\n" not in raw:
                        continue
                    head, raw = raw.split(b"\r\n\r\n", 1)
                    self.headers = head.decode()
                while b"\r\n" in raw:  # chunked transfer coding: size line, data, CRLF
                    size_line, rest = raw.split(b"\r\n", 1)
                    size = int(size_line.split(b";")[0], 16)
                    if size == 0:
                        return
                    if len(rest) < size + 2:
                        break
                    body, raw = body + rest[:size], rest[size + 2 :]
                text += body.decode()
                body = b""
                text = text.replace("\r\n", "\n")
                while "\n\n" in text:
                    block, text = text.split("\n\n", 1)
                    self.blocks.append(block)
        except OSError:
            pass
        finally:
            self.ended.set()

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for block in list(self.blocks):
            lines = [line for line in block.splitlines() if ": " in line and not line.startswith(":")]
            fields = dict(line.split(": ", 1) for line in lines)
            if "event" in fields:
                out.append((fields["event"], json.loads(fields.get("data", "{}"))))
        return out

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(5)


def test_events_arrive_as_sse_with_pings_and_a_disconnect_removes_the_listener(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events_route, "PING_S", 0.2)
    baseline = len(live.services.events)
    stream = Stream(live.url)
    wait_for(lambda: len(live.services.events) == baseline + 1)
    chat_id = live.new_chat()
    wait_for(lambda: ("chats-changed", {}) in stream.events())
    live.client.post("/api/chat", json=turn_body(chat_id))
    wait_for(lambda: ("turn-settled", {"chatId": chat_id}) in stream.events())
    assert ("turn-started", {"chatId": chat_id}) in stream.events()
    wait_for(lambda: any(b.strip() == ": ping" for b in stream.blocks))
    assert stream.blocks[0].startswith(": connected") and "retry: 2000" in stream.blocks[0]
    assert "text/event-stream" in stream.headers
    stream.close()
    wait_for(lambda: len(live.services.events) == baseline)


def test_fifty_reconnects_and_twenty_windows_leave_no_listener_behind(live: Live) -> None:
    baseline = len(live.services.events)
    for _ in range(50):
        reconnect = Stream(live.url)
        wait_for(lambda r=reconnect: bool(r.blocks))  # connected
        reconnect.close()
    windows = [Stream(live.url) for _ in range(20)]
    wait_for(lambda: len(live.services.events) == baseline + 20)
    live.new_chat()
    wait_for(lambda: all(("chats-changed", {}) in w.events() for w in windows))
    for window in windows:
        window.close()
    wait_for(lambda: len(live.services.events) == baseline)


def test_a_window_that_falls_behind_gets_one_resync(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events_route, "BACKLOG", 5)
    baseline = len(live.services.events)
    stream = Stream(live.url)
    wait_for(lambda: len(live.services.events) == baseline + 1)
    emit = live.services.events.emit

    async def burst() -> None:  # 40 events on the server's loop before the stream can drain any
        for _ in range(40):
            emit("activity-changed")

    asyncio.run_coroutine_threadsafe(burst(), server_loop(live)).result(5)
    wait_for(lambda: any(e == "resync" for e, _ in stream.events()))
    assert sum(e == "activity-changed" for e, _ in stream.events()) <= 6
    stream.close()


def server_loop(live: Live) -> asyncio.AbstractEventLoop:
    """The event loop the live server runs on (an event emitted by a request runs on it)."""
    holder: dict[str, asyncio.AbstractEventLoop] = {}

    def listener(event: str, data: dict[str, Any]) -> None:
        holder.setdefault("loop", asyncio.get_running_loop())

    stop = live.services.events.subscribe(listener)
    live.new_chat()
    stop()
    return holder["loop"]


def test_the_server_stops_promptly_with_streams_open(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    services = build_services(DataPaths(data_dir), offline=False, secrets=FakeSecrets())
    started = None
    with serve(create_app(services)) as url:
        baseline = len(services.events)  # the server's own listeners (the wake pipeline)
        streams = [Stream(url) for _ in range(3)]
        wait_for(lambda: len(services.events) == baseline + 3)
        started = time.monotonic()
    assert time.monotonic() - started < 5  # a graceful stop that does not wait on endless streams
    for stream in streams:
        assert stream.ended.wait(5)
        stream.close()
