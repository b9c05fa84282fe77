"""A practice set as Markdown: `GET /api/practice/sets/{id}/export.md` (issue 31, item 3)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.api.markdown import MARKDOWN_OK, markdown_download
from server.core.practice.set_markdown import set_markdown

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


@router.get(
    "/api/practice/sets/{set_id}/export.md",
    response_model=None,
    responses={**MARKDOWN_OK, **errors(404, 503)},
)
async def export_set(set_id: str, services: ServicesDep) -> StreamingResponse:
    """The set as a Markdown file (an attachment named after its title): problems, the learner's
    answers, grades and, for answered problems, the model solutions and rubrics
    (`core/practice/set_markdown.py`); an unanswered problem's solution stays hidden, as on the
    exam page. 404 set_not_found; 503 store_corrupt."""
    problem_set = services.practice.get(set_id)
    return markdown_download(set_markdown(problem_set), problem_set.title or "practice set", fallback=set_id)
