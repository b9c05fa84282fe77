"""A 10,000-message lesson in real Chromium (issue 15: a turn costs the same at message 10,000 as at
message 10).

The lesson is seeded by writing its record file into the data dir of a real `python -m server`
(the store reads the file; a read cache keyed by the file's mtime and size sees the new file). The
page draws only the most recent messages (core/transcriptWindow.ts), and a turn's `POST /api/chat`
carries only the new message (core/turnRequest.ts): at 10,000 messages the whole history was a
~3 MB body, refused with 413.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, Request, Response, expect

from server.store.classroom.chats import read_record_data
from tests.procs import ServerProcess, server_on_stub

pytestmark = pytest.mark.e2e

MESSAGES = 10_000
WINDOW = 200  # frontend/src/core/classroom/transcriptWindow.ts TRANSCRIPT_WINDOW
LEARNER = "Could you show me why the chain rule multiplies derivatives?"
TEACHER = (
    "Think of the inner function as a machine that stretches its input by a local factor, and the "
    "outer one as a second machine stretching again. Near any point, composing two stretches "
    "multiplies their factors: that is the whole chain rule. Formally, $(f\\circ g)'(x) = "
    "f'(g(x))\\,g'(x)$. Try it on $\\sin(x^2)$: the outer factor is $\\cos(x^2)$, the inner $2x$. "
    "What do you get?"
)


def seeded_messages(n: int) -> list[dict[str, Any]]:
    """`n` alternating learner lines (~60 chars) and teacher replies (~380 chars), ids m0..m{n-1}."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        role, text = ("user", f"{LEARNER} ({i})") if i % 2 == 0 else ("assistant", TEACHER)
        out.append({"id": f"m{i}", "role": role, "parts": [{"type": "text", "text": text}]})
    return out


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    with server_on_stub(data_dir) as proc:
        yield proc


def seed_lesson(server: ServerProcess, n: int) -> Path:
    """A session created through the API, then its record file rewritten with `n` messages."""
    created = httpx.post(f"{server.url}/api/chats", json={"title": "A long lesson"}, timeout=30)
    assert created.status_code in (200, 201), created.text
    path = server.data_dir / "chats" / f"{created.json()['id']}.json"
    record = json.loads(path.read_text())
    record["messages"] = seeded_messages(n)
    path.write_text(json.dumps(record))
    return path


def test_a_10000_message_lesson_opens_and_turns_with_a_small_body(page: Page, server: ServerProcess) -> None:
    path = seed_lesson(server, MESSAGES)
    chat_id = path.stem
    assert len(httpx.get(f"{server.url}/api/chats/{chat_id}", timeout=30).json()["messages"]) == MESSAGES

    posts: list[Request] = []
    refused: list[str] = []

    def on_request(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/api/chat"):
            posts.append(request)

    def on_response(response: Response) -> None:
        if response.status == 413:
            refused.append(response.url)

    page.on("request", on_request)
    page.on("response", on_response)

    page.goto(f"{server.url}/chat/{chat_id}")
    transcript = page.get_by_test_id("transcript")
    expect(transcript.locator(f'[data-message-id="m{MESSAGES - 1}"]')).to_be_visible(timeout=60_000)
    # Only the most recent messages are drawn; the rest wait behind "Show earlier messages".
    drawn = transcript.locator("[data-message-id]")
    expect(drawn).to_have_count(WINDOW)
    expect(drawn.first).to_have_attribute("data-message-id", f"m{MESSAGES - WINDOW}")
    earlier = page.get_by_test_id("earlier-messages")
    expect(earlier).to_have_attribute("data-hidden", str(MESSAGES - WINDOW))
    # Revealing earlier messages leaves what the learner was reading where it was.
    transcript.evaluate("el => { el.scrollTop = 0; }")
    reading = transcript.locator(f'[data-message-id="m{MESSAGES - WINDOW}"]')
    before = reading.bounding_box()
    page.get_by_test_id("show-earlier").click()
    expect(drawn).to_have_count(2 * WINDOW)
    expect(drawn.first).to_have_attribute("data-message-id", f"m{MESSAGES - 2 * WINDOW}")
    after = reading.bounding_box()
    assert before is not None and after is not None
    assert abs(after["y"] - before["y"]) < 5, (before, after)

    question = "So what is the derivative of cos(x^3)?"
    page.get_by_test_id("composer-input").fill(question)
    page.get_by_test_id("composer-send").click()
    expect(transcript.get_by_test_id("message-user").last).to_have_text(question)
    reply = transcript.get_by_test_id("message-assistant").last
    expect(reply).to_contain_text(f"You asked: {question}", timeout=60_000)
    expect(page.get_by_test_id("chat-status")).to_have_text("ready", timeout=60_000)
    expect(page.get_by_test_id("error-banner")).to_have_count(0)

    # The browser sent the new message alone: a body of constant size, never the history.
    assert len(posts) == 1, [p.url for p in posts]
    body = posts[0].post_data_buffer or b""
    assert len(body) < 10_000, len(body)
    sent = json.loads(body)
    assert sent["id"] == chat_id
    assert sent["trigger"] == "submit-message"
    assert [m["role"] for m in sent["messages"]] == ["user"]
    assert refused == []

    saved = (read_record_data(path.parent, chat_id) or {})["messages"]  # snapshot + log (decision 0015)
    assert len(saved) == MESSAGES + 2
    assert saved[0]["id"] == "m0" and saved[MESSAGES - 1]["id"] == f"m{MESSAGES - 1}"
    assert [m["role"] for m in saved[-2:]] == ["user", "assistant"]
    assert question in json.dumps(saved[-2])
