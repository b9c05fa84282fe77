"""Search everything (issue 31 item 5; decision 0044): `GET /api/search?q=...&limit=`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.core.machine_room.search import MAX_QUERY_CHARS

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


class SearchQuery(BaseModel):
    """`GET /api/search` query."""

    model_config = ConfigDict(extra="forbid")

    q: str = Field(
        max_length=MAX_QUERY_CHARS,
        description="the learner's words: every word must match (the last also as a prefix); "
        "quotes, `*`, `AND`, `NEAR` and the like are plain text, never query syntax",
    )
    limit: int = Field(default=20, ge=1, le=100, description="at most this many results")


@router.get("/api/search", responses=errors(400))
async def search(services: ServicesDep, query: Annotated[SearchQuery, Query()]) -> dict[str, Any]:
    """`{query, complete, results: [{kind, id, target, label, href, snippet: [{text, match}]}]}`,
    best first, across lesson titles and messages, propositions (name, aliases, statement) and practice sets
    (title, note, problems). `kind`: lesson, message, proposition, practice or problem; `href`:
    where the page opens it (`/chat/{id}?m={message id}`, `/?node={id}`,
    `/practice/{id}?problem={problem id}`). The index is brought up to date with the records first
    (in a worker thread); `complete` is false while an empty index is still being filled
    (the answer is what is indexed so far); a q longer than 200 characters or a limit outside
    1-100 is a 400."""
    return await run_in_threadpool(services.search.search, query.q, query.limit)
