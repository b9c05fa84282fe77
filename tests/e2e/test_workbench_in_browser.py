"""The Workbench in real Chromium (issue 14, done-when): a scripted lesson asks for a demo and keeps
teaching; the real demo-builder runs the demo in headless Chromium before delivery; the verified
demo appears in the transcript once, in a sandboxed frame; also when the server was restarted
between the worker's end and the delivery.

One scripted OpenAI-compatible stub plays the teacher and the demo-builder (told apart by the
tools each request offers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.flows.test_workbench import _job_owing, teaching_record
from tests.livehttp import serve
from tests.procs import ServerProcess, scripted_slot, start_server, write_settings
from tests.stub_openai import Reply, create_stub, last_user_text

pytestmark = pytest.mark.e2e

DEMO_HTML = (
    "<!doctype html><html><body style='margin:0'>"
    "<canvas id='c' width='300' height='150'></canvas>"
    "<script>const x=document.getElementById('c').getContext('2d');"
    "x.fillStyle='#2b6cb0';x.fillRect(20,20,200,100);</script></body></html>"
)


def reply(body: dict[str, Any]) -> Reply:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "submit_demo" in tools:  # the demo-builder
        return Reply("", ("submit_demo", {"title": "Tangent slider", "html": DEMO_HTML}, "call_submit"))
    last = body["messages"][-1]
    if last.get("role") == "tool":
        return Reply("Meanwhile: the slope of the tangent line is the derivative.")
    said = last_user_text(body)
    if "[background" in said:
        return Reply("Your demo is ready: drag along the curve and watch the slope.")
    if "demo" in said.lower() and "demo" in tools:
        return Reply("I will have a demo built.", ("demo", {"request": "a tangent line on x^2"}, "call_demo"))
    return Reply("Let us keep going.")


@pytest.fixture
def stub_url() -> Iterator[str]:
    with serve(create_stub(reply, delay_s=0.0)) as url:
        yield url


def teaching_lesson(server: ServerProcess) -> str:
    chat_id = httpx.post(f"{server.url}/api/chats", json={}, timeout=10).json()["id"]
    path = server.data_dir / "chats" / f"{chat_id}.json"
    record = json.loads(path.read_text())
    record["messages"] = teaching_record(chat_id)
    record["title"] = "Derivatives"
    path.write_text(json.dumps(record))
    return chat_id


def test_a_demo_is_built_verified_and_shown_once(page: Page, data_dir: Path, stub_url: str) -> None:
    write_settings(data_dir, scripted_slot(stub_url))
    server = start_server(data_dir)
    try:
        chat_id = teaching_lesson(server)
        page.goto(f"{server.url}/chat/{chat_id}")
        page.get_by_test_id("composer-input").fill("Show me a demo of tangents")
        page.get_by_test_id("composer-send").click()
        card = page.get_by_test_id("dispatch-card")
        expect(card).to_contain_text("Building a demo")
        expect(page.get_by_text("Meanwhile: the slope")).to_be_visible(timeout=30_000)
        # the worker verifies in headless Chromium, then the result wakes the lesson
        artifact = page.locator("[data-testid=artifact-card][data-kind=demo]")
        expect(artifact).to_have_count(1, timeout=60_000)
        expect(page.get_by_text("Your demo is ready")).to_be_visible(timeout=30_000)
        expect(page.get_by_test_id("dispatch-status")).to_contain_text("finished")
        frame = artifact.get_by_test_id("demo-frame")
        assert frame.get_attribute("sandbox") == "allow-scripts"
        # the record holds the steer once; a reload shows the demo once
        page.reload()
        expect(page.locator("[data-testid=artifact-card][data-kind=demo]")).to_have_count(1, timeout=30_000)
        record = httpx.get(f"{server.url}/api/chats/{chat_id}", timeout=10).json()
        steers = [m["id"] for m in record["messages"] if m["id"].startswith("steer_")]
        assert len(steers) == 1
        [job] = httpx.get(f"{server.url}/api/chats/{chat_id}/jobs", timeout=10).json()["jobs"]
        assert job["status"] == "done" and job["delivery"]["status"] == "delivered"
        assert any("drew" in check or "visible" in check for check in job["result"]["artifact"]["checks"])
    finally:
        assert server.stop() == 0


def test_a_restart_between_the_workers_end_and_the_delivery(
    page: Page, data_dir: Path, stub_url: str
) -> None:
    write_settings(data_dir, scripted_slot(stub_url))
    server = start_server(data_dir)
    try:
        chat_id = teaching_lesson(server)
    finally:
        assert server.stop() == 0
    # the worker had finished and saved its outcome when the server stopped; nothing was delivered
    _job_owing(data_dir, chat_id, delivered_marker=False, html=DEMO_HTML)
    server = start_server(data_dir)
    try:
        page.goto(f"{server.url}/chat/{chat_id}")
        expect(page.locator("[data-testid=artifact-card][data-kind=demo]")).to_have_count(1, timeout=30_000)
        expect(page.get_by_text("Your demo is ready")).to_be_visible(timeout=30_000)
        page.reload()
        expect(page.locator("[data-testid=artifact-card][data-kind=demo]")).to_have_count(1, timeout=30_000)
        [saved] = httpx.get(f"{server.url}/api/chats/{chat_id}/jobs", timeout=10).json()["jobs"]
        assert saved["delivery"]["status"] == "delivered"
    finally:
        assert server.stop() == 0
