"""The lesson's tools (seed §5).

- `quiz`, `ask_user_question`: client-side questions. Arguments are validated here (a bad call,
  or an option that is not words — see server/core/classroom/option_words.py — goes back to the
  model as a retry prompt), then the call is deferred: the browser renders it,
  grades it and answers with `addToolOutput`.
- `plan_init`: server-executed, author-once; a plan that does not parse or is cyclic returns the
  line-numbered error to the model, which retries.
- `plan_teach`: server-executed; the teacher names the plan node it is about to teach, so the
  plan panel's derived statuses follow teaching, not only tagged quizzes (issue 18).
- `probe_done` is the prober's output tool (see lesson.py): calling it ends the probe.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import CallDeferred, FunctionToolset, ModelRetry, RunContext

from server.core.classroom.option_words import options_problem
from server.core.classroom.plan_tree import PlanError, parse_plan, plan_of
from server.core.contracts.plan import PlanInitInput, PlanTeachInput
from server.core.contracts.questions import AskInput, QuizInput
from server.core.ports import GraphReader
from server.core.transcript import has_plan


@dataclass
class LessonDeps:
    """Per-turn dependencies of the lesson tools.

    Attributes:
        messages: the record's transcript as of this turn (read-only for the tools).
        plan_authored: set when `plan_init` succeeds in this run (author-once within a run too).
        plan_nodes: the node ids of the plan authored in this run.
        graph: the knowledge graph's read side, when the teacher may use its graph tools.
        spawn: the job runner's dispatch, `(kind, tool call id, input) -> job id` (the Workbench's
            job tools); None when no job tool is offered.
        take_steers: the wake pipeline's live intake, called at each model-request boundary: the
            steer messages (user-role UIMessages) to deliver into this run now.
    """

    messages: list[dict[str, Any]] = field(default_factory=list)
    plan_authored: bool = False
    plan_nodes: list[str] = field(default_factory=list)
    graph: GraphReader | None = None
    spawn: Callable[[str, str, dict[str, Any]], str] | None = None
    take_steers: Callable[[], list[dict[str, Any]]] | None = None


async def quiz(ctx: RunContext[LessonDeps], q: QuizInput) -> dict[str, Any]:
    """Ask the learner a multiple-choice question. Commit to the answer before posing it:
    `correct` is the index of the right option in `options`, `explanation` says why. Tag a
    teaching quiz with the plan node it checks (`node`). The learner's graded answer comes back
    as this tool's result."""
    if problem := options_problem(q.options):
        raise ModelRetry(problem)
    raise CallDeferred(kind="question")


async def ask_user_question(ctx: RunContext[LessonDeps], q: AskInput) -> dict[str, Any]:
    """Ask the learner an open question (their goal, their background), optionally offering
    suggested answers in `options`. Their reply comes back as this tool's result."""
    if problem := options_problem(q.options):
        raise ModelRetry(problem)
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
    ctx.deps.plan_nodes = [node.id for node in tree.nodes]
    return {"ok": True, "plan": tree.model_dump(mode="json")}


async def plan_teach(ctx: RunContext[LessonDeps], step: PlanTeachInput) -> dict[str, Any]:
    """Say which plan node you are about to teach (its id from `plan_init`), each time you move
    to a node, before explaining it: the learner's plan panel marks it. Returns `{"ok": true,
    "node": id}`."""
    nodes = ctx.deps.plan_nodes
    if not nodes:
        plan = plan_of(ctx.deps.messages)
        nodes = [node.id for node in plan.nodes] if plan else []
    if not nodes:
        raise ModelRetry("there is no plan yet; author it with plan_init first")
    if step.node not in nodes:
        raise ModelRetry(f"no plan node {step.node!r}; the plan's node ids are: {', '.join(nodes)}")
    return {"ok": True, "node": step.node}


@functools.cache
def question_toolset(max_retries: int = 3) -> FunctionToolset[LessonDeps]:
    """quiz + ask_user_question (both roles ask questions). Built once per `max_retries` (a
    toolset holds no run state; building one generates its tools' JSON schemas, ~20 ms)."""
    return FunctionToolset([quiz, ask_user_question], max_retries=max_retries)


@functools.cache
def teacher_toolset(max_retries: int = 3) -> FunctionToolset[LessonDeps]:
    """The teacher's server-side tools."""
    return FunctionToolset([plan_init, plan_teach], max_retries=max_retries)


async def list_sessions(ctx: RunContext[LessonDeps]) -> list[dict[str, Any]]:
    """The learner's knowledge graph by birth session: past lessons and imported notes files,
    each with how many propositions it gave the graph. Use it to see what they met before."""
    if ctx.deps.graph is None:
        raise ModelRetry("the graph tools are switched off in settings (agent.graphTools or graph.enabled)")
    return ctx.deps.graph.sessions()


async def list_propositions(ctx: RunContext[LessonDeps], session: str) -> list[dict[str, str]]:
    """The propositions (name and statement) one session gave the graph (an id from list_sessions)."""
    if ctx.deps.graph is None:
        raise ModelRetry("the graph tools are switched off in settings (agent.graphTools or graph.enabled)")
    rows = ctx.deps.graph.propositions(session)
    if not rows:
        raise ModelRetry(f"no session {session!r} in the graph; call list_sessions for the ids")
    return rows


@functools.cache
def graph_toolset() -> FunctionToolset[LessonDeps]:
    """The teacher's read-only graph tools, offered when `agent.graphTools` is on."""
    return FunctionToolset([list_sessions, list_propositions], max_retries=2)


# -- the offline model's tool schemas (issue 9) -------------------------------------------------------
# The tiny offline model reads every schema in its prompt and fills the arguments under a grammar
# llama.cpp compiles from the schema. These lean stand-ins (no docstrings, short bounds, three
# options, `correct` an index that exists, `node` one of the plan's ids) keep its prompt small and
# its arguments inside what the tools accept. Validation is unchanged: the tools' own models check
# every call. Hosted models never see these. The bounds keep a whole call within the offline reply
# cap (`services.turn.OFFLINE_MAX_TOKENS`): a call cut off there is not JSON.

_SHORT = {"type": "string", "minLength": 1, "maxLength": 100}
_WORD = {"type": "string", "minLength": 1, "maxLength": 40}
OFFLINE_QUIZ_OPTIONS = 3
_PLAN_NODE = r"[a-z][a-z0-9_]{0,15}(\[[A-Za-z0-9][A-Za-z0-9 ,'-]{0,29}\])?"
_PLAN_PATTERN = rf"^graph TD(\\n  {_PLAN_NODE} --> {_PLAN_NODE}){{2,6}}$"
"""A plan as the grammar lets the offline model write it: `graph TD`, then 2-6 edge lines (a JSON
`\\n` escape between them), each `id[Label] --> id[Label]` or with a bare id on either side."""


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def offline_tool_schema(name: str, plan_nodes: list[str]) -> tuple[str, dict[str, Any]] | None:
    """(description, JSON schema) of a lesson tool for the offline model, or None to keep its own.

    Args:
        name: the tool's name.
        plan_nodes: the plan's node ids when a plan exists (a teacher quiz must name one).
    """
    if name == "quiz":
        properties: dict[str, Any] = {
            "question": _SHORT,
            "options": {
                "type": "array",
                "items": _WORD,
                "minItems": OFFLINE_QUIZ_OPTIONS,
                "maxItems": OFFLINE_QUIZ_OPTIONS,
            },
            "correct": {"enum": list(range(OFFLINE_QUIZ_OPTIONS))},
            "explanation": _SHORT,
        }
        required = ["question", "options", "correct", "explanation"]
        if plan_nodes:
            properties["node"] = {"enum": plan_nodes}
            required.append("node")
        return "Ask one multiple-choice question; `correct` is the index of the right option.", _object(
            properties, required
        )
    if name == "ask_user_question":
        options = {"type": "array", "items": _WORD, "maxItems": 4}
        return "Ask the learner an open question.", _object(
            {"question": _SHORT, "options": options}, ["question", "options"]
        )
    if name == "probe_done":
        level = {"enum": ["none", "beginner", "intermediate", "advanced", "expert"]}
        return "Hand the learner over to the teacher.", _object(
            {"topic": _WORD, "goal": _SHORT, "floor": _SHORT, "ceiling": _SHORT, "level": level},
            ["topic", "goal", "floor", "ceiling", "level"],
        )
    if name == "plan_teach" and plan_nodes:
        return "Name the plan node you teach next.", _object({"node": {"enum": plan_nodes}}, ["node"])
    if name == "plan_init":
        mermaid = {"type": "string", "pattern": _PLAN_PATTERN}
        return (
            "Author the plan: `graph TD`, then one `a[Label] --> b[Label]` edge per line.",
            _object({"title": _WORD, "mermaid": mermaid}, ["title", "mermaid"]),
        )
    return None
