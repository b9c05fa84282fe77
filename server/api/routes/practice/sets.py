"""Practice over HTTP (seed §7): problem sets from the graph, one attempt per problem, graded by a
model. Bodies are strict pydantic models (a float level or an unknown one is a 400)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.core.contracts.practice import AnswerBody, CreateSet
from server.core.practice.levels import levels_view

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


@router.get("/api/practice/levels")
async def levels() -> dict[str, Any]:
    """The named levels with their one-line definitions, and the creation defaults."""
    return levels_view()


@router.get("/api/practice/sets", responses=errors(503))
async def list_sets(services: ServicesDep) -> dict[str, Any]:
    """`{"sets": [...]}`, newest first: status, levels, problem/answer/grade counts."""
    return {"sets": services.practice.sets()}


@router.post("/api/practice/sets", status_code=202, responses=errors(400, 413, 503))
async def create_set(body: CreateSet, services: ServicesDep) -> JSONResponse:
    """Freeze the selection's world and start generating: 202 `{id}`; 400 when none of the nodes
    is in the graph any more, 503 when no model is configured."""
    problem_set = await services.practice.create(body)
    return JSONResponse({"id": problem_set.id}, status_code=202)


@router.get("/api/practice/sets/{set_id}", responses=errors(404, 503))
async def get_set(set_id: str, services: ServicesDep) -> dict[str, Any]:
    """The set; a problem's solution and rubric only once it is answered. 404 unknown."""
    return services.practice.get(set_id).view()


@router.delete("/api/practice/sets/{set_id}", status_code=204, responses=errors(404, 503))
async def delete_set(set_id: str, services: ServicesDep) -> Response:
    """Abort the set's runs, then delete it; 404 unknown."""
    await services.practice.delete(set_id)
    return Response(status_code=204)


@router.post(
    "/api/practice/sets/{set_id}/answers", status_code=202, responses=errors(400, 404, 409, 413, 503)
)
async def answer(set_id: str, body: AnswerBody, services: ServicesDep) -> JSONResponse:
    """The one attempt: 202 `{problem}` with the solution and rubric revealed, the grade to come;
    400 already answered or empty, 404 unknown, 409 not ready."""
    return JSONResponse({"problem": services.practice.answer(set_id, body)}, status_code=202)
