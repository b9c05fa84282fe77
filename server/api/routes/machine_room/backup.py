"""Back up and restore the data dir (issue 31 item 4; decision 0041):
`GET /api/backup` (the archive, a download), `POST /api/backup/check` (an uploaded archive checked:
what it holds and what restoring it replaces), `POST /api/backup/restore` (the checked archive
staged for the next start), `GET /api/backup/restore` (a restore waiting for that start)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from starlette.background import BackgroundTask
from starlette.datastructures import UploadFile

from server.api.bodies import BadBody, StrictRoute, inline_schema, request_body
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.services.machine_room.backup import MAX_ARCHIVE_BYTES

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


class ArchiveUpload(BaseModel):
    """`POST /api/backup/check` multipart body: `archive`, a backup this app wrote (a zip)."""

    archive: bytes


class RestoreBody(BaseModel):
    """`POST /api/backup/restore` body: the token `POST /api/backup/check` answered, and the
    learner's yes to what it said the restore replaces."""

    token: str = Field(pattern=r"^bk_[0-9a-f]{16}$")
    confirmed: Literal[True]


ZIP: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}}
}


@router.get("/api/backup", response_class=FileResponse, responses={**ZIP, **errors(503)})
async def backup(services: ServicesDep) -> FileResponse:
    """The whole data dir as one zip (lessons, graph ledgers, practice sets, Workbench jobs, the
    accepted queue, settings without secrets; never keys or subscription sign-ins), written while
    the server runs; a download named `learning-harness-backup-<UTC time>.zip`. Its
    `lh-backup.json` lists every file (size, SHA-256), the counts, and any unreadable record left
    out."""
    archive, _ = await services.backup.create()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d-%H%M%S")
    return FileResponse(
        archive,
        media_type="application/zip",
        filename=f"learning-harness-backup-{stamp}.zip",
        background=BackgroundTask(services.backup.discard, archive),
    )


@router.post(
    "/api/backup/check",
    max_body_size=MAX_ARCHIVE_BYTES,
    responses=errors(400, 413),
    openapi_extra=request_body({"multipart/form-data": inline_schema(ArchiveUpload)}),
)
async def check(request: Request, services: ServicesDep) -> dict[str, Any]:
    """Check an archive (multipart field `archive`) without changing anything: `{token, backup:
    {createdAt, app, version, counts, skipped}, current: counts, replaces: [line], keeps: [line]}`
    (`counts`: `{lessons, propositions, practiceSets, jobs, settings}`). 400 `archive_refused`
    with the reason: not one of ours, damaged or cut short, from a newer version, a path leaving
    the data dir (`../`, absolute, a link), a ledger line or record that does not parse, an id
    twice; 400 `bad_request` without the field."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise BadBody("send the archive as multipart/form-data field 'archive'")
    form = await request.form(max_files=1, max_fields=4)
    upload = form.get("archive")
    if not isinstance(upload, UploadFile):
        raise BadBody("send the archive as multipart/form-data field 'archive' (a file)")
    try:
        return await services.backup.check(upload.file)
    finally:
        await upload.close()


@router.post("/api/backup/restore", status_code=202, responses=errors(400, 413))
async def restore(body: RestoreBody, services: ServicesDep) -> dict[str, Any]:
    """Stage the checked archive: `{staged: true, restartRequired: true, backup}`. It replaces the
    data dir's records at the server's next start; what it replaces is moved to
    `restore/replaced-<time>/` in the data dir, not deleted. 400 `restore_unknown` for a token the
    last check did not answer, 400 `archive_refused` when the archive no longer passes."""
    return await services.backup.restore(body.token)


@router.get("/api/backup/restore")
async def staged(services: ServicesDep) -> dict[str, Any]:
    """`{staged: null}`, or `{staged: backup}` when a restore waits for the next start."""
    return services.backup.staged()
