"""The JobStore fake: in memory, recording every write (cosmicpython style)."""

from __future__ import annotations

from collections.abc import Callable

from server.core.contracts.jobs import JobRecord


class FakeJobStore:
    """In-memory JobStore; `writes` holds every record written, in order."""

    def __init__(self) -> None:
        self.records: dict[str, JobRecord] = {}
        self.writes: list[JobRecord] = []

    def get(self, job_id: str) -> JobRecord | None:
        found = self.records.get(job_id)
        return found.model_copy(deep=True) if found else None

    def save(self, job: JobRecord) -> None:
        self.records[job.id] = job.model_copy(deep=True)
        self.writes.append(job.model_copy(deep=True))

    def update(self, job_id: str, change: Callable[[JobRecord], JobRecord | None]) -> JobRecord | None:
        current = self.get(job_id)
        if current is None:
            return None
        changed = change(current)
        if changed is None:
            return None
        self.save(changed)
        return changed

    def list(self, chat_id: str | None = None) -> list[JobRecord]:
        return sorted(
            (j for j in self.records.values() if chat_id is None or j.chat_id == chat_id),
            key=lambda j: j.created_at,
        )

    def delete(self, job_id: str) -> bool:
        return self.records.pop(job_id, None) is not None
