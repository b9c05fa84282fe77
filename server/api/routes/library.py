"""The Library's HTTP surface: the notes front door and the activity feed (seed §6)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.datastructures import UploadFile

from server.api.deps import ServicesDep
from server.core.notes import MAX_NOTE_BYTES, NoteRefused

router = APIRouter()
MAX_FILES = 200


class FolderImport(BaseModel):
    """`POST /api/graph/import` JSON body (the desktop case): an absolute folder path."""

    path: str = Field(min_length=1)


class AbortRequest(BaseModel):
    """`POST /api/activity/abort` body: the source whose run to stop (abort is source-wide)."""

    source: str = Field(min_length=1)


@router.post("/api/graph/import", response_model=None)
async def import_notes(request: Request, services: ServicesDep) -> JSONResponse:
    """Import notes: multipart `files` (.md/.markdown/.txt; the filename, or its relative path,
    names the source), or JSON `{"path": "/abs/folder"}`. 202 `{"files": [...]}` with each file's
    status (queued / unchanged / refused + why); 400 when every file is refused."""
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
        body = FolderImport.model_validate_json(await request.body())
        try:
            results = services.library.import_folder(body.path)
        except NoteRefused as exc:
            return _refused(str(exc), [])
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
