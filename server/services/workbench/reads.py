"""The Workbench's reads over HTTP (seed §5.1): a session's job records, and a finished demo's page.
The job runner stays the job store's only writer; these only read it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.core.contracts.jobs import DemoArtifact
from server.core.ports import JobStore
from server.core.refusals import Refused

MAX_JOB_ID = 100
"""A longer id is no job's (the store is not asked)."""


class JobReads:
    """Args:
    jobs: the job store port (read only).
    session: `session(chat_id)` raises Refused(not_found) for an unknown session
        (`ChatService.get`); its return value is not used.
    """

    def __init__(self, jobs: JobStore, session: Callable[[str], object]) -> None:
        self.jobs = jobs
        self.session = session

    def of_session(self, chat_id: str) -> list[dict[str, Any]]:
        """The session's jobs, oldest first, as the wire's JobRecord objects (camelCase): kind,
        input, worker status, result, usage and delivery. Raises Refused(not_found) for an unknown
        session; StoreCorrupt when its record is unreadable."""
        self.session(chat_id)
        return [job.model_dump(mode="json", by_alias=True) for job in self.jobs.list(chat_id)]

    def demo(self, job_id: str) -> DemoArtifact:
        """A finished demo's artifact (its self-contained HTML). Raises Refused(not_found) when the
        job does not exist or holds no finished demo; StoreCorrupt when its record is unreadable."""
        job = self.jobs.get(job_id) if len(job_id) <= MAX_JOB_ID else None
        artifact = job.result.artifact if job is not None and job.result is not None else None
        if not isinstance(artifact, DemoArtifact):
            raise Refused("not_found", "not_found", "no finished demo with this id; it may have been deleted")
        return artifact
