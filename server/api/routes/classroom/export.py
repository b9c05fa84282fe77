"""A lesson as Markdown: `GET /api/chats/{id}/export.md` (issue 31, item 1), streamed."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.api.markdown import MARKDOWN_OK, markdown_download
from server.core.classroom.session_markdown import lesson_markdown

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


@router.get(
    "/api/chats/{chat_id}/export.md",
    response_model=None,
    responses={**MARKDOWN_OK, **errors(404, 503)},
)
async def export_lesson(chat_id: str, request: Request, services: ServicesDep) -> StreamingResponse:
    """The lesson as a Markdown file (`text/markdown; charset=utf-8`, an attachment named after its
    title): the plan with each node's status, the transcript with every question, answer and
    grade, Workbench results, usage (`core/classroom/session_markdown.py`). Streamed from the
    stored record in 64 KiB blocks, so the lesson is held once however long it is. 404
    chat_not_found; 503 store_corrupt for an unreadable record (its files left alone)."""
    record = services.chats.get(chat_id)
    base = str(request.base_url).rstrip("/")
    pieces = lesson_markdown(record, demo_url=lambda job_id: f"{base}/api/jobs/{job_id}/demo")
    return markdown_download(pieces, record.title or "lesson", fallback=record.id)
