"""Workbench job records in `data/jobs/<id>.json` (implements core.ports.JobStore).

One file per job, written only by the job runner (seed §4); `update` is a read-modify-write
under the job's own lock, so the worker's outcome and a delivery acknowledgement never lose each
other's writes (`store/records.py`)."""

from __future__ import annotations

import re
from pathlib import Path

from server.core.contracts.jobs import JobRecord
from server.store.records import RecordFiles

JOB_ID = re.compile(r"^job_[A-Za-z0-9_-]{1,80}$")


class FileJobStore(RecordFiles[JobRecord]):
    """Args: root: the jobs directory (created on first save)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, JobRecord, JOB_ID, "job record")

    def list(self, chat_id: str | None = None) -> list[JobRecord]:
        """Every readable job, oldest first (of one session when `chat_id` is given)."""
        jobs = [j for j in self._all("job_") if chat_id is None or j.chat_id == chat_id]
        return sorted(jobs, key=lambda j: j.created_at)
