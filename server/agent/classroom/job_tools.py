"""The teacher's job tools `research`, `demo` and `visual` (seed §5: ack-and-steer).

Server-executed: each validates its input (a bad call goes back to the model as a retry prompt),
asks the job runner to save and start the worker, and resolves at once with an acknowledgement,
so the teacher keeps teaching. The result re-enters the lesson later as a steer message.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic_ai import FunctionToolset, ModelRetry, RunContext

from server.agent.classroom.tools import LessonDeps
from server.core.contracts.jobs import DemoInput, JobKind, ResearchInput, VisualInput

ACK_NOTE = (
    "Started in the background. Keep teaching; the result arrives later as a message that "
    "starts with [background {kind} {job_id} finished]. Do not wait for it or promise when."
)


def _dispatch(ctx: RunContext[LessonDeps], kind: JobKind, tool_input: dict[str, Any]) -> dict[str, Any]:
    if ctx.deps.spawn is None:
        raise ModelRetry(f"the {kind} tool is not available in this lesson; teach without it")
    job_id = ctx.deps.spawn(kind, ctx.tool_call_id or "", tool_input)
    return {"jobId": job_id, "status": "working", "note": ACK_NOTE.format(kind=kind, job_id=job_id)}


async def research(ctx: RunContext[LessonDeps], job: ResearchInput) -> dict[str, Any]:
    """Ask a background researcher one question; it searches the web, reads the pages and
    returns a summary with cited sources. Returns at once: keep teaching meanwhile."""
    return _dispatch(ctx, "research", job.model_dump(mode="json"))


async def demo(ctx: RunContext[LessonDeps], job: DemoInput) -> dict[str, Any]:
    """Ask a background builder for a small interactive HTML demo (e.g. a slider that moves a
    graph); it is tested in a browser before the learner sees it. Returns at once: keep teaching."""
    return _dispatch(ctx, "demo", job.model_dump(mode="json"))


async def visual(ctx: RunContext[LessonDeps], job: VisualInput) -> dict[str, Any]:
    """Ask a background illustrator for a diagram (SVG); it is rendered and checked before the
    learner sees it. Returns at once: keep teaching."""
    return _dispatch(ctx, "visual", job.model_dump(mode="json"))


TOOLS: dict[str, Any] = {"research": research, "demo": demo, "visual": visual}


def job_toolset(kinds: list[JobKind]) -> FunctionToolset[LessonDeps]:
    """The job tools offered this turn (research only with a search provider configured; demo
    and visual only where a headless browser runs). Built once per set of kinds."""
    return _job_toolset(tuple(kinds))


@functools.cache
def _job_toolset(kinds: tuple[JobKind, ...]) -> FunctionToolset[LessonDeps]:
    return FunctionToolset([TOOLS[k] for k in kinds], max_retries=2)
