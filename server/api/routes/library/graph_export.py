"""The graph's exports (issue 31 item 2): the whole graph, or the chain table's selection, as an
Obsidian vault (a zip) or an Anki deck (an `.apkg`), streamed as an attachment."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.api.markdown import disposition
from server.services.library.graph_export import GraphExport, apkg_stream, vault_zip

router = APIRouter(route_class=StrictRoute, responses=GUARDED)

VAULT_FILE = "Learning Harness graph.zip"
DECK_FILE = "Learning Harness graph.apkg"
MAX_SELECTION = 200_000
"""Ids in one selection's export (the chain table can select every proposition of a 100k graph)."""


def _ok(media: str, what: str) -> dict[int | str, dict[str, Any]]:
    return {
        200: {"description": what, "content": {media: {"schema": {"type": "string", "format": "binary"}}}}
    }


VAULT_OK = _ok("application/zip", "An Obsidian vault: a zip of Markdown notes (an attachment)")
DECK_OK = _ok("application/apkg", "An Anki deck package (an attachment)")


class Selection(BaseModel):
    """`POST /api/graph/export/...` body: the chain table's selection, proposition (`n_`) ids and
    chain (`arg_`) ids (a chain brings its premises and conclusion)."""

    model_config = ConfigDict(extra="forbid")

    ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        min_length=1, max_length=MAX_SELECTION
    )


def _download(blocks: Iterator[bytes], media: str, name: str) -> StreamingResponse:
    return StreamingResponse(
        blocks,
        media_type=media,
        headers={
            "content-disposition": disposition(name),
            "x-content-type-options": "nosniff",
            "cache-control": "no-store",
        },
    )


@router.get("/api/graph/export/vault.zip", response_model=None, responses={**VAULT_OK, **errors(503)})
async def export_vault(services: ServicesDep) -> StreamingResponse:
    """The whole graph as an Obsidian vault: a note per proposition (front matter id, aliases,
    sources, created; its chains as wiki links "from [[A]] and [[B]]"), a folder per source folder
    or lesson, an index note per folder (`core/library/graph_export_vault.py`). Streamed while
    written, in 64 KiB blocks."""
    part, labels, paths = await GraphExport(services.graph).part()
    return _download(vault_zip(part, labels, paths), "application/zip", VAULT_FILE)


@router.get("/api/graph/export/deck.apkg", response_model=None, responses={**DECK_OK, **errors(503)})
async def export_deck(services: ServicesDep) -> StreamingResponse:
    """The whole graph as an Anki deck: a card per proposition (name -> statement) and per chain
    (premises -> conclusion), math as MathJax, tagged by source, stable ids so importing a later
    export updates the cards (`core/library/graph_export_anki.py`). Written to a temporary file
    (removed after), then sent."""
    part, labels, _ = await GraphExport(services.graph).part()
    return _download(apkg_stream(part, labels), "application/apkg", DECK_FILE)


@router.post(
    "/api/graph/export/vault.zip",
    response_model=None,
    max_body_size=16_000_000,
    responses={**VAULT_OK, **errors(400, 404, 413, 503)},
)
async def export_selection_vault(body: Selection, services: ServicesDep) -> StreamingResponse:
    """The selection as a vault: its propositions, the members of its chains, and every chain among
    them. 404 not_found when an id is not in the graph (nothing sent)."""
    part, labels, paths = await GraphExport(services.graph).part(body.ids)
    return _download(vault_zip(part, labels, paths), "application/zip", VAULT_FILE)


@router.post(
    "/api/graph/export/deck.apkg",
    response_model=None,
    max_body_size=16_000_000,
    responses={**DECK_OK, **errors(400, 404, 413, 503)},
)
async def export_selection_deck(body: Selection, services: ServicesDep) -> StreamingResponse:
    """The selection as an Anki deck (the same deck and ids as the whole graph's). 404 not_found
    when an id is not in the graph."""
    part, labels, _ = await GraphExport(services.graph).part(body.ids)
    return _download(apkg_stream(part, labels), "application/apkg", DECK_FILE)
