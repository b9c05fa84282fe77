"""The Library's HTTP surface: the notes front door and the activity feed (seed §6)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from server.api.bodies import StrictRoute, inline_schema, json_body, request_body
from server.api.deps import ServicesDep
from server.core.notes import MAX_NOTE_BYTES, FolderRefused

router = APIRouter(route_class=StrictRoute)
MAX_FILES = 200
MAX_IMPORT_BODY = MAX_FILES * MAX_NOTE_BYTES + 1_000_000
"""Largest multipart import body: every file at its limit plus the framing (files over 1 MB are
spooled to disk while the body streams in, so memory stays low)."""
MAX_FOLDER_BODY = 64_000
"""Largest JSON import body (`{"path": folder}`), counted while it streams in."""


class FolderImport(BaseModel):
    """`POST /api/graph/import` JSON body: an absolute path to a folder of notes inside the
    learner's home (or `library.importRoots`); system folders are refused."""

    path: str = Field(min_length=1, max_length=4096, pattern=r"^[^\x00]*$")


class FilesImport(BaseModel):
    """`POST /api/graph/import` multipart body: one or more `files` (.md/.markdown/.txt, ≤ 2 MB
    each, at most 200); each file's name (or relative path) names its source."""

    files: list[bytes] = Field(min_length=1, max_length=MAX_FILES)


class AbortRequest(BaseModel):
    """`POST /api/activity/abort` body: the source whose run to stop (abort is source-wide)."""

    source: str = Field(min_length=1)


@router.post(
    "/api/graph/import",
    response_model=None,
    max_body_size=MAX_IMPORT_BODY,
    openapi_extra=request_body(
        {"multipart/form-data": inline_schema(FilesImport), "application/json": inline_schema(FolderImport)}
    ),
)
async def import_notes(request: Request, services: ServicesDep) -> JSONResponse:
    """Import notes: multipart `files` (.md/.markdown/.txt; the filename, or its relative path,
    names the source), or JSON `{"path": "/abs/folder"}`. 202 `{"files": [...]}` with each file's
    status (queued / unchanged / refused + why); 400 when every file is refused or the request is
    malformed; 403 `folder_not_allowed` for a folder outside the import roots or a system folder,
    403 `folder_unreadable` for one that cannot be read."""
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        form = await request.form(max_files=MAX_FILES)
        uploads = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
        if not uploads:
            return _refused("send the notes as multipart field 'files'", [])
        files = []
        for upload in uploads:
            data = await upload.read(MAX_NOTE_BYTES + 1)
            files.append((upload.filename or "untitled.md", data))
        results = services.library.import_files(files)
    elif content_type.startswith("application/json"):
        body = FolderImport.model_validate(await json_body(request, MAX_FOLDER_BODY))
        try:
            read, refused = await run_in_threadpool(services.library.collect_folder, body.path)
        except FolderRefused as exc:
            return JSONResponse({"error": exc.code, "detail": str(exc), "files": []}, status_code=exc.status)
        results = refused + services.library.import_files(read)
    else:
        return _refused("send multipart/form-data with 'files', or JSON {\"path\": folder}", [])
    views = [r.view() for r in results]
    if results and all(r.status == "refused" for r in results):
        detail = "; ".join(r.detail for r in results[:5])
        return _refused(f"nothing was imported: {detail}", views)
    return JSONResponse({"files": views}, status_code=202)


def _refused(detail: str, files: list[dict[str, Any]]) -> JSONResponse:
    return JSONResponse({"error": "refused", "detail": detail, "files": files}, status_code=400)


@router.get("/api/activity")
async def activity(services: ServicesDep) -> dict[str, Any]:
    """Background jobs, one row each: phase, `source · i/N` label, usage, error."""
    return {"rows": services.extraction.activity()}


@router.post("/api/activity/abort")
async def abort(body: AbortRequest, services: ServicesDep) -> dict[str, Any]:
    """Abort a source's extraction (source-wide); `{"aborted": bool}`."""
    return {"aborted": services.extraction.abort(body.source)}


@router.get("/api/graph/sources")
async def sources(services: ServicesDep) -> dict[str, Any]:
    """The graph's birth sessions (lessons and notes files) with proposition counts."""
    return {"sources": services.library.sessions()}
