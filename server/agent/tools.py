"""The lesson's tools (seed §5).

- `quiz`, `ask_user_question`: client-side questions. Arguments are validated here (a bad call
  goes back to the model as a retry prompt), then the call is deferred: the browser renders it,
  grades it and answers with `addToolOutput`.
- `plan_init`: server-executed, author-once; a plan that does not parse or is cyclic returns the
  line-numbered error to the model, which retries.
- `probe_done` is the prober's output tool (see lesson.py): calling it ends the probe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import CallDeferred, FunctionToolset, ModelRetry, RunContext

from server.core.contracts.plan import PlanInitInput
from server.core.contracts.questions import AskInput, QuizInput
from server.core.plan_tree import PlanError, parse_plan
from server.core.ports import GraphReader
from server.core.transcript import has_plan


@dataclass
class LessonDeps:
    """Per-turn dependencies of the lesson tools.

    Attributes:
        messages: the record's transcript as of this turn (read-only for the tools).
        plan_authored: set when `plan_init` succeeds in this run (author-once within a run too).
        graph: the knowledge graph's read side, when the teacher may use its graph tools.
    """

    messages: list[dict[str, Any]] = field(default_factory=list)
    plan_authored: bool = False
    graph: GraphReader | None = None


async def quiz(ctx: RunContext[LessonDeps], q: QuizInput) -> dict[str, Any]:
    """Ask the learner a multiple-choice question. Commit to the answer before posing it:
    `correct` is the index of the right option in `options`, `explanation` says why. Tag a
    teaching quiz with the plan node it checks (`node`). The learner's graded answer comes back
    as this tool's result."""
    raise CallDeferred(kind="question")


async def ask_user_question(ctx: RunContext[LessonDeps], q: AskInput) -> dict[str, Any]:
    """Ask the learner an open question (their goal, their background), optionally offering
    suggested answers in `options`. Their reply comes back as this tool's result."""
    raise CallDeferred(kind="question")


async def plan_init(ctx: RunContext[LessonDeps], plan: PlanInitInput) -> dict[str, Any]:
    """Author the lesson's plan once, as a mermaid flowchart: `graph TD`, then one node or edge
    per line, e.g. `limits[Limits] --> deriv[Derivative]`. Edges point from prerequisite to
    what builds on it; the plan must be acyclic. Returns the parsed plan."""
    if ctx.deps.plan_authored or has_plan(ctx.deps.messages):
        raise ModelRetry("the plan is already authored and cannot change; teach it now")
    try:
        tree = parse_plan(plan.title, plan.mermaid)
    except PlanError as exc:
        raise ModelRetry(f"plan_init failed: {exc}. Fix the mermaid and call plan_init again.") from exc
    ctx.deps.plan_authored = True
    return {"ok": True, "plan": tree.model_dump(mode="json")}


def question_toolset(max_retries: int = 3) -> FunctionToolset[LessonDeps]:
    """quiz + ask_user_question (both roles ask questions)."""
    return FunctionToolset([quiz, ask_user_question], max_retries=max_retries)


def teacher_toolset(max_retries: int = 3) -> FunctionToolset[LessonDeps]:
    """The teacher's server-side tools."""
    return FunctionToolset([plan_init], max_retries=max_retries)


async def list_sessions(ctx: RunContext[LessonDeps]) -> list[dict[str, Any]]:
    """The learner's knowledge graph by birth session: past lessons and imported notes files,
    each with how many propositions it gave the graph. Use it to see what they met before."""
    if ctx.deps.graph is None:
        raise ModelRetry("the graph tools are switched off in settings (agent.graphTools)")
    return ctx.deps.graph.sessions()


async def list_propositions(ctx: RunContext[LessonDeps], session: str) -> list[dict[str, str]]:
    """The propositions (name and statement) one session gave the graph (an id from list_sessions)."""
    if ctx.deps.graph is None:
        raise ModelRetry("the graph tools are switched off in settings (agent.graphTools)")
    rows = ctx.deps.graph.propositions(session)
    if not rows:
        raise ModelRetry(f"no session {session!r} in the graph; call list_sessions for the ids")
    return rows


def graph_toolset() -> FunctionToolset[LessonDeps]:
    """The teacher's read-only graph tools, offered when `agent.graphTools` is on."""
    return FunctionToolset([list_sessions, list_propositions], max_retries=2)
