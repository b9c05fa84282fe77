"""The Workbench's worker dispatcher (seed §5.1): `run_worker(kind, tool_input, deps)` validates
the job's input, runs the kind's agent (researcher, demo-builder, visual-maker), and returns its
verified result with the usage of every model request it made.

Failures are `WorkerFailed` (one plain sentence, `.usage` attached); cancelling the task that
awaits `run_worker` (the runner's abort) cancels the worker at once (CancelledError propagates).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.workbench.common import WorkerFailed, worker_usage
from server.agent.workbench.demo_builder import RUN_TIMEOUT_S, run_demo_builder
from server.agent.workbench.researcher import run_researcher
from server.agent.workbench.visual_maker import run_visual_maker
from server.core.contracts.jobs import (
    JOB_KINDS,
    DemoInput,
    JobKind,
    ResearchInput,
    VisualInput,
    WorkerResult,
    WorkerUsage,
)
from server.core.ports import Headless, WebSearch

__all__ = ["WorkerDeps", "WorkerFailed", "run_worker"]

_INPUTS: dict[str, type[ResearchInput] | type[DemoInput] | type[VisualInput]] = {
    "research": ResearchInput,
    "demo": DemoInput,
    "visual": VisualInput,
}


@dataclass
class WorkerDeps:
    """What a worker runs on.

    Attributes:
        model: the strong slot's model (every worker's main agent).
        vision: the vision slot's model, or None (the visual-maker then does not look at pictures).
        search: the configured web search, or None (the researcher then fails honestly).
        headless: the browser that runs demos and renders pictures.
        demo_timeout_s: seconds a submitted demo gets to load and draw.
    """

    model: Model
    vision: Model | None
    search: WebSearch | None
    headless: Headless
    demo_timeout_s: float = RUN_TIMEOUT_S


def _input_problem(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "input"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


async def run_worker(
    kind: JobKind, tool_input: dict[str, Any], deps: WorkerDeps
) -> tuple[WorkerResult, WorkerUsage]:
    """Run one job's worker to a verified result.

    Args:
        kind: "research", "demo" or "visual".
        tool_input: the teacher's tool input as saved on the job (camelCase or snake_case keys).
        deps: the models, search and browser.
    Returns:
        (the result, the usage summed over every agent run; tokens None when unreported).
    Raises:
        WorkerFailed: an unknown kind or a bad input (no model is called), or the worker's own
            honest failure, with the usage spent so far.
        asyncio.CancelledError: the task was cancelled (an abort).
    """
    if kind not in JOB_KINDS:
        raise WorkerFailed(f"There is no {kind!r} worker (the kinds are {', '.join(JOB_KINDS)}).")
    if not isinstance(tool_input, dict):
        raise WorkerFailed(f"The {kind} request was not valid: it must be an object.")
    try:
        job = _INPUTS[kind].model_validate(tool_input)
    except ValidationError as exc:
        raise WorkerFailed(f"The {kind} request was not valid: {_input_problem(exc)}.") from exc
    usage = RunUsage()
    if isinstance(job, ResearchInput):
        result = await run_researcher(job, deps.model, deps.search, usage)
    elif isinstance(job, VisualInput):
        result = await run_visual_maker(job, deps.model, deps.vision, deps.headless, usage)
    else:
        result = await run_demo_builder(job, deps.model, deps.headless, usage, timeout_s=deps.demo_timeout_s)
    return result, worker_usage(usage)
