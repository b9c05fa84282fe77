"""Exports over real HTTP (issue 31, items 1 and 3): `GET /api/chats/{id}/export.md` and
`GET /api/practice/sets/{id}/export.md` stream a Markdown attachment named after the title; an
unknown id is 404 and an unreadable record 503, its files left alone."""

from __future__ import annotations

import json
from urllib.parse import unquote

from server.core.contracts.chat import ChatRecord
from tests.flows.conftest import Live
from tests.unit.classroom.test_context import lesson
from tests.unit.classroom.test_session_markdown import full_lesson
from tests.unit.practice.test_set_markdown import GRADED, UNANSWERED, problem_set


def stored(live: Live, record: ChatRecord) -> str:
    """Create a lesson through the API and give it `record`'s title, messages and usage."""
    chat_id = live.new_chat()
    live.services.chats.chats.update(
        chat_id,
        lambda r: r.model_copy(
            update={"title": record.title, "messages": record.messages, "usage": record.usage}
        ),
    )
    return chat_id


def test_a_lesson_downloads_as_markdown_named_after_its_title(live: Live) -> None:
    chat_id = stored(live, full_lesson())
    response = live.client.get(f"/api/chats/{chat_id}/export.md")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="Derivatives- -the- basics.md"')
    assert unquote(disposition.split("filename*=UTF-8''", 1)[1]) == "Derivatives- -the- basics.md"
    document = response.text
    assert document.startswith('---\ntitle: "Derivatives: \\"the\\" basics"\n')
    assert f'lesson: "{chat_id}"' in document
    assert "```mermaid\ngraph TD\n" in document
    assert "> **Quiz** (plan: Derivative)" in document
    # the demo links to the app that served the export
    assert f"[Open the demo]({live.url}/api/jobs/job_d/demo)" in document
    assert document.rstrip().endswith("cost $0.0100 (+1 unreported).")


def test_a_10000_message_lesson_streams_whole(live: Live) -> None:
    template = full_lesson()
    chat_id = stored(
        live, template.model_copy(update={"title": "Long", "messages": lesson(10_000), "usage": []})
    )
    with live.client.stream("GET", f"/api/chats/{chat_id}/export.md") as response:
        assert response.status_code == 200
        blocks = list(response.iter_raw())
    document = b"".join(blocks).decode()
    assert len(blocks) > 10  # streamed in blocks, not one body
    assert document.count("### Learner") == 5_000 and document.count("### Teacher") == 5_000
    assert document.count("Why does the derivative of x squared equal two x, exactly?") == 4_999


def test_unknown_and_unreadable_lessons_are_refused_and_left_alone(live: Live) -> None:
    response = live.client.get("/api/chats/c_nope/export.md")
    assert response.status_code == 404 and response.json()["error"] == "chat_not_found"
    chat_id = live.new_chat()
    path = live.data / "chats" / f"{chat_id}.json"
    path.write_text('{"id": "torn')
    response = live.client.get(f"/api/chats/{chat_id}/export.md")
    assert response.status_code == 503, response.text
    assert path.read_text() == '{"id": "torn'


def test_a_practice_set_downloads_as_markdown(live: Live) -> None:
    value = problem_set([GRADED, UNANSWERED]).model_copy(
        update={"id": "ps_0123456789abcdef", "title": "Limits / IVT"}
    )
    root = live.data / "practice"
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{value.id}.json").write_text(json.dumps(value.model_dump(mode="json", by_alias=True)))
    response = live.client.get(f"/api/practice/sets/{value.id}/export.md")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert 'filename="Limits - IVT.md"' in response.headers["content-disposition"]
    document = response.text
    assert "## Problem 1: A root exists" in document and "**8/10**" in document
    assert "By the IVT" in document and "SECRET" not in document
    missing = live.client.get("/api/practice/sets/ps_00000000/export.md")
    assert missing.status_code == 404 and missing.json()["error"] == "set_not_found"
