"""The graph's read channel over HTTP (seed §6): the view, clusters, positions, render settings,
and deletion."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from server.api.deps import ServicesDep
from server.core.turns import TurnRejected

router = APIRouter()


class DeleteRequest(BaseModel):
    """`POST /api/graph/delete`: proposition (`n_`) and implication (`arg_`) ids."""

    ids: list[str] = Field(min_length=1, max_length=10_000)


async def _json(request: Request) -> Any:
    try:
        return await request.json()
    except ValueError as exc:
        raise TurnRejected(400, "bad_request", "the body must be JSON") from exc


@router.get("/api/graph")
async def graph(services: ServicesDep) -> Response:
    """`{nodes, links, clusters}`: propositions, implication nodes (one per stored chain), arrows
    premise → implication → conclusion, birth-session clusters. A pure read (cached while the
    ledgers are unchanged)."""
    return Response(services.graph.view_json(), media_type="application/json")


@router.get("/api/graph/clusters")
async def graph_clusters(services: ServicesDep) -> dict[str, Any]:
    """Every birth-session group, any size: `{key, kind, label|null, nodeIds, nodeCount}`."""
    return {"clusters": services.graph.clusters()}


@router.put("/api/graph/positions")
async def put_positions(request: Request, services: ServicesDep) -> dict[str, Any]:
    """Commit dragged positions `{id: {x, y}}` (sanitized); `{"saved": n}`."""
    return {"saved": services.graph.put_positions(await _json(request))}


@router.get("/api/graph/settings")
async def get_render_settings(services: ServicesDep) -> dict[str, Any]:
    return {"settings": services.graph.render_settings()}


@router.put("/api/graph/settings")
async def put_render_settings(request: Request, services: ServicesDep) -> dict[str, Any]:
    """Render settings persisted on the server (labels, hulls, labelZoom, nodeSize, linkOpacity)."""
    return {"settings": services.graph.put_render_settings(await _json(request))}


@router.post("/api/graph/delete")
async def delete_nodes(body: DeleteRequest, services: ServicesDep) -> dict[str, Any]:
    """Full death: a proposition takes every chain referencing it; an implication id takes exactly
    its chain. 409 while an extraction of an involved source runs; 404 when nothing matches."""
    return services.graph.delete(body.ids)
