"""The job runner (seed §5.1): the only writer of `data/jobs/*.json`.

Dispatch saves the tool input before the worker starts. On completion, the worker's status
(`done`/`error`), result, usage and `delivery: {kind: "result", status: "pending"}` are saved in
one update; then the outcome is handed to the wake pipeline without waiting for delivery. Only a
computing worker can be aborted; the abort saves status `aborted` with a pending abort notice.
Workers run under the shared background-model pool (the permits extraction and practice use).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from server.config import WORKER_DEADLINE_S
from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.jobs import (
    Delivery,
    JobKind,
    JobRecord,
    WorkerResult,
    WorkerUsage,
    steer_id,
)
from server.core.events import EventBus
from server.core.fanout import FanOut, JobOutcomeSaved
from server.core.ports import JobStore

log = logging.getLogger("lh.job")

Worker = Callable[[JobKind, dict[str, Any]], Awaitable[tuple[WorkerResult, WorkerUsage]]]
"""Runs one job's worker: (kind, tool input) -> (result, usage). Raises `WorkerError` (any
exception carrying `.usage` may) with a plain sentence for an honest failure."""

CLOSED_BEFORE_END = "the app closed before this worker finished; nothing was produced"

LABELS = {"research": "Researching", "demo": "Building a demo", "visual": "Drawing a visual"}


def _past_deadline(kind: JobKind, deadline_s: float) -> str:
    """The honest error of a worker stopped at its deadline (one plain sentence)."""
    span = f"{deadline_s / 60:g} minutes" if deadline_s >= 60 else f"{deadline_s:g} seconds"
    return f"the {kind} worker did not finish within {span}, so it was stopped; nothing was produced"


def _request_text(job: JobRecord) -> str:
    value = job.input.get("question") or job.input.get("request") or ""
    text = str(value).strip().replace("\n", " ")
    return text if len(text) <= 80 else text[:79] + "…"


class JobRunner:
    """Args:
    store: the job store port (this runner is its only writer).
    worker: runs a worker (built in the container from the model slots, search and headless).
    permits: the shared background-model pool.
    events: the browser's bus (`jobs-changed` {chatId} after every job write, `activity-changed`
        when a Background agents row comes or goes).
    fanout: publishes `JobOutcomeSaved` after an outcome is saved (the wake pipeline's intake);
        its handlers never fail the save (a delivery left pending is found by recovery).
    clock: ISO timestamp source (`server.core.clock`).
    new_id: mints job ids (`job_` + 16 hex digits).
    deadline_s: a worker's overall deadline in seconds (`WORKER_DEADLINE_S`); a worker still
        computing then is stopped and its job saved as an error saying so.
    """

    def __init__(
        self,
        store: JobStore,
        worker: Worker,
        permits: asyncio.Semaphore,
        events: EventBus,
        *,
        fanout: FanOut,
        clock: Clock = utc_now,
        new_id: NewId = new_id,
        deadline_s: float = WORKER_DEADLINE_S,
    ) -> None:
        self.store = store
        self.deadline_s = deadline_s
        self.worker = worker
        self.permits = permits
        self.events = events
        self.fanout = fanout
        self.clock = clock
        self.new_id = new_id
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.sessions: dict[str, str] = {}
        """Computing workers' sessions, by job id."""
        self._aborting: dict[str, bool] = {}

    # -- dispatch ---------------------------------------------------------------------------------
    def spawn(self, chat_id: str, tool_call_id: str, kind: JobKind, tool_input: dict[str, Any]) -> JobRecord:
        """Save the job with its input (raises OSError loudly: no worker starts on a failed save),
        then start its worker in the background. Returns the saved record."""
        job = JobRecord(
            id=self.new_id("job_"),
            chat_id=chat_id,
            tool_call_id=tool_call_id,
            kind=kind,
            input=tool_input,
            created_at=self.clock(),
        )
        self.store.save(job)
        self._changed(job.chat_id, row=True)
        self.sessions[job.id] = chat_id
        self.tasks[job.id] = asyncio.get_running_loop().create_task(self._run(job), name=f"job {job.id}")
        log.info("[job %s] %s for session %s started", job.id, kind, chat_id)
        return job

    async def _run(self, job: JobRecord) -> None:
        try:
            try:
                async with self.permits:
                    async with asyncio.timeout(self.deadline_s):
                        result, usage = await self.worker(job.kind, job.input)
            except TimeoutError:
                log.warning("[job %s] stopped at its %.0f s deadline", job.id, self.deadline_s)
                self._finish(
                    job.id, status="error", error=_past_deadline(job.kind, self.deadline_s), delivery="result"
                )
            except asyncio.CancelledError:
                if self._aborting.pop(job.id, False):
                    self._finish(job.id, status="aborted", error="stopped by the learner", delivery="abort")
                raise  # a shutdown leaves the record running; startup recovery reads it
            except Exception as exc:
                spent = getattr(exc, "usage", None)
                log.warning("[job %s] failed: %s", job.id, exc)
                self._finish(
                    job.id,
                    status="error",
                    error=str(exc) or type(exc).__name__,
                    usage=spent if isinstance(spent, WorkerUsage) else None,
                    delivery="result",
                )
            else:
                self._finish(job.id, status="done", result=result, usage=usage, delivery="result")
        finally:
            self.tasks.pop(job.id, None)
            self.sessions.pop(job.id, None)

    def _finish(
        self,
        job_id: str,
        *,
        status: str,
        delivery: str,
        result: WorkerResult | None = None,
        usage: WorkerUsage | None = None,
        error: str | None = None,
    ) -> JobRecord | None:
        """The outcome and its pending delivery in one update, then `JobOutcomeSaved` (the wake
        pipeline's intake)."""

        def change(job: JobRecord) -> JobRecord | None:
            if job.status != "running":
                return None  # already settled (an abort raced the end): the first outcome stands
            return job.model_copy(
                update={
                    "status": status,
                    "result": result,
                    "error": error,
                    "usage": usage or job.usage,
                    "finished_at": self.clock(),
                    "delivery": Delivery(kind=delivery, steer_id=steer_id(job.id, delivery)),  # type: ignore[arg-type]
                }
            )

        try:
            saved = self.store.update(job_id, change)
        except Exception:  # the outcome could not be saved: say so loudly; startup recovery retries
            log.exception("[job %s] saving the outcome failed", job_id)
            return None
        if saved is None:
            return None
        log.info("[job %s] %s", job_id, saved.status)
        self._changed(saved.chat_id, row=True)
        self.fanout.publish(JobOutcomeSaved(saved))  # contained: a failed handoff stays pending for recovery
        return saved

    # -- control ----------------------------------------------------------------------------------
    def abort(self, job_id: str) -> bool:
        """Abort a computing worker (its record then says `aborted`, with a pending abort notice).
        False when the job is not computing."""
        task = self.tasks.get(job_id)
        if task is None or task.done():
            return False
        self._aborting[job_id] = True
        task.cancel()
        return True

    def computing(self, chat_id: str) -> bool:
        """Whether a worker of this session is computing (it blocks the session's deletion)."""
        return chat_id in self.sessions.values()

    def discard(self, chat_id: str) -> int:
        """The session was deleted: its job records (and so its pending deliveries) go with it.
        Returns how many were removed."""
        removed = 0
        for job in self.store.list(chat_id):
            if job.id in self.tasks:
                continue  # computing workers block deletion; the caller checked
            removed += self.store.delete(job.id)
        if removed:
            self._changed(chat_id)
        return removed

    def recover(self) -> list[JobRecord]:
        """At startup: a record still `running` belongs to a worker of an earlier process. One that
        had saved its result becomes finished with a pending delivery; one without becomes an
        honest error (with a pending notice), never re-run silently. Returns the jobs that owe
        their lesson a delivery."""
        owed = []
        for job in self.store.list():
            if job.status == "running" and job.id not in self.tasks:
                if job.result is not None:
                    saved = self._finish(job.id, status="done", result=job.result, delivery="result")
                else:
                    saved = self._finish(job.id, status="error", error=CLOSED_BEFORE_END, delivery="result")
                job = saved or job
            if job.delivery is not None and job.delivery.status == "pending":
                owed.append(job)
        return owed

    def acknowledge(self, job_id: str) -> JobRecord | None:
        """Delivery complete (the steer is in the saved record): `delivery.status = delivered`.
        The worker's outcome is unchanged. Idempotent."""

        def change(job: JobRecord) -> JobRecord | None:
            if job.delivery is None or job.delivery.status == "delivered":
                return None
            return job.model_copy(
                update={
                    "delivery": job.delivery.model_copy(
                        update={"status": "delivered", "delivered_at": self.clock()}
                    )
                }
            )

        saved = self.store.update(job_id, change)
        if saved is not None:
            self._changed(saved.chat_id)
        return saved

    async def shutdown(self) -> None:
        """Cancel computing workers (server exit); their records stay `running` for recovery."""
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- reads ------------------------------------------------------------------------------------
    def activity(self) -> list[dict[str, Any]]:
        """One Background agents row per computing worker (the row goes when the worker ends)."""
        rows = []
        for job_id in list(self.tasks):
            job = self._job(job_id)
            if job is None:
                continue
            rows.append(
                {
                    "id": job.id,
                    "source": job.id,
                    "kind": "job",
                    "jobKind": job.kind,
                    "chatId": job.chat_id,
                    "label": f"{LABELS[job.kind]}: {_request_text(job)}",
                    "phase": "running",
                    "error": None,
                    "usage": {"inputTokens": None, "outputTokens": None, "requests": 0, "costUsd": None},
                    "queuedAt": job.created_at,
                    "startedAt": job.created_at,
                    "endedAt": None,
                    "stats": {},
                }
            )
        return rows

    def _job(self, job_id: str) -> JobRecord | None:
        try:
            return self.store.get(job_id)
        except Exception:
            log.warning("[job %s] unreadable", job_id, exc_info=True)
            return None

    def _changed(self, chat_id: str, *, row: bool = False) -> None:
        self.events.emit("jobs-changed", {"chatId": chat_id})
        if row:
            self.events.emit("activity-changed")
