"""Practice's stages (seed §7): a set's partition, its problems' generators, and an answer's grade,
each a row of the run registry under the shared background-model pool, each writing the set.

- Per-problem failure isolation: a generator that fails errors its problem alone; the set still
  reaches `ready` when at least one problem is ready.
- A grade that cannot finish leaves the answer with `gradeStatus: interrupted` (stopped) or
  `error` (the model failed). Grades never touch the graph.
- A stage cancelled by a shutdown writes nothing, so the next start resumes it (`resume.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from pydantic_ai.models import Model

from server.agent.practice.generator import build_generator, generator_prompt
from server.agent.practice.grader import build_grader, grader_prompt
from server.agent.practice.partitioner import build_partitioner, partitioner_prompt
from server.agent.practice.submits import Generated, Graded, Partition
from server.core.contracts.models import RoleName
from server.core.contracts.practice import Grade, Problem, ProblemSet
from server.core.events import EventBus
from server.core.machine_room.model_failures import failure_in_text, learner_words
from server.core.ports import PracticeStore
from server.core.practice.chains import touched_propositions
from server.core.refusals import Refused
from server.services.practice.runs import PracticeRow, PracticeRuns, RowPhase

log = logging.getLogger("lh.practice")

RECENT_SETS = 5
OFFLINE_MAX_TOKENS = 2048
ModelFor = Callable[[RoleName], Any]
"""role name ("partitioner", "problemGenerator", "grader") -> awaitable (resolved, model)."""


class PracticeStages:
    """Args:
    store: the problem sets (the stages write them; the service is their only other writer).
    runs: the run registry (rows, tasks, and whether the process is stopping).
    model_for: `await model_for(role)` -> (resolved, model); each stage runs its own role's
        model (`model_roles.MODEL_ROLES`), recorded on its row (`PracticeRow.resolved`).
    permits: the process-wide background-model pool (shared with extraction).
    events: `activity-changed` after every set write.
    clock: ISO timestamp source (the set's `updatedAt` heartbeat).
    """

    def __init__(
        self,
        store: PracticeStore,
        runs: PracticeRuns,
        model_for: ModelFor,
        permits: asyncio.Semaphore,
        events: EventBus,
        clock: Callable[[], str],
    ) -> None:
        self.store = store
        self.runs = runs
        self.model_for = model_for
        self.permits = permits
        self.events = events
        self.clock = clock

    def write(self, set_id: str, change: Callable[[ProblemSet], None]) -> ProblemSet | None:
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
        self, row: PracticeRow, role: RoleName, phase: RowPhase, go: Callable[[Model, int | None], Any]
    ) -> Any:
        resolved, model = await self.model_for(role)
        row.resolved = resolved
        cap = OFFLINE_MAX_TOKENS if resolved.offline else None
        async with self.permits:  # "queued" until a permit of the shared pool is free
            self.runs.phase(row, phase)
            return await go(model, cap)

    # -- generation -----------------------------------------------------------------------------
    async def generate(self, set_id: str, row: PracticeRow) -> None:
        """Divide the set into problems (its partition row), then write them."""
        problem_set = self.store.get(set_id)
        if problem_set is None:
            self.runs.phase(row, "aborted")
            return
        chain_ids = [c.id for c in problem_set.chains]
        try:

            async def partition(model: Model, cap: int | None) -> Partition:
                agent = build_partitioner(model, chain_ids, max_tokens=cap)
                prompt = partitioner_prompt(
                    problem_set.chains, problem_set.propositions, problem_set.params, problem_set.note
                )
                return (await agent.run(prompt, usage=row.usage)).output

            groups = (await self._stage(row, "partitioner", "partitioning", partition)).groups
        except asyncio.CancelledError:
            self.runs.phase(row, "aborted")
            if not self.runs.stopping:
                self.write(set_id, lambda s: fail_set(s, "Stopped while it was being divided into problems."))
            raise
        except Exception as exc:
            log.warning("partitioning %s failed: %s", set_id, exc)
            why = f"The set could not be divided into problems: {honest(exc)}"
            self.runs.phase(row, "error", honest(exc))
            self.write(set_id, lambda s: fail_set(s, why))
            return
        self.runs.phase(row, "done")

        def plan(s: ProblemSet) -> None:
            s.status = "generating"
            s.problems = [
                Problem(id=f"p{i}", index=i, title=g.title.strip(), chain_ids=list(g.chain_ids))
                for i, g in enumerate(groups, start=1)
            ]

        planned = self.write(set_id, plan)
        if planned is None:
            return  # deleted meanwhile
        await self.write_problems(planned)

    async def write_problems(self, planned: ProblemSet) -> None:
        """One generator per problem still `pending` or `generating` (all of a set just divided;
        those a crash left unwritten when it resumes), then the set settles."""
        set_id = planned.id
        recent = self._recent(planned)
        total = len(planned.problems)
        tasks = []
        for problem in planned.problems:
            if problem.status not in ("pending", "generating"):
                continue
            gen_row = self.runs.row(
                f"{set_id}:gen:{problem.id}", f"Problem {problem.index}/{total} — {problem.title}"
            )
            self.runs.start(gen_row.id, self._generate_one(planned, problem, gen_row, recent))
            tasks.append(self.runs.tasks[gen_row.id])
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        except asyncio.CancelledError:
            # The run was stopped (its partition row aborted, or shutdown) while problems were
            # being written: the gather has cancelled every generator and waited for them, so each
            # unwritten problem already says "Stopped before it was written."; the set settles now,
            # or it would stay `generating`. A shutdown leaves it so: the next start resumes it.
            if not self.runs.stopping:
                self.write(set_id, settle("Stopped while its problems were being written."))
            raise
        self.write(set_id, settle("No problem could be written; delete this set and try again."))

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
                self.write(problem_set.id, mark("generating"))
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

            generated = await self._stage(row, "problemGenerator", "generating", write)
        except asyncio.CancelledError:
            self.runs.phase(row, "aborted")
            if not self.runs.stopping:
                self.write(problem_set.id, mark("error", "Stopped before it was written."))
            raise
        except Exception as exc:
            log.warning("generating %s/%s failed: %s", problem_set.id, problem.id, exc)
            self.runs.phase(row, "error", honest(exc))
            self.write(problem_set.id, mark("error", f"This problem could not be written: {honest(exc)}"))
            return
        self.write(problem_set.id, mark("ready", None, generated))
        self.runs.phase(row, "done")

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

    # -- grading --------------------------------------------------------------------------------
    async def grade(self, problem_set: ProblemSet, problem: Problem, row: PracticeRow) -> None:
        """Grade the problem's saved answer (its grade row); the set keeps the grade or the error."""
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

            graded = await self._stage(row, "grader", "grading", grade)
        except asyncio.CancelledError:
            self.runs.phase(row, "aborted")
            if not self.runs.stopping:
                self.write(
                    problem_set.id, mark("interrupted", error="The grade was stopped before it finished.")
                )
            raise
        except Exception as exc:
            log.warning("grading %s/%s failed: %s", problem_set.id, problem.id, exc)
            self.runs.phase(row, "error", honest(exc))
            self.write(problem_set.id, mark("error", error=f"The grade could not be given: {honest(exc)}"))
            return
        self.write(problem_set.id, mark("graded", Grade(score=graded.score, comment=graded.comment.strip())))
        self.runs.phase(row, "done")


def settle(no_problem: str) -> Callable[[ProblemSet], None]:
    """The set's end after its generators: `ready` when at least one problem is ready (the others
    keep their own error), else `error` with `no_problem` as the reason."""

    def settle(s: ProblemSet) -> None:
        ready = [p for p in s.problems if p.status == "ready"]
        if ready:
            s.status, s.error = "ready", None
        else:
            fail_set(s, no_problem)

    return settle


def fail_set(problem_set: ProblemSet, error: str) -> None:
    """The set and its unwritten problems end in `error` with `error` as the reason."""
    problem_set.status, problem_set.error = "error", error
    for p in problem_set.problems:
        if p.status in ("pending", "generating"):
            p.status, p.error = "error", error


def honest(exc: BaseException) -> str:
    """A stage's failure in plain words (at most 300 characters): a refusal's own detail, the
    SDK's retries-exhausted error as what the learner can do about it, else its first line."""
    if isinstance(exc, Refused):
        return exc.detail
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    gave_up = failure_in_text(text, kept=False)  # not the SDK's "Exceeded maximum output retries (3)"
    return learner_words(gave_up) if gave_up is not None else text[:300]
