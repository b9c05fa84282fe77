"""Fitting the lesson's agents to the tiny offline model (issue 9): which tool each model request
names (`prober_next_tool`, `teacher_next_tool`), the lean tool schemas it sees, and whether a
model is the offline one. `lesson.build_prober` / `build_teacher` apply it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from pydantic_ai import RunContext
from pydantic_ai.capabilities import PrepareOutputTools, PrepareTools
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from server.agent.classroom.tools import LessonDeps, offline_tool_schema
from server.agent.machine_room.engine import WholeResponseModel
from server.core.contracts.plan import PlanTree
from server.core.transcript import INTERRUPTED, has_plan, tool_name


@dataclass(frozen=True)
class OfflineTuning:
    """How the lesson agents are fitted to the tiny offline model.

    Attributes:
        force_tool: each model request names the one tool the lesson's state calls for, so
            llama.cpp's `chatml-function-calling` handler writes that call with its arguments
            constrained by a grammar compiled from the tool's schema (with a free choice it picks
            between a message and a tool at temperature 0, and mostly picks wrong).
        short_schemas: the model sees lean tool schemas (`tools.offline_tool_schema`).
    """

    force_tool: bool = True
    short_schemas: bool = True


OFFLINE_TUNING = OfflineTuning()
"""What the offline model gets (measured in tests/bench/machine_room/bench_offline_tools.py,
docs/benchmarks.md)."""

OFFLINE_PROBE_QUIZZES = 2
"""Answered placement quizzes after which the offline prober files `probe_done`."""

DETECT: Final = "detect"


def _tool_parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part
        for message in messages
        if message.get("role") == "assistant"
        for part in message.get("parts", [])
        if tool_name(part) is not None
    ]


def _answered(part: dict[str, Any]) -> bool:
    return part.get("state") == "output-available" and part.get("output") != INTERRUPTED


def prober_next_tool(messages: list[dict[str, Any]]) -> str:
    """The tool the offline prober calls next: ask the goal first, then placement quizzes, then
    `probe_done`."""
    parts = _tool_parts(messages)
    if not any(tool_name(p) in ("ask_user_question", "quiz") for p in parts):
        return "ask_user_question"
    answered = sum(1 for p in parts if tool_name(p) == "quiz" and _answered(p))
    return "quiz" if answered < OFFLINE_PROBE_QUIZZES else "probe_done"


def plan_node_ids(messages: list[dict[str, Any]]) -> list[str]:
    """The node ids of the transcript's plan (the first successful `plan_init`), or []."""
    for part in _tool_parts(messages):
        output = part.get("output")
        if tool_name(part) == "plan_init" and _answered(part) and isinstance(output, dict):
            try:
                return [node.id for node in PlanTree.model_validate(output.get("plan")).nodes]
            except ValueError:
                continue
    return []


def offline_settings(
    tuning: OfflineTuning, base: ModelSettings | None, next_tool: Callable[[LessonDeps], str]
) -> ModelSettings | Callable[[RunContext[LessonDeps]], ModelSettings] | None:
    if not tuning.force_tool:
        return base

    def settings(ctx: RunContext[LessonDeps]) -> ModelSettings:
        return ModelSettings(**(base or {}), tool_choice=[next_tool(ctx.deps)])

    return settings


def offline_capabilities(tuning: OfflineTuning) -> list[Any]:
    if not tuning.short_schemas:
        return []

    async def lean(ctx: RunContext[LessonDeps], defs: list[ToolDefinition]) -> list[ToolDefinition]:
        nodes = ctx.deps.plan_nodes or plan_node_ids(ctx.deps.messages)
        out = []
        for tool in defs:
            short = offline_tool_schema(tool.name, nodes)
            out.append(
                tool
                if short is None
                else replace(tool, description=short[0], parameters_json_schema=short[1], strict=None)
            )
        return out

    return [PrepareTools(lean), PrepareOutputTools(lean)]


def is_offline_model(model: Model) -> bool:
    """Whether `model` is the offline model as `engine.build_model` makes it (the only model
    served whole); every other model gets the agents unchanged."""
    return isinstance(model, WholeResponseModel)


def tuning_for(model: Model, offline: OfflineTuning | str | None) -> OfflineTuning | None:
    if offline == DETECT:
        return OFFLINE_TUNING if is_offline_model(model) else None
    assert offline is None or isinstance(offline, OfflineTuning)
    return offline


def teacher_next_tool(deps: LessonDeps) -> str:
    return "quiz" if deps.plan_authored or has_plan(deps.messages) else "plan_init"
