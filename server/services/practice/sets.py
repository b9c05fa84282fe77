"""The practice pipeline (seed §7): partitioner -> one generator per problem -> one grader per
answer, each stage a row of the activity feed, under the shared background-model pool.

- A set freezes its world at creation (selected node ids, a propositions snapshot, the chains);
  every stage reads only the set. This service (with its stages) is the only writer of
  `data/practice/`.
- Runs are a registry (not Workbench jobs, `runs.py`): rows `setId:partition`,
  `setId:gen:problemId`, `setId:grade:problemId`, each with its usage and its own abort (routed by
  the row's shape). The stages themselves (partition, generators, grader) are `stages.py`.
- Per-problem failure isolation: a generator that fails errors its problem alone; the set still
  reaches `ready` when at least one problem is ready.
- One attempt: an answer is saved once, the solution and rubric are revealed with it, and one
  grader job scores it 0-10. Grades never touch the graph. A grade that cannot finish leaves the
  answer with `gradeStatus: interrupted` (the process stopped) or `error` (the model failed).
- Resume at start (issue 26; docs/decisions/0025-...; `resume.py`): a set is accepted work (its
  202), so a set a crashed or stopped process left `partitioning` runs again from its partition,
  one left `generating` writes the problems still `pending`/`generating` (the others keep theirs),
  and an answer left `grading` is graded again; each ends `ready`/`graded` or with an error, never
  left running. The data-dir lock makes this process the only one that can run them. A shutdown
  cancels the runs without marking anything, so the next start resumes them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.practice import (
    MAX_NOTE,
    AnswerBody,
    CreateSet,
    PracticeProposition,
    ProblemSet,
)
from server.core.events import EventBus
from server.core.ports import GraphRows, PracticeStore
from server.core.practice.chains import chains_for_selection
from server.core.practice.levels import default_title
from server.core.refusals import Refused
from server.services.practice.resume import resume_runs
from server.services.practice.runs import PracticeRuns
from server.services.practice.stages import ModelFor, PracticeStages


class PracticeService:
    """Args:
    store: the problem sets (this service is their only writer).
    graph: read at creation only (the selection's live nodes and chains).
    model_for: `await model_for(role)` -> (resolved, model) of a practice role ("partitioner",
        "problemGenerator", "grader": the strong slot unless overridden, seed §7).
    permits: the process-wide background-model pool (shared with extraction).
    events: `activity-changed` after every row change and every set write.
    clock: ISO timestamp source (`server.core.clock`).
    wall_clock: epoch seconds (a new set's default title); None: the system clock.
    new_id: mints set ids (`ps_` + 16 hex digits).
    """

    def __init__(
        self,
        store: PracticeStore,
        graph: GraphRows,
        model_for: ModelFor,
        permits: asyncio.Semaphore,
        events: EventBus,
        clock: Clock = utc_now,
        wall_clock: Callable[[], float] | None = None,
        new_id: NewId = new_id,
        discard: Callable[[ProblemSet], bool] | None = None,
    ) -> None:
        self.store = store
        self.discard = discard or (lambda record: self.store.delete(record.id))
        """Removes a deleted set's record (the trash moves it, decision 0043)."""
        self.graph = graph
        self.model_for = model_for
        self.permits = permits
        self.events = events
        self.clock = clock
        self.new_id = new_id
        self.wall_clock = wall_clock or (lambda: datetime.now(UTC).timestamp())
        self.runs = PracticeRuns(events, clock)
        """The run registry: the stages' activity rows and their tasks."""
        self.stages = PracticeStages(  # model_for read at each stage: a test may point it elsewhere
            store, self.runs, lambda role: self.model_for(role), permits, events, clock
        )

    @property
    def tasks(self) -> dict[str, asyncio.Task[None]]:
        """Row id -> its task (the partition row's task runs the whole generation)."""
        return self.runs.tasks

    # -- reads ----------------------------------------------------------------------------------
    def activity(self) -> list[dict[str, Any]]:
        """The stages' rows for the activity feed (kind `practice`)."""
        return self.runs.activity()

    def sets(self) -> list[dict[str, Any]]:
        """Every readable set's summary, newest first: status, levels, problem/answer/grade counts."""
        sets = sorted(self.store.list(), key=lambda s: s.created_at, reverse=True)
        return [
            {
                "id": s.id,
                "title": s.title,
                "status": s.status,
                "error": s.error,
                "createdAt": s.created_at,
                "updatedAt": s.updated_at,
                "params": s.params.model_dump(by_alias=True),
                "problems": len(s.problems),
                "answered": sum(p.answer is not None for p in s.problems),
                "graded": sum(p.grade_status == "graded" for p in s.problems),
            }
            for s in sets
        ]

    def get(self, set_id: str) -> ProblemSet:
        """The set. Raises Refused(not_found); StoreCorrupt when unreadable."""
        found = self.store.get(set_id)
        if found is None:
            raise Refused("not_found", "set_not_found", f"no problem set {set_id!r}; pick one from the list")
        return found

    # -- creation -------------------------------------------------------------------------------
    async def create(self, body: CreateSet) -> ProblemSet:
        """Freeze the selection's world and start generating. Raises Refused(invalid) (nothing
        of the selection is in the graph any more), 503 (no model)."""
        nodes = self.graph.nodes()
        selection = [n for n in dict.fromkeys(body.node_ids) if n in nodes]
        if not selection:
            raise Refused(
                "invalid",
                "empty_selection",
                "none of the selected propositions is in the graph any more; reload it and select again",
            )
        await self.model_for("partitioner")  # 503 before anything is written
        chains = chains_for_selection(selection, self.graph.chains().values())
        now = self.clock()
        title = (body.title or "").strip() or default_title(datetime.fromtimestamp(self.wall_clock(), UTC))
        problem_set = ProblemSet(
            id=self.new_id("ps_"),
            title=title,
            note=(body.note or "").strip()[:MAX_NOTE],
            status="partitioning",
            created_at=now,
            updated_at=now,
            params=body.params,
            node_ids=selection,
            propositions=[
                PracticeProposition(id=n, name=nodes[n].name, statement=nodes[n].statement) for n in selection
            ],
            chains=chains,
        )
        self.store.save(problem_set)
        self.events.emit("activity-changed")
        row = self.runs.row(f"{problem_set.id}:partition", f"{problem_set.title} — dividing into problems")
        self.runs.start(row.id, self.stages.generate(problem_set.id, row), name=f"practice {problem_set.id}")
        return problem_set

    # -- answers and grades ---------------------------------------------------------------------
    def answer(self, set_id: str, body: AnswerBody) -> dict[str, Any]:
        """Save the one attempt, reveal the solution, start the grade. Raises Refused(not_found),
        409 (the set or problem is not ready), 400 (already answered)."""
        problem_set = self.get(set_id)
        problem = next((p for p in problem_set.problems if p.id == body.problem_id), None)
        if problem is None:
            raise Refused("not_found", "problem_not_found", f"no problem {body.problem_id!r} in this set")
        if problem.answer is not None:
            raise Refused(
                "invalid", "already_answered", "this problem was answered; each problem has one attempt"
            )
        if problem_set.status != "ready" or problem.status != "ready":
            raise Refused("conflict", "not_ready", "this problem is not ready to be answered yet")
        refused: list[str] = []

        def save(s: ProblemSet) -> None:
            for p in s.problems:
                if p.id == body.problem_id:
                    if p.answer is not None:  # a racing second submit
                        refused.append(p.id)
                        return
                    p.answer, p.answered_at, p.grade_status = body.answer, self.clock(), "grading"

        written = self.stages.write(set_id, save)
        if written is None:
            raise Refused("not_found", "set_not_found", "this problem set was deleted")
        if refused:
            raise Refused(
                "invalid", "already_answered", "this problem was answered; each problem has one attempt"
            )
        saved = next(p for p in written.problems if p.id == body.problem_id)
        row = self.runs.row(f"{set_id}:grade:{saved.id}", f"{written.title} — grading problem {saved.index}")
        self.runs.start(row.id, self.stages.grade(written, saved, row))
        return saved.model_dump(by_alias=True, mode="json")

    # -- abort, delete, sweep -------------------------------------------------------------------
    def abort(self, row_id: str) -> bool:
        """Abort by the row's shape: `:partition` the whole run (partition and every generator),
        `:gen:<p>` that problem only, `:grade:<p>` that grade. False when nothing runs."""
        return self.runs.abort(row_id)

    async def delete(self, set_id: str) -> None:
        """Abort the set's runs, then delete it (`discard`: into the trash) and drop its rows from
        the activity feed. Raises Refused(not_found); OSError when the move fails."""
        self.get(set_id)
        await self.runs.stop(set_id)
        record = self.store.get(set_id)  # as the stopped runs left it
        if record is not None:
            self.discard(record)
        self.runs.forget(set_id)

    def resume(self) -> dict[str, int]:
        """At start: run again what a crashed or stopped process accepted and left unfinished.
        A set left `partitioning` is divided again (its partition row), one left `generating`
        writes its problems still `pending`/`generating` (their rows), and an answer left
        `grading` is graded again (its row); a set this process already runs is left alone.
        No model configured: each ends with its error as a new run would. Returns
        {"sets": sets resumed, "grades": grades resumed}."""
        return resume_runs(self.store, self.runs, self.stages)

    async def shutdown(self) -> None:
        """Cancel every run without marking anything: the next start resumes them."""
        await self.runs.shutdown()
