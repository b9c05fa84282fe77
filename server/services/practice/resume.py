"""Practice's resume at start (issue 26; docs/decisions/0025-...): a set is accepted work (its
202), so what a crashed or stopped process left running runs again, and ends `ready`/`graded` or
with an error, never left running. The data-dir lock makes this process the only one that runs
them."""

from __future__ import annotations

import asyncio
import logging

from server.core.ports import PracticeStore
from server.services.practice.runs import PracticeRuns
from server.services.practice.stages import PracticeStages

log = logging.getLogger("lh.practice")


def resume_runs(store: PracticeStore, runs: PracticeRuns, stages: PracticeStages) -> dict[str, int]:
    """Run again what a crashed or stopped process accepted and left unfinished.

    A set left `partitioning` is divided again (its partition row), one left `generating` writes
    its problems still `pending`/`generating` (their rows), and an answer left `grading` is graded
    again (its row); a set this process already runs is left alone. No model configured: each
    ends with its error as a new run would. Needs the running loop. Returns
    {"sets": sets resumed, "grades": grades resumed}."""
    asyncio.get_running_loop()  # outside a running loop: RuntimeError before any row is made
    resumed = {"sets": 0, "grades": 0}
    for problem_set in store.list():
        if runs.runs(problem_set.id):
            continue  # this process runs it
        if problem_set.status == "partitioning":
            row = runs.row(f"{problem_set.id}:partition", f"{problem_set.title} — dividing into problems")
            runs.start(row.id, stages.generate(problem_set.id, row), name=f"practice {problem_set.id}")
            resumed["sets"] += 1
        elif problem_set.status == "generating":
            # divided before the restart: its problems' rows show; aborting the set's
            # partition row (the run as a whole) still stops them
            runs.start(
                f"{problem_set.id}:partition",
                stages.write_problems(problem_set),
                name=f"practice {problem_set.id}",
            )
            resumed["sets"] += 1
        for problem in problem_set.problems:
            if problem.grade_status == "grading" and problem.answer is not None:
                row = runs.row(
                    f"{problem_set.id}:grade:{problem.id}",
                    f"{problem_set.title} — grading problem {problem.index}",
                )
                runs.start(row.id, stages.grade(problem_set, problem, row))
                resumed["grades"] += 1
    if any(resumed.values()):
        log.info("practice resumed after a restart: %s", resumed)
    return resumed
