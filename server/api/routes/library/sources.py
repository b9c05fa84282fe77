"""The Library's HTTP surface: the notes front door, the activity feed, a lesson's coverage and
its explicit flush, and the Library's settings (seed §6)."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, TypeAdapter, ValidationError, model_validator
from starlette.datastructures import UploadFile

from server.api.bodies import BadBody, StrictRoute, inline_schema, json_body, request_body
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors, refused
from server.core.contracts.models import CHUNK_TOKENS_FLOOR, IDLE_SECONDS_FLOOR
from server.core.library.notes import MAX_NOTE_BYTES, FolderRefused
from server.services.library.folders import MAX_FOLDER_FILES
from server.services.library.imports import NameChoice

router = APIRouter(route_class=StrictRoute, responses=GUARDED)
MAX_FILES = 200
MAX_IMPORT_BODY = MAX_FILES * MAX_NOTE_BYTES + 1_000_000
"""Largest multipart import body: every file at its limit plus the framing (files over 1 MB are
spooled to disk while the body streams in, so memory stays low)."""
IMPORT_ID = re.compile(r"imp_[0-9a-f]{12}")
"""An import id as `POST /api/graph/import` answers it (`importId`); a later page of one pick sends
it back (multipart field `importId`) so its files join the same summary row."""
MAX_FOLDER_BODY = 64_000
"""Largest JSON import body (`{"path": folder}`), counted while it streams in."""


class FolderImport(BaseModel):
    """`POST /api/graph/import` JSON body: an absolute path to a folder of notes inside the
    learner's home (or `library.importRoots`); system folders are refused."""

    path: str = Field(min_length=1, max_length=4096, pattern=r"^[^\x00]*$")


class NameDecision(BaseModel):
    """The learner's answer for a single file the import answered `ask` (its name matches a note
    of the graph with other content): `replace` the note `sourceId` (one of the answer's
    `sameName`), or import it as a `new` note (no `sourceId`)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=4096)
    choice: Literal["replace", "new"]
    sourceId: str | None = Field(default=None, pattern=r"^src_[0-9a-f]{16}$")

    @model_validator(mode="after")
    def _target(self) -> NameDecision:
        if (self.choice == "replace") != (self.sourceId is not None):
            raise ValueError("'replace' names the note it replaces (sourceId); 'new' names none")
        return self


NAME_DECISIONS = TypeAdapter(list[NameDecision])


class FilesImport(BaseModel):
    """`POST /api/graph/import` multipart body: one or more `files` (.md/.markdown/.txt, ≤ 2 MB
    each, at most 200 per request: the UI sends a bigger pick in pages); each file's name (or
    relative path) names its source. `importId`: the answer's id from an earlier page of the same
    pick, so the pages share one summary row in the feed (an unknown one starts a new import).
    `decisions`: JSON, a list of `NameDecision` (at most one per file, naming a file sent in this
    request): the learner's answers for single files an earlier answer asked about."""

    files: list[bytes] = Field(min_length=1, max_length=MAX_FILES)
    importId: str | None = Field(default=None, pattern=r"^imp_[0-9a-f]{12}$")
    decisions: str | None = Field(default=None, description="JSON list of NameDecision")


FolderName = Annotated[str, Field(min_length=1, max_length=1024, pattern=r"^[^/\\\x00]+$")]
"""A picked folder's name as the upload names start ("vault" for "vault/sub/a.md"): no slash."""
SourceId = Annotated[str, Field(pattern=r"^src_[0-9a-f]{16}$")]


class GoneQuery(BaseModel):
    """`POST /api/graph/import/gone` body: after a folder is picked again in the browser, the
    picked `folders` (their names, as the upload names start: "vault" for "vault/a.md") and
    every notes file the pick found in them (`present`, upload names, sent or not: a file left
    out for its size is still there)."""

    model_config = ConfigDict(extra="forbid")

    folders: list[FolderName] = Field(min_length=1, max_length=100)
    present: list[str] = Field(default_factory=list, max_length=MAX_FOLDER_FILES)


class RemoveNotes(BaseModel):
    """`POST /api/graph/import/remove` body: the learner's one confirmation to take out what the
    listed notes said (`sources`: source ids, as `/api/graph/import/gone` listed them).
    `importId`: the pick's import, so its summary row counts them as removed."""

    model_config = ConfigDict(extra="forbid")

    sources: list[SourceId] = Field(min_length=1, max_length=MAX_FOLDER_FILES)
    importId: str | None = Field(default=None, pattern=r"^imp_[0-9a-f]{12}$")


MAX_GONE_BODY = 16_000_000
"""Largest `/api/graph/import/gone` body: a vault's worth of upload names."""
MAX_REMOVE_BODY = 4_000_000
"""Largest `/api/graph/import/remove` body."""


class AbortRequest(BaseModel):
    """`POST /api/activity/abort` body: the source whose run to stop (abort is source-wide)."""

    source: str = Field(min_length=1)


@router.post(
    "/api/graph/import",
    response_model=None,
    max_body_size=MAX_IMPORT_BODY,
    status_code=202,
    responses=errors(400, 403, 413, 503),
    openapi_extra=request_body(
        {"multipart/form-data": inline_schema(FilesImport), "application/json": inline_schema(FolderImport)}
    ),
)
async def import_notes(request: Request, services: ServicesDep) -> JSONResponse:
    """Import notes: multipart `files` (.md/.markdown/.txt; the filename, or its relative path,
    names the source), or JSON `{"path": "/abs/folder"}` (any number of notes files: the walk and
    the reads run in worker threads, page by page). 202 `{"files": [...], "importId"}` with each file's
    status (queued / unchanged / refused + why; `ask` + `sameName` for a single file whose name
    matches a note with other content: nothing done until `decisions` answers it; for a folder
    also `removed`: a file imported from it before that is gone now, its knowledge retired;
    `replaces` says when a file replaces what an earlier version said); 400 when every file is
    refused or the request is malformed; 403 `folder_not_allowed` for a folder outside the import
    roots or a system folder, 403 `folder_unreadable` for one that cannot be read."""
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        form = await request.form(max_files=MAX_FILES)
        uploads = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
        if not uploads:
            return _refused("send the notes as multipart field 'files'", [])
        given = form.get("importId")
        files = [
            (upload.filename or "untitled.md", await upload.read(MAX_NOTE_BYTES + 1)) for upload in uploads
        ]
        choices = _choices(form.get("decisions"), [name for name, _ in files])
        outcome = await services.library.import_picked(
            files, given if isinstance(given, str) and IMPORT_ID.fullmatch(given) else None, choices
        )
    elif content_type.startswith("application/json"):
        body = FolderImport.model_validate(await json_body(request, MAX_FOLDER_BODY))
        try:
            outcome = await services.library.import_chosen_folder(body.path)
        except FolderRefused as exc:
            return refused(exc, files=[])
    else:
        return _refused("send multipart/form-data with 'files', or JSON {\"path\": folder}", [])
    views = [r.view() for r in outcome.results]
    refusal = outcome.refusal()
    if refusal is not None:
        return _refused(refusal, views, outcome.import_id)
    return JSONResponse({"files": views, "importId": outcome.import_id}, status_code=202)


def _choices(raw: object, names: list[str]) -> dict[str, NameChoice]:
    """The multipart field `decisions` (JSON list of `NameDecision`) as choices by file name.
    Raises BadBody (400 bad_request, in plain words): not such a list, two answers for one file,
    or an answer for a file this request does not send."""
    if raw is None:
        return {}
    if not isinstance(raw, str):
        raise BadBody("'decisions' is a JSON text field, not a file")
    try:
        decisions = NAME_DECISIONS.validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadBody(f"'decisions' is not a list of answers ({where}: {first['msg']})") from None
    choices: dict[str, NameChoice] = {}
    for d in decisions:
        if d.name in choices:
            raise BadBody(f"'decisions' answers {d.name} twice; send one answer per file")
        if d.name not in names:
            raise BadBody(f"'decisions' answers {d.name}, which this request does not send")
        choices[d.name] = NameChoice(d.choice, d.sourceId)
    return choices


def _refused(detail: str, files: list[dict[str, Any]], import_id: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": "refused", "detail": detail, "files": files}
    if import_id is not None:
        body["importId"] = import_id
    return JSONResponse(body, status_code=400)


@router.post("/api/graph/import/gone", max_body_size=MAX_GONE_BODY, responses=errors(400, 413, 503))
async def gone_notes(body: GoneQuery, services: ServicesDep) -> dict[str, Any]:
    """After a folder is picked again in the browser: the notes imported from it before that it
    holds no more (deleted, renamed or moved), `{"gone": [{"sourceId", "path", "title",
    "propositions"}]}`; what they said is still in the graph. Changes nothing: the page lists
    them and asks once (`POST /api/graph/import/remove`)."""
    return {"gone": await asyncio.to_thread(services.library.gone_notes, body.folders, body.present)}


@router.post("/api/graph/import/remove", max_body_size=MAX_REMOVE_BODY, responses=errors(400, 413, 503))
async def remove_notes(body: RemoveNotes, services: ServicesDep) -> dict[str, Any]:
    """Take out what the listed notes said, on the learner's confirmation: `{"files": [...],
    "importId"}`, each `removed` (its knowledge is retired in the background, no model call),
    `refused` (not a notes file of the graph), `running` (being imported: left as it is) or
    `unchanged` (nothing of it was left)."""
    outcome = services.library.remove_notes(body.sources, body.importId)
    return {"files": [r.view() for r in outcome.results], "importId": outcome.import_id}


@router.get("/api/graph/lessons/{chat_id}", responses=errors(404, 503))
async def lesson_knowledge(chat_id: str, services: ServicesDep) -> dict[str, Any]:
    """What a lesson taught that is in the graph, for its delete dialog (issue 29):
    `{"sourceId", "propositions", "reading"}` (`propositions` 0 when it never was read in). It
    stays when the lesson is deleted unless the learner also asks to remove it."""
    return await asyncio.to_thread(services.library.lesson_knowledge, chat_id)


class RemoveLesson(BaseModel):
    """`POST /api/graph/lessons/{chat_id}/remove` body: the learner's explicit choice, ticked in
    the lesson's delete dialog ("Also remove what it taught from my graph"): `{"confirmed": true}`."""

    model_config = ConfigDict(extra="forbid")

    confirmed: Literal[True]


@router.post("/api/graph/lessons/{chat_id}/remove", responses=errors(400, 404, 413, 503))
async def remove_lesson_knowledge(chat_id: str, body: RemoveLesson, services: ServicesDep) -> dict[str, Any]:
    """Take what a lesson taught out of the graph, as the learner chose when deleting it: the
    result `{"name", "sourceId", "status", "detail", ...}` with status `removed` (retired in the
    background, no model call), `refused` (not a lesson in the graph), `running` (it is being
    read into the graph: nothing removed) or `unchanged` (nothing of it was left)."""
    return services.library.remove_lesson(chat_id).view()


@router.get("/api/activity", responses=errors(503))
async def activity(services: ServicesDep) -> dict[str, Any]:
    """Background jobs (extraction, practice and computing Workbench workers), one row each,
    newest first: phase, label, usage, error; and `pending`: lessons whose new prose waits for a
    trigger (`flushAt` when they go idle, or `waitingFor` a turn or a run)."""
    rows = [*services.extraction.activity(), *services.practice.activity(), *services.jobs.activity()]
    rows.sort(key=lambda r: r["queuedAt"], reverse=True)
    return {"rows": rows, "pending": services.library.pending()}


class FlushRequest(BaseModel):
    """`POST /api/chats/{id}/graph` body (optional): why the lesson is added now — the learner
    asked (`explicit`, the default) or left the lesson (`leave`)."""

    model_config = ConfigDict(extra="forbid")

    trigger: Literal["explicit", "leave"] = "explicit"


class LibrarySettingsUpdate(BaseModel):
    """`PUT /api/library/settings` body: any of the Library's settings (omitted ones are kept).

    - `extractionChunkTokens`: a lesson is read into the graph at once when this much of its
      teacher prose is new; also the size of each extraction job (500 to 200,000 tokens).
    - `lessonIdleSeconds`: after this long without a turn a lesson's new prose is read anyway
      (30 s to a week).
    - `graphTools`: whether the teacher may look at your graph (`agent.graphTools`).
    - `graphEnabled`: whether lessons use the graph at all (`graph.enabled`, seed §6); off, the
      teacher is not given the graph tools whatever `graphTools` says (decision 0030).
    """

    model_config = ConfigDict(extra="forbid")

    extraction_chunk_tokens: int | None = Field(
        default=None, alias="extractionChunkTokens", ge=CHUNK_TOKENS_FLOOR, le=200_000
    )
    lesson_idle_seconds: float | None = Field(
        default=None, alias="lessonIdleSeconds", ge=IDLE_SECONDS_FLOOR, le=7 * 24 * 3600
    )
    graph_tools: StrictBool | None = Field(default=None, alias="graphTools")
    graph_enabled: StrictBool | None = Field(default=None, alias="graphEnabled")


@router.get("/api/chats/{chat_id}/coverage", responses=errors(404, 503))
async def lesson_coverage(chat_id: str, services: ServicesDep) -> dict[str, Any]:
    """How much of the lesson's teacher prose is in the graph: covered / uncovered tokens and
    messages, the budget, the lesson's running jobs, and its pending flush (`flushAt` when it goes
    idle, or `waitingFor` a turn or a run); 404 chat_not_found."""
    services.chats.get(chat_id)
    return services.library.coverage(chat_id)


@router.post(
    "/api/chats/{chat_id}/graph",
    response_model=None,
    responses={202: {"description": "Started, running or deferred"}, **errors(400, 404, 413, 503)},
)
async def add_lesson_to_graph(
    chat_id: str, services: ServicesDep, body: FlushRequest | None = None
) -> JSONResponse:
    """Read the lesson's uncovered teacher prose into the graph now, whatever its size. 202
    `{"status": "started" | "running" | "deferred", "detail", "coverage"}` (running: a run is going,
    the rest follows it; deferred: a turn is running, it happens when the reply ends); 200 with
    `covered` (nothing new) or `empty` (no teacher prose yet); 404 chat_not_found."""
    services.chats.get(chat_id)
    outcome = services.library.flush(chat_id, body.trigger if body else "explicit")
    status = 202 if outcome.status in ("started", "running", "deferred") else 200
    return JSONResponse(
        {"status": outcome.status, "detail": outcome.detail, "coverage": services.library.coverage(chat_id)},
        status_code=status,
    )


@router.get("/api/library/settings", responses=errors(503))
async def library_settings(services: ServicesDep) -> dict[str, Any]:
    """`{"extractionChunkTokens", "lessonIdleSeconds", "graphTools", "graphEnabled"}` as they
    apply now."""
    return services.library.settings_view()


@router.put("/api/library/settings", responses=errors(400, 413, 503))
async def put_library_settings(body: LibrarySettingsUpdate, services: ServicesDep) -> dict[str, Any]:
    """Change the Library's settings (`graph.extractionChunkTokens`, `graph.lessonIdleSeconds`,
    `agent.graphTools`, `graph.enabled`); other settings are kept. Answers the settings as they
    now apply."""
    return services.library.update_settings(
        extraction_chunk_tokens=body.extraction_chunk_tokens,
        lesson_idle_seconds=body.lesson_idle_seconds,
        graph_tools=body.graph_tools,
        graph_enabled=body.graph_enabled,
    )


@router.post("/api/activity/abort", responses=errors(400, 413))
async def abort(body: AbortRequest, services: ServicesDep) -> dict[str, Any]:
    """Abort a row's run: a Workbench worker (`job_…`), an extraction source (source-wide), or a
    practice row by its shape
    (`<set>:partition` the whole generation, `<set>:gen:<p>` that problem, `<set>:grade:<p>` that
    grade); `{"aborted": bool}`."""
    if body.source.startswith("job_"):  # a Background agents row: a computing worker
        return {"aborted": services.jobs.abort(body.source)}
    if ":" in body.source:
        return {"aborted": services.practice.abort(body.source)}
    return {"aborted": services.extraction.abort(body.source)}


@router.get("/api/graph/sources", responses=errors(503))
async def sources(services: ServicesDep) -> dict[str, Any]:
    """The graph's birth sessions (lessons and notes files) with proposition counts."""
    return {"sources": services.library.sessions()}
