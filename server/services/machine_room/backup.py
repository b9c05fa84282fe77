"""Back up the whole data dir and restore a backup (issue 31 item 4; decision 0041).

Backup: one zip of the data dir's records (lessons, graph ledgers, practice sets, Workbench jobs,
the accepted queue, settings without secrets), written while the server runs. The graph's files are
opened inside the graph's merge section (every commit and deletion holds it), so the graph in the
archive is one state of it; the section is released before the archive is written (the files stay
open). Lessons, sets and jobs are opened one at a time under their store's lock
(`server.store.machine_room.backup`).

Restore, in two steps: `check` takes an uploaded archive, checks it through (ours, its version,
every path inside the data dir, every ledger line and record parsing, ids unique, sizes and
checksums) and answers what it holds and what it would replace, with a token; nothing is changed.
`restore(token)` stages it; the server applies it at its next start, moving the replaced data
aside (`restore/replaced-<time>/`). A refused archive changes nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from server.core.clock import NewId
from server.core.machine_room.backup import ArchiveRefused, BackupStore, Counts, Manifest, replaced
from server.core.refusals import Refused

MAX_ARCHIVE_BYTES = 8 * 2**30
"""Largest archive a restore accepts (bytes)."""

KEPT = (
    "Your API keys and subscription sign-ins stay as they are: a backup never holds them.",
    "Logs and derived caches are rebuilt from the restored records.",
)


@dataclass(frozen=True)
class Checked:
    """An uploaded archive that passed every check, waiting for the learner's yes."""

    token: str
    archive: Path
    manifest: Manifest


class BackupService:
    """Args:
    files: the data dir's backups.
    graph_writers: the graph's merge section (held by every merge and deletion).
    clock: ISO timestamp source (`server.core.clock.utc_now`).
    new_id: mints tokens and file names.
    """

    def __init__(self, files: BackupStore, graph_writers: asyncio.Lock, clock: Any, new_id: NewId) -> None:
        self.files = files
        self.graph_writers = graph_writers
        self.clock = clock
        self.new_id = new_id
        self._checked: Checked | None = None

    async def create(self) -> tuple[Path, Manifest]:
        """Write a backup archive; returns its path (the caller sends it, then `discard`s it) and
        its manifest. Raises OSError (disk full; nothing is left behind)."""
        created = self.clock()
        target = self.files.restore_dir / f"outgoing-{self.new_id('', 12)}.zip"
        async with self.graph_writers:
            graph = await asyncio.to_thread(self.files.open_graph)
        manifest = await asyncio.to_thread(self.files.write, target, graph, created)
        return target, manifest

    def discard(self, archive: Path) -> None:
        self.files.discard(archive)

    async def check(self, upload: IO[bytes]) -> dict[str, Any]:
        """Check an uploaded archive and say what restoring it would replace.

        Returns `{token, backup: {createdAt, app, version, counts, skipped}, current: counts,
        replaces: [line], keeps: [line]}`. Raises Refused(invalid, archive_refused) with the
        reason in plain words (not ours, cut short, a newer version, a path leaving the data dir,
        a ledger that does not parse, a duplicate id); nothing is changed and the upload removed.
        """
        token = self.new_id("bk_", 16)
        try:
            archive = await asyncio.to_thread(
                self.files.receive, upload, f"upload-{token}", MAX_ARCHIVE_BYTES
            )
        except ArchiveRefused as exc:
            raise Refused("invalid", "archive_refused", str(exc)) from exc
        try:
            manifest, _ = await asyncio.to_thread(self.files.check, archive)
        except ArchiveRefused as exc:
            self.files.discard(archive)
            raise Refused("invalid", "archive_refused", str(exc)) from exc
        current = await asyncio.to_thread(self.files.inventory)
        if self._checked is not None:
            self.files.discard(self._checked.archive)
        self._checked = Checked(token, archive, manifest)
        return {
            "token": token,
            "backup": _described(manifest),
            "current": current.model_dump(by_alias=True),
            "replaces": replaced(current, manifest.counts),
            "keeps": list(KEPT),
        }

    async def restore(self, token: str) -> dict[str, Any]:
        """Stage the checked archive named by `token` for the next start.

        Returns `{staged: true, restartRequired: true, backup}`. Raises Refused(invalid,
        restore_unknown) for a token the last check did not answer, or Refused(invalid,
        archive_refused) when the archive no longer passes (it is checked again)."""
        checked = self._checked
        if checked is None or checked.token != token:
            raise Refused(
                "invalid",
                "restore_unknown",
                "this restore was not checked (or another archive was checked since): "
                "choose the archive again",
            )
        try:
            await asyncio.to_thread(self.files.stage, checked.archive)
        except ArchiveRefused as exc:
            raise Refused("invalid", "archive_refused", str(exc)) from exc
        finally:
            self._checked = None
            self.files.discard(checked.archive)
        return {"staged": True, "restartRequired": True, "backup": _described(checked.manifest)}

    def staged(self) -> dict[str, Any]:
        """`{staged: null}` or `{staged: backup}`: a restore waiting for the next start."""
        manifest = self.files.staged()
        return {"staged": _described(manifest) if manifest is not None else None}


def _described(manifest: Manifest) -> dict[str, Any]:
    counts: Counts = manifest.counts
    return {
        "createdAt": manifest.created_at,
        "app": manifest.app,
        "version": manifest.version,
        "counts": counts.model_dump(by_alias=True),
        "skipped": [s.model_dump(by_alias=True) for s in manifest.skipped],
    }
