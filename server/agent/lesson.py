"""The lesson's agents and their turn stream (seed §5: prober -> teacher).

The record (a list of UIMessages) is the only truth: every turn the model's history is rebuilt
from it through pydantic-ai's Vercel AI adapter, which also turns the agent's events into AI SDK v6
UI message stream chunks. Agents are built fresh each turn (stateless).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic_ai import Agent, DeferredToolRequests, ToolOutput
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from pydantic_ai.ui.vercel_ai.request_types import SubmitMessage, UIMessage

from server.agent.prompts import load_prompt
from server.agent.tools import LessonDeps, graph_toolset, question_toolset, teacher_toolset
from server.core.contracts.probe import ProbeAssessment
from server.core.ports import GraphReader

SDK_VERSION: Literal[6] = 6
"""The AI SDK major the browser speaks (frontend pins ai@6 / @ai-sdk/react@3)."""

Role = Literal["prober", "teacher"]


@dataclass(frozen=True)
class RunUsage:
    """Usage of one agent run.

    Attributes:
        input_tokens / output_tokens: as reported by the provider (None when not reported).
        requests: model requests made.
        cost_usd: priced with genai-prices; None when the price is unknown (never 0 for unknown).
    """

    input_tokens: int | None
    output_tokens: int | None
    requests: int
    cost_usd: float | None


def _settings(max_tokens: int | None) -> ModelSettings | None:
    return ModelSettings(max_tokens=max_tokens) if max_tokens else None


DEFAULT_RETRIES = 3
"""How often a role may retry a refused tool call or output before the turn fails."""


def build_prober(
    model: Model, *, max_tokens: int | None = None, retries: int | None = None
) -> Agent[LessonDeps, Any]:
    """The prober: asks the goal, probes floor and ceiling, ends its run by calling `probe_done`."""
    tries = DEFAULT_RETRIES if retries is None else retries
    return Agent(
        model,
        deps_type=LessonDeps,
        instructions=load_prompt("prober"),
        name="prober",
        toolsets=[question_toolset(tries)],
        output_type=[
            str,
            ToolOutput(
                ProbeAssessment,
                name="probe_done",
                description="File your assessment of the learner and hand over to the teacher.",
            ),
            DeferredToolRequests,
        ],
        model_settings=_settings(max_tokens),
        retries={"tools": tries, "output": tries},
    )


def teacher_instructions(assessment: ProbeAssessment | None) -> str:
    text = load_prompt("teacher")
    if assessment is not None:
        text += (
            "\n\nThe prober's assessment of this learner:\n"
            f"- topic: {assessment.topic}\n- goal: {assessment.goal}\n- floor: {assessment.floor}\n"
            f"- ceiling: {assessment.ceiling}\n- level: {assessment.level}\n"
            + (f"- notes: {assessment.notes}\n" if assessment.notes else "")
        )
    return text


def build_teacher(
    model: Model,
    *,
    assessment: ProbeAssessment | None = None,
    max_tokens: int | None = None,
    retries: int | None = None,
    graph_tools: bool = False,
) -> Agent[LessonDeps, Any]:
    """The teacher: authors the plan once (`plan_init`), then teaches with tagged quizzes; with
    `graph_tools` it may read the learner's knowledge graph (`list_sessions`, `list_propositions`)."""
    tries = DEFAULT_RETRIES if retries is None else retries
    toolsets = [question_toolset(tries), teacher_toolset(tries)]
    if graph_tools:
        toolsets.append(graph_toolset())
    return Agent(
        model,
        deps_type=LessonDeps,
        instructions=teacher_instructions(assessment),
        name="teacher",
        toolsets=toolsets,
        output_type=[str, DeferredToolRequests],
        model_settings=_settings(max_tokens),
        retries={"tools": tries, "output": tries},
    )


def _cost(result: AgentRunResult[Any]) -> float | None:
    total = 0.0
    for message in result.new_messages():
        if isinstance(message, ModelResponse):
            try:
                total += float(message.cost().total_price)
            except (LookupError, ValueError, AssertionError):
                return None
    return total


async def stream_turn(
    agent: Agent[LessonDeps, Any],
    *,
    chat_id: str,
    messages: list[dict[str, Any]],
    reply_id: str,
    on_usage: Callable[[RunUsage], None] | None = None,
    graph: GraphReader | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """Run one agent over the transcript and yield UI message stream chunks as JSON objects.

    Args:
        agent: the role's agent.
        chat_id: the session id.
        messages: the transcript as the model must see it (no dangling tool calls), oldest first.
        reply_id: the assistant message id (sent in the `start` chunk).
        on_usage: called once with the run's usage when it completes (not when it is cancelled).
        graph: the graph's read side for the teacher's graph tools (None when they are off).

    Yields:
        Chunk dicts, e.g. `{"type": "text-delta", "id": ..., "delta": ...}`, ending with `finish`
        (or `error`). The `[DONE]` terminator is not yielded: the transport adds it. Model
        failures arrive as an `error` chunk, never as an exception.
    """
    run_input = SubmitMessage(id=chat_id, messages=[UIMessage.model_validate(m) for m in messages])
    adapter = VercelAIAdapter(
        agent=agent, run_input=run_input, sdk_version=SDK_VERSION, server_message_id=reply_id
    )

    async def on_complete(result: AgentRunResult[Any]) -> None:
        if on_usage is not None:
            usage = result.usage
            on_usage(RunUsage(usage.input_tokens, usage.output_tokens, usage.requests, _cost(result)))

    deps = LessonDeps(messages=messages, graph=graph)
    async for chunk in adapter.run_stream(deps=deps, on_complete=on_complete):
        encoded = chunk.encode(SDK_VERSION)
        if encoded == "[DONE]":
            continue
        yield orjson.loads(encoded)
