"""Practice's run registry (seed §7): the activity-feed rows of its stages and their tasks.

Runs are not Workbench jobs: each stage is a row `setId:partition`, `setId:gen:problemId` or
`setId:grade:problemId` with its usage, its model and its own abort, routed by the row's shape.
The partition row's task runs a set's whole generation, so aborting it stops every generator.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.usage import RunUsage

from server.agent.machine_room.pricing import usage_cost
from server.core.contracts.models import ResolvedModel
from server.core.events import EventBus

RowPhase = Literal["queued", "partitioning", "generating", "grading", "done", "error", "aborted"]
ENDED: tuple[RowPhase, ...] = ("done", "error", "aborted")
RUNNING: tuple[RowPhase, ...] = ("partitioning", "generating", "grading")


@dataclass
class PracticeRow:
    """An activity-feed row of one practice stage (timestamps are the clock's ISO strings)."""

    id: str
    label: str
    phase: RowPhase = "queued"
    error: str | None = None
    queued_at: str = ""
    started_at: str | None = None
    ended_at: str | None = None
    usage: RunUsage = field(default_factory=RunUsage)
    resolved: ResolvedModel | None = None

    def view(self) -> dict[str, Any]:
        """The row as `GET /api/activity` lists it (kind `practice`); tokens and cost once ended."""
        ended = self.phase in ENDED
        requests = self.usage.requests
        return {
            "id": self.id,
            "source": self.id,
            "kind": "practice",
            "label": self.label,
            "phase": self.phase,
            "error": self.error,
            "usage": {
                "inputTokens": self.usage.input_tokens if ended and requests else None,
                "outputTokens": self.usage.output_tokens if ended and requests else None,
                "requests": requests,
                "costUsd": usage_cost(self.usage, self.resolved) if ended and self.resolved else None,
                "model": self.resolved.model if self.resolved else None,  # the model that ran
            },
            "queuedAt": self.queued_at,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
            "stats": {},
        }


class PracticeRuns:
    """Args:
    events: `activity-changed` after every row change.
    clock: ISO timestamp source of the rows' times.
    """

    def __init__(self, events: EventBus, clock: Callable[[], str]) -> None:
        self.events = events
        self.clock = clock
        self.rows: dict[str, PracticeRow] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        """Row id -> its task (the partition row's task runs the whole generation)."""
        self.stopping = False
        """Set by `shutdown`: a run it cancels writes nothing (the set resumes at the next start)."""

    def activity(self) -> list[dict[str, Any]]:
        """Every row's view, in the order the rows came."""
        return [row.view() for row in self.rows.values()]

    def row(self, row_id: str, label: str) -> PracticeRow:
        """A new `queued` row (replacing one of the same id)."""
        row = PracticeRow(id=row_id, label=label, queued_at=self.clock())
        self.rows[row_id] = row
        self.events.emit("activity-changed")
        return row

    def phase(self, row: PracticeRow, phase: RowPhase, error: str | None = None) -> None:
        """Move a row on: the first running phase stamps its start, an end stamps its end and error."""
        row.phase = phase
        if phase in RUNNING and row.started_at is None:
            row.started_at = self.clock()
        if phase in ENDED:
            row.ended_at = self.clock()
            row.error = error
        self.events.emit("activity-changed")

    def start(self, row_id: str, run: Coroutine[Any, Any, None], name: str | None = None) -> None:
        """Run `run` on the loop as the task of row `row_id`."""
        self.tasks[row_id] = asyncio.get_running_loop().create_task(run, name=name)

    def runs(self, set_id: str) -> bool:
        """Whether this process has run or runs anything of the set (a task under its id)."""
        return any(rid.startswith(f"{set_id}:") for rid in self.tasks)

    def abort(self, row_id: str) -> bool:
        """Abort by the row's shape: `:partition` the whole run (partition and every generator),
        `:gen:<p>` that problem only, `:grade:<p>` that grade. False when nothing runs."""
        set_id = row_id.split(":", 1)[0]
        if row_id.endswith(":partition"):
            targets = [
                rid
                for rid in self.tasks
                if rid.startswith(f"{set_id}:partition") or rid.startswith(f"{set_id}:gen:")
            ]
        else:
            targets = [row_id]
        stopped = False
        for rid in targets:
            task = self.tasks.get(rid)
            if task is not None and not task.done():
                task.cancel()
                stopped = True
        return stopped

    async def stop(self, set_id: str) -> None:
        """Cancel every running task of the set and wait for them to end."""
        mine = f"{set_id}:"
        running = [t for rid, t in self.tasks.items() if rid.startswith(mine) and not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def forget(self, set_id: str) -> None:
        """Drop the set's rows and tasks from the feed (the set was deleted)."""
        mine = f"{set_id}:"
        for rid in [rid for rid in self.rows if rid.startswith(mine)]:
            del self.rows[rid]
        for rid in [rid for rid in self.tasks if rid.startswith(mine)]:
            del self.tasks[rid]
        self.events.emit("activity-changed")

    async def shutdown(self) -> None:
        """Cancel every run without marking anything (the next start resumes them)."""
        self.stopping = True
        tasks = [t for t in self.tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
