"""The practice pipeline (seed §7): partitioner -> one generator per problem -> one grader per
answer, each stage a row of the activity feed, under the shared background-model pool.

- A set freezes its world at creation (selected node ids, a propositions snapshot, the chains);
  every stage reads only the set. This service is the only writer of `data/practice/`.
- Runs are a registry (not Workbench jobs): rows `setId:partition`, `setId:gen:problemId`,
  `setId:grade:problemId`, each with its usage and its own abort (routed by the row's shape).
- Per-problem failure isolation: a generator that fails errors its problem alone; the set still
  reaches `ready` when at least one problem is ready.
- One attempt: an answer is saved once, the solution and rubric are revealed with it, and one
  grader job scores it 0-10. Grades never touch the graph. A grade that cannot finish leaves the
  answer with `gradeStatus: interrupted` (the process stopped) or `error` (the model failed).
- Resume at start (issue 26; docs/decisions/0025-...): a set is accepted work (its 202), so a set
  a crashed or stopped process left `partitioning` runs again from its partition, one left
  `generating` writes the problems still `pending`/`generating` (the others keep theirs), and an
  answer left `grading` is graded again; each ends `ready`/`graded` or with an error, never left
  running. The data-dir lock makes this process the only one that can run them. A shutdown
  cancels the runs without marking anything, so the next start resumes them.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.machine_room.pricing import usage_cost
from server.agent.practice import (
    Generated,
    Graded,
    Partition,
    build_generator,
    build_grader,
    build_partitioner,
    generator_prompt,
    grader_prompt,
    partitioner_prompt,
)
from server.core.contracts.models import ResolvedModel
from server.core.contracts.practice import (
    MAX_NOTE,
    AnswerBody,
    CreateSet,
    Grade,
    PracticeProposition,
    Problem,
    ProblemSet,
)
from server.core.events import EventBus
from server.core.machine_room.model_failures import failure_in_text, learner_words
from server.core.ports import GraphRows, PracticeStore
from server.core.practice.chains import chains_for_selection, touched_propositions
from server.core.practice.levels import default_title
from server.core.refusals import Refused
from server.services.chats import utc_now

log = logging.getLogger("lh.practice")

RECENT_SETS = 5
OFFLINE_MAX_TOKENS = 2048
RowPhase = Literal["queued", "partitioning", "generating", "grading", "done", "error", "aborted"]
ModelFor = Callable[[str], Any]
"""slot name -> awaitable (resolved, model)."""


@dataclass
class PracticeRow:
    """An activity-feed row of one practice stage."""

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
        ended = self.phase in ("done", "error", "aborted")
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
            },
            "queuedAt": self.queued_at,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
            "stats": {},
        }


def _new_id() -> str:
    return f"ps_{secrets.token_hex(8)}"


class PracticeService:
    """Args:
    store: the problem sets (this service is their only writer).
    graph: read at creation only (the selection's live nodes and chains).
    model_for: `await model_for(slot)` -> (resolved, model); every stage (partitioner,
        generators, grader) runs the strong slot (seed §7: quality-critical).
    permits: the process-wide background-model pool (shared with extraction).
    events: `activity-changed` after every row change and every set write.
    """

    def __init__(
        self,
        store: PracticeStore,
        graph: GraphRows,
        model_for: ModelFor,
        permits: asyncio.Semaphore,
        events: EventBus,
        clock: Callable[[], str] = utc_now,
        wall_clock: Callable[[], float] | None = None,
    ) -> None:
        self.store = store
        self.graph = graph
        self.model_for = model_for
        self.permits = permits
        self.events = events
        self.clock = clock
        self.wall_clock = wall_clock or (lambda: datetime.now(UTC).timestamp())
        self.rows: dict[str, PracticeRow] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        """Row id -> its task (the partition row's task runs the whole generation)."""
        self.stopping = False
        """Set by `shutdown`: a run it cancels writes nothing (the set resumes at the next start)."""

    # -- reads ----------------------------------------------------------------------------------
    def activity(self) -> list[dict[str, Any]]:
        return [row.view() for row in self.rows.values()]

    def sets(self) -> list[dict[str, Any]]:
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
        await self.model_for("strong")  # 503 before anything is written
        chains = chains_for_selection(selection, self.graph.chains().values())
        now = self.clock()
        title = (body.title or "").strip() or default_title(datetime.fromtimestamp(self.wall_clock(), UTC))
        problem_set = ProblemSet(
            id=_new_id(),
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
        row = self._row(f"{problem_set.id}:partition", f"{problem_set.title} — dividing into problems")
        self.tasks[row.id] = asyncio.get_running_loop().create_task(
            self._generate(problem_set.id, row), name=f"practice {problem_set.id}"
        )
        return problem_set

    def _row(self, row_id: str, label: str) -> PracticeRow:
        row = PracticeRow(id=row_id, label=label, queued_at=self.clock())
        self.rows[row_id] = row
        self.events.emit("activity-changed")
        return row

    def _phase(self, row: PracticeRow, phase: RowPhase, error: str | None = None) -> None:
        row.phase = phase
        if phase in ("partitioning", "generating", "grading") and row.started_at is None:
            row.started_at = self.clock()
        if phase in ("done", "error", "aborted"):
            row.ended_at = self.clock()
            row.error = error
        self.events.emit("activity-changed")

    def _write(self, set_id: str, change: Callable[[ProblemSet], None]) -> ProblemSet | None:
        """Change the set under its lock, refreshing the heartbeat; None when it is gone."""

        def apply(current: ProblemSet) -> ProblemSet:
            copy = current.model_copy(deep=True)
            change(copy)
            copy.updated_at = self.clock()
            return copy

        written = self.store.update(set_id, apply)
        if written is not None:
            self.events.emit("activity-changed")
        return written

    async def _stage(
        self, row: PracticeRow, slot: str, phase: RowPhase, go: Callable[[Model, int | None], Any]
    ) -> Any:
        resolved, model = await self.model_for(slot)
        row.resolved = resolved
        cap = OFFLINE_MAX_TOKENS if resolved.offline else None
        async with self.permits:  # "queued" until a permit of the shared pool is free
            self._phase(row, phase)
            return await go(model, cap)

    # -- generation -----------------------------------------------------------------------------
    async def _generate(self, set_id: str, row: PracticeRow) -> None:
        problem_set = self.store.get(set_id)
        if problem_set is None:
            self._phase(row, "aborted")
            return
        chain_ids = [c.id for c in problem_set.chains]
        try:

            async def partition(model: Model, cap: int | None) -> Partition:
                agent = build_partitioner(model, chain_ids, max_tokens=cap)
                prompt = partitioner_prompt(
                    problem_set.chains, problem_set.propositions, problem_set.params, problem_set.note
                )
                return (await agent.run(prompt, usage=row.usage)).output

            groups = (await self._stage(row, "strong", "partitioning", partition)).groups
        except asyncio.CancelledError:
            self._phase(row, "aborted")
            if not self.stopping:
                self._write(
                    set_id, lambda s: _fail_set(s, "Stopped while it was being divided into problems.")
                )
            raise
        except Exception as exc:
            log.warning("partitioning %s failed: %s", set_id, exc)
            why = f"The set could not be divided into problems: {_honest(exc)}"
            self._phase(row, "error", _honest(exc))
            self._write(set_id, lambda s: _fail_set(s, why))
            return
        self._phase(row, "done")

        def plan(s: ProblemSet) -> None:
            s.status = "generating"
            s.problems = [
                Problem(id=f"p{i}", index=i, title=g.title.strip(), chain_ids=list(g.chain_ids))
                for i, g in enumerate(groups, start=1)
            ]

        planned = self._write(set_id, plan)
        if planned is None:
            return  # deleted meanwhile
        await self._write_problems(planned)

    async def _write_problems(self, planned: ProblemSet) -> None:
        """One generator per problem still `pending` or `generating` (all of a set just divided;
        those a crash left unwritten when it resumes), then the set settles."""
        set_id = planned.id
        recent = self._recent(planned)
        total = len(planned.problems)
        tasks = []
        for problem in planned.problems:
            if problem.status not in ("pending", "generating"):
                continue
            gen_row = self._row(
                f"{set_id}:gen:{problem.id}", f"Problem {problem.index}/{total} — {problem.title}"
            )
            task = asyncio.get_running_loop().create_task(
                self._generate_one(planned, problem, gen_row, recent)
            )
            self.tasks[gen_row.id] = task
            tasks.append(task)
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        except asyncio.CancelledError:
            # The run was stopped (its partition row aborted, or shutdown) while problems were
            # being written: the gather has cancelled every generator and waited for them, so each
            # unwritten problem already says "Stopped before it was written."; the set settles now,
            # or it would stay `generating`. A shutdown leaves it so: the next start resumes it.
            if not self.stopping:
                self._write(set_id, _settle("Stopped while its problems were being written."))
            raise
        self._write(set_id, _settle("No problem could be written; delete this set and try again."))

    async def _generate_one(
        self, problem_set: ProblemSet, problem: Problem, row: PracticeRow, recent: list[str]
    ) -> None:
        by_id = {c.id: c for c in problem_set.chains}
        target = [by_id[c] for c in problem.chain_ids if c in by_id]

        def mark(
            status: str, error: str | None = None, generated: Generated | None = None
        ) -> Callable[[ProblemSet], None]:
            def change(s: ProblemSet) -> None:
                for p in s.problems:
                    if p.id == problem.id:
                        p.status = status  # type: ignore[assignment]
                        p.error = error
                        if generated is not None:
                            p.title = generated.title.strip() or p.title
                            p.statement, p.solution, p.rubric = (
                                generated.statement,
                                generated.solution,
                                generated.rubric,
                            )

            return change

        try:

            async def write(model: Model, cap: int | None) -> Generated:
                self._write(problem_set.id, mark("generating"))
                agent = build_generator(model, problem.chain_ids, max_tokens=cap)
                prompt = generator_prompt(
                    target=target,
                    chains=problem_set.chains,
                    propositions=problem_set.propositions,
                    params=problem_set.params,
                    note=problem_set.note,
                    recent=recent,
                )
                return (await agent.run(prompt, usage=row.usage)).output

            generated = await self._stage(row, "strong", "generating", write)
        except asyncio.CancelledError:
            self._phase(row, "aborted")
            if not self.stopping:
                self._write(problem_set.id, mark("error", "Stopped before it was written."))
            raise
        except Exception as exc:
            log.warning("generating %s/%s failed: %s", problem_set.id, problem.id, exc)
            self._phase(row, "error", _honest(exc))
            self._write(problem_set.id, mark("error", f"This problem could not be written: {_honest(exc)}"))
            return
        self._write(problem_set.id, mark("ready", None, generated))
        self._phase(row, "done")

    def _recent(self, problem_set: ProblemSet) -> list[str]:
        """Problems of the <= 5 most recent other sets sharing a node (no repeated situations)."""
        mine = set(problem_set.node_ids)
        others = [s for s in self.store.list() if s.id != problem_set.id and mine & set(s.node_ids)]
        others.sort(key=lambda s: s.created_at, reverse=True)
        out = []
        for other in others[:RECENT_SETS]:
            for p in other.problems:
                if p.statement:
                    text = " ".join(p.statement.split())
                    out.append(f"{p.title}: {text[:300]}")
        return out

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

        written = self._write(set_id, save)
        if written is None:
            raise Refused("not_found", "set_not_found", "this problem set was deleted")
        if refused:
            raise Refused(
                "invalid", "already_answered", "this problem was answered; each problem has one attempt"
            )
        saved = next(p for p in written.problems if p.id == body.problem_id)
        row = self._row(f"{set_id}:grade:{saved.id}", f"{written.title} — grading problem {saved.index}")
        self.tasks[row.id] = asyncio.get_running_loop().create_task(self._grade(written, saved, row))
        return saved.model_dump(by_alias=True, mode="json")

    async def _grade(self, problem_set: ProblemSet, problem: Problem, row: PracticeRow) -> None:
        by_id = {c.id: c for c in problem_set.chains}
        touched_ids = set(touched_propositions(by_id[c] for c in problem.chain_ids if c in by_id))
        touched = [p for p in problem_set.propositions if p.id in touched_ids]

        def mark(
            status: str, grade: Grade | None = None, error: str | None = None
        ) -> Callable[[ProblemSet], None]:
            def change(s: ProblemSet) -> None:
                for p in s.problems:
                    if p.id == problem.id:
                        p.grade_status, p.grade, p.grade_error = status, grade, error  # type: ignore[assignment]

            return change

        try:

            async def grade(model: Model, cap: int | None) -> Graded:
                agent = build_grader(model, max_tokens=cap)
                return (await agent.run(grader_prompt(problem, touched), usage=row.usage)).output

            graded = await self._stage(row, "strong", "grading", grade)
        except asyncio.CancelledError:
            self._phase(row, "aborted")
            if not self.stopping:
                self._write(
                    problem_set.id, mark("interrupted", error="The grade was stopped before it finished.")
                )
            raise
        except Exception as exc:
            log.warning("grading %s/%s failed: %s", problem_set.id, problem.id, exc)
            self._phase(row, "error", _honest(exc))
            self._write(problem_set.id, mark("error", error=f"The grade could not be given: {_honest(exc)}"))
            return
        self._write(problem_set.id, mark("graded", Grade(score=graded.score, comment=graded.comment.strip())))
        self._phase(row, "done")

    # -- abort, delete, sweep -------------------------------------------------------------------
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

    async def delete(self, set_id: str) -> None:
        """Abort the set's runs, then delete it and drop its rows from the activity feed.
        Raises Refused(not_found)."""
        self.get(set_id)
        mine = f"{set_id}:"
        running = [t for rid, t in self.tasks.items() if rid.startswith(mine) and not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        self.store.delete(set_id)
        for rid in [rid for rid in self.rows if rid.startswith(mine)]:
            del self.rows[rid]
        for rid in [rid for rid in self.tasks if rid.startswith(mine)]:
            del self.tasks[rid]
        self.events.emit("activity-changed")

    def resume(self) -> dict[str, int]:
        """At start: run again what a crashed or stopped process accepted and left unfinished.
        A set left `partitioning` is divided again (its partition row), one left `generating`
        writes its problems still `pending`/`generating` (their rows), and an answer left
        `grading` is graded again (its row); a set this process already runs is left alone.
        No model configured: each ends with its error as a new run would. Returns
        {"sets": sets resumed, "grades": grades resumed}."""
        loop = asyncio.get_running_loop()
        resumed = {"sets": 0, "grades": 0}
        for problem_set in self.store.list():
            if any(rid.startswith(f"{problem_set.id}:") for rid in self.tasks):
                continue  # this process runs it
            if problem_set.status == "partitioning":
                row = self._row(
                    f"{problem_set.id}:partition", f"{problem_set.title} — dividing into problems"
                )
                self.tasks[row.id] = loop.create_task(
                    self._generate(problem_set.id, row), name=f"practice {problem_set.id}"
                )
                resumed["sets"] += 1
            elif problem_set.status == "generating":
                # divided before the restart: its problems' rows show; aborting the set's
                # partition row (the run as a whole) still stops them
                self.tasks[f"{problem_set.id}:partition"] = loop.create_task(
                    self._write_problems(problem_set), name=f"practice {problem_set.id}"
                )
                resumed["sets"] += 1
            for problem in problem_set.problems:
                if problem.grade_status == "grading" and problem.answer is not None:
                    row = self._row(
                        f"{problem_set.id}:grade:{problem.id}",
                        f"{problem_set.title} — grading problem {problem.index}",
                    )
                    self.tasks[row.id] = loop.create_task(self._grade(problem_set, problem, row))
                    resumed["grades"] += 1
        if any(resumed.values()):
            log.info("practice resumed after a restart: %s", resumed)
        return resumed

    async def shutdown(self) -> None:
        self.stopping = True
        tasks = [t for t in self.tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _settle(no_problem: str) -> Callable[[ProblemSet], None]:
    """The set's end after its generators: `ready` when at least one problem is ready (the others
    keep their own error), else `error` with `no_problem` as the reason."""

    def settle(s: ProblemSet) -> None:
        ready = [p for p in s.problems if p.status == "ready"]
        if ready:
            s.status, s.error = "ready", None
        else:
            _fail_set(s, no_problem)

    return settle


def _fail_set(problem_set: ProblemSet, error: str) -> None:
    problem_set.status, problem_set.error = "error", error
    for p in problem_set.problems:
        if p.status in ("pending", "generating"):
            p.status, p.error = "error", error


def _honest(exc: BaseException) -> str:
    if isinstance(exc, Refused):
        return exc.detail
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    gave_up = failure_in_text(text, kept=False)  # not the SDK's "Exceeded maximum output retries (3)"
    return learner_words(gave_up) if gave_up is not None else text[:300]
