"""The graph's read channel over HTTP (seed §6): the view, clusters, positions, render settings,
and deletion."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field, RootModel, StrictBool, model_validator
from pydantic.json_schema import SkipJsonSchema

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors

router = APIRouter(route_class=StrictRoute, responses=GUARDED)

MAX_POSITIONS_BODY = 32_000_000
"""Largest `PUT /api/graph/positions` body (about 400,000 dragged nodes)."""

Coordinate = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-1e15, le=1e15)]
"""A finite JSON number (the service clamps it to ±1e6); strict: `true`, `"1"` are refused
(a bool is an int in Python, so a lax float would take `false` as 0)."""
NodeId = Annotated[str, Field(min_length=1, max_length=200)]


class Point(BaseModel):
    """A node's position; a null coordinate (what a browser's `JSON.stringify` makes of NaN)
    drops the entry."""

    model_config = ConfigDict(extra="forbid")

    x: Coordinate | None
    y: Coordinate | None


class Positions(RootModel[dict[NodeId, Point | tuple[Coordinate | None, Coordinate | None]]]):
    """`PUT /api/graph/positions` body: `{id: {x, y}}` (or `{id: [x, y]}`); unknown ids and
    entries with a null coordinate are skipped, coordinates clamped to ±1e6. A coordinate that is
    not a number or null (`false`, `"1"`) is a 400 naming the entry."""

    @model_validator(mode="before")
    @classmethod
    def _numbers_only(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                coords = (
                    value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
                )
                if any(not _number_or_null(c) for c in coords):
                    shown = json.dumps(value)[:80]
                    raise ValueError(
                        f"position {json.dumps(key)[:80]} is {shown}; a position is "
                        '{"x": number, "y": number} or [x, y] (a null coordinate drops it)'
                    )
        return data


def _number_or_null(value: object) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


UpTo1000 = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0, le=1000)]
UpTo1 = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0, le=1)]
"""Render settings' numbers (strict: `true` is not 1)."""


class RenderSettingsUpdate(BaseModel):
    """`PUT /api/graph/settings` body: only the keys that change (null is not a value)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    # `SkipJsonSchema[None]`: a key is optional, but null is refused (`_no_nulls`), so the
    # published schema has no null either.
    labels: StrictBool | SkipJsonSchema[None] = None
    hulls: StrictBool | SkipJsonSchema[None] = None
    labelZoom: UpTo1000 | SkipJsonSchema[None] = Field(
        default=None, description="zoom at which labels are full"
    )
    nodeSize: UpTo1000 | SkipJsonSchema[None] = Field(default=None, description="node radius in pixels")
    linkOpacity: UpTo1 | SkipJsonSchema[None] = None

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = sorted(str(k) for k, v in data.items() if v is None)
            if nulls:
                raise ValueError(f"{', '.join(nulls)}: null is not a setting; leave the key out instead")
        return data


class DeleteRequest(BaseModel):
    """`POST /api/graph/delete`: proposition (`n_`) and implication (`arg_`) ids."""

    ids: list[str] = Field(min_length=1, max_length=10_000)


class GraphQuery(BaseModel):
    """`GET /api/graph` query: which form of the view, and for the compact form, the version the
    reader holds."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["full", "compact"] = Field(
        default="full",
        description="full: `{nodes, links, clusters, folders}` (objects); compact: rows as arrays, "
        "without what the reader derives (`core.library.view_compact.compact_bytes`), with a version",
    )
    since: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{1,32}-[0-9]{1,18}$",
        description="compact only: the version the reader holds; the answer is what changed since "
        '(`"full": false`), or the whole compact view (`"full": true`) when the server cannot tell',
    )

    @model_validator(mode="after")
    def _since_is_compact(self) -> GraphQuery:
        if self.since is not None and self.format != "compact":
            raise ValueError("since works with format=compact only")
        return self


@router.get("/api/graph", responses=errors(400, 503))
async def graph(services: ServicesDep, query: Annotated[GraphQuery, Query()]) -> Response:
    """`{nodes, links, clusters, folders}`: propositions, implication nodes (one per stored
    chain), arrows premise → implication → conclusion, birth-session clusters. With
    `format=compact`: the same in about a quarter of the bytes, with a `version`; adding
    `since=<version>` answers only the rows changed since (issue 17 item 5). A pure read (cached
    while the ledgers are unchanged). A malformed `since` is a 400; one the server no longer
    knows gets the whole compact view. A derivation runs in a worker thread (`read_json`)."""
    body = await services.graph.read_json(query.format == "compact", query.since)
    return Response(body, media_type="application/json")


@router.get("/api/graph/clusters", responses=errors(503))
async def graph_clusters(services: ServicesDep) -> dict[str, Any]:
    """Every birth-session group, any size: `{key, kind, label|null, nodeIds, nodeCount}`."""
    return {"clusters": services.graph.clusters()}


@router.put("/api/graph/positions", max_body_size=MAX_POSITIONS_BODY, responses=errors(400, 413, 503))
async def put_positions(body: Positions, services: ServicesDep) -> dict[str, Any]:
    """Commit dragged positions `{id: {x, y}}` (sanitized); `{"saved": n}`."""
    raw = {key: (p.x, p.y) if isinstance(p, Point) else p for key, p in body.root.items()}
    return {"saved": services.graph.put_positions(raw)}


@router.get("/api/graph/settings", responses=errors(503))
async def get_render_settings(services: ServicesDep) -> dict[str, Any]:
    return {"settings": services.graph.render_settings()}


@router.put("/api/graph/settings", responses=errors(400, 413, 503))
async def put_render_settings(body: RenderSettingsUpdate, services: ServicesDep) -> dict[str, Any]:
    """Render settings persisted on the server (labels, hulls, labelZoom, nodeSize, linkOpacity)."""
    return {"settings": services.graph.put_render_settings(body.model_dump(exclude_unset=True))}


@router.post("/api/graph/delete", responses=errors(400, 404, 409, 413, 503))
async def delete_nodes(body: DeleteRequest, services: ServicesDep) -> dict[str, Any]:
    """Full death: a proposition takes every chain referencing it; an implication id takes exactly
    its chain. 409 while an extraction of an involved source runs; 404 when nothing matches."""
    return await services.graph.delete(body.ids)
