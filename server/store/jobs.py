"""Workbench job records in `data/jobs/<id>.json` (implements core.ports.JobStore).

One file per job, replaced atomically; written only by the job runner (seed §4). `update` is a
read-modify-write under the job's own lock, so the worker's outcome and a delivery
acknowledgement never lose each other's writes. A file that is not a valid job is skipped by
`list` and refused by `get` with StoreCorrupt, never deleted."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from server.core.contracts.jobs import JobRecord
from server.core.ports import StoreCorrupt
from server.store.atomic import read_json, write_json_atomic

log = logging.getLogger("lh.store.jobs")
JOB_ID = re.compile(r"^job_[A-Za-z0-9_-]{1,80}$")


class FileJobStore:
    """Args: root: the jobs directory (created on first save)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _path(self, job_id: str) -> Path:
        if not JOB_ID.match(job_id):
            raise ValueError(f"not a job id: {job_id!r}")
        return self.root / f"{job_id}.json"

    def _lock(self, job_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(job_id, threading.Lock())

    def get(self, job_id: str) -> JobRecord | None:
        """The job, or None. Raises StoreCorrupt when its file is unreadable (left untouched)."""
        try:
            path = self._path(job_id)
        except ValueError:
            return None
        try:
            data = read_json(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(f"{path}: {exc}") from exc
        try:
            return JobRecord.model_validate(data)
        except ValidationError as exc:
            raise StoreCorrupt(f"{path}: not a job record ({exc.error_count()} problems)") from exc

    def save(self, job: JobRecord) -> None:
        """Replace the job atomically. OSError propagates (a canonical write fails loudly)."""
        with self._lock(job.id):
            write_json_atomic(self._path(job.id), job.model_dump(mode="json", by_alias=True))

    def update(self, job_id: str, change: Callable[[JobRecord], JobRecord | None]) -> JobRecord | None:
        """Read, change, write under the job's lock. `change` returns the new record (None: no
        write). Returns what was written, or None when nothing was (gone, or no change)."""
        with self._lock(job_id):
            current = self.get(job_id)
            if current is None:
                return None
            changed = change(current)
            if changed is None:
                return None
            write_json_atomic(self._path(job_id), changed.model_dump(mode="json", by_alias=True))
            return changed

    def list(self, chat_id: str | None = None) -> list[JobRecord]:
        """Every readable job, oldest first (of one session when `chat_id` is given)."""
        if not self.root.is_dir():
            return []
        out = []
        for path in sorted(self.root.glob("job_*.json")):
            try:
                found = self.get(path.stem)
            except StoreCorrupt as exc:
                log.warning("skipping a job record: %s", exc)
                continue
            if found is not None and (chat_id is None or found.chat_id == chat_id):
                out.append(found)
        out.sort(key=lambda j: j.created_at)
        return out

    def delete(self, job_id: str) -> bool:
        """Remove the job's file; False when it did not exist."""
        try:
            path = self._path(job_id)
        except ValueError:
            return False
        with self._lock(job_id):
            try:
                path.unlink()
            except FileNotFoundError:
                return False
        return True
