"""The lesson's agents and their turn stream (seed §5: prober -> teacher).

The record (a list of UIMessages) is the only truth: every turn the model's history is rebuilt
from it through pydantic-ai's Vercel AI adapter, which also turns the agent's events into AI SDK v6
UI message stream chunks. Agents are stateless between runs (the turn keeps those it built).
Fitting them to the offline model is `offline_fit`, their capabilities `capabilities`, the
record's conversion into the model's history `history`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai import Agent, DeferredToolRequests, ToolOutput
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelMessage, ModelResponse, _drop_compaction_parts
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from pydantic_ai.ui.vercel_ai.request_types import SubmitMessage, UIMessage
from pydantic_ai.ui.vercel_ai.response_types import BaseChunk, DoneChunk

from server.agent.classroom.capabilities import NoLoneSurrogates, SteerInbox
from server.agent.classroom.history import ModelHistory
from server.agent.classroom.job_tools import job_toolset
from server.agent.classroom.offline_fit import (
    DETECT,
    OfflineTuning,
    offline_capabilities,
    offline_settings,
    prober_next_tool,
    teacher_next_tool,
    tuning_for,
)
from server.agent.classroom.tools import (
    LessonDeps,
    graph_toolset,
    question_toolset,
    teacher_toolset,
)
from server.agent.machine_room.model_guard import ModelFailure, model_failure_of
from server.agent.prompts import load_prompt
from server.core.contracts.jobs import JobKind
from server.core.contracts.probe import ProbeAssessment
from server.core.ports import GraphReader

SDK_VERSION: Literal[6] = 6
"""The AI SDK major the browser speaks (frontend pins ai@6 / @ai-sdk/react@3)."""

Role = Literal["prober", "teacher"]

log = logging.getLogger("lh.turn")


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
    model: Model,
    *,
    max_tokens: int | None = None,
    retries: int | None = None,
    offline: OfflineTuning | str | None = DETECT,
) -> Agent[LessonDeps, Any]:
    """The prober: asks the goal, probes floor and ceiling, ends its run by calling `probe_done`.

    `offline`: how the agent is fitted to the offline model; by default `OFFLINE_TUNING` for the
    offline model (`offline_fit.is_offline_model`) and nothing for any other.
    """
    tries = DEFAULT_RETRIES if retries is None else retries
    tuning = tuning_for(model, offline)
    settings = _settings(max_tokens)
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
        model_settings=(
            offline_settings(tuning, settings, lambda deps: prober_next_tool(deps.messages))
            if tuning
            else settings
        ),
        capabilities=[*(offline_capabilities(tuning) if tuning else []), NoLoneSurrogates()],
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
    job_tools: list[JobKind] | None = None,
    offline: OfflineTuning | str | None = DETECT,
) -> Agent[LessonDeps, Any]:
    """The teacher: authors the plan once (`plan_init`), then teaches with tagged quizzes; with
    `graph_tools` it may read the learner's knowledge graph (`list_sessions`, `list_propositions`);
    with `job_tools` it may hand slow work to the Workbench (`research`, `demo`, `visual`), and it
    receives finished jobs' steers at its model-request boundaries (`SteerInbox`).
    `offline` as for `build_prober`."""
    tries = DEFAULT_RETRIES if retries is None else retries
    tuning = tuning_for(model, offline)
    settings = _settings(max_tokens)
    toolsets = [question_toolset(tries), teacher_toolset(tries)]
    if graph_tools:
        toolsets.append(graph_toolset())
    if job_tools:
        toolsets.append(job_toolset(job_tools))
    return Agent(
        model,
        deps_type=LessonDeps,
        instructions=teacher_instructions(assessment),
        name="teacher",
        toolsets=toolsets,
        output_type=[str, DeferredToolRequests],
        model_settings=offline_settings(tuning, settings, teacher_next_tool) if tuning else settings,
        capabilities=[*(offline_capabilities(tuning) if tuning else []), SteerInbox(), NoLoneSurrogates()],
        retries={"tools": tries, "output": tries},
    )


class _FailureTellingAdapter(VercelAIAdapter[Any, Any]):
    """The Vercel AI adapter, keeping the guarded model's failure (`ModelFailure`) of a run that
    errored, so `stream_turn` can say which failure its `error` chunk is."""

    failure: ModelFailure | None = None

    def build_event_stream(self) -> Any:
        stream = super().build_event_stream()
        on_error = stream.on_error

        async def keep_failure(error: Exception) -> AsyncIterator[Any]:
            self.failure = model_failure_of(error)
            async for event in on_error(error):
                yield event

        stream.on_error = keep_failure  # type: ignore[method-assign]
        return stream


async def _run_events(
    agent: Agent[LessonDeps, Any],
    adapter: VercelAIAdapter[LessonDeps, Any],
    earlier: list[ModelMessage],
    deps: LessonDeps,
) -> AsyncIterator[Any]:
    """The run's pydantic-ai events (`agent.run_stream_events`), for the adapter to turn into
    UI message stream chunks (decision 0024, issue 15).

    What `VercelAIAdapter.run_stream_native` does for this adapter (no conversation store, no
    frontend toolset, no client state, the chat id as the conversation id), without its per-run
    `ReinjectSystemPrompt` capability: the agents have no system prompt of their own (their
    `instructions` are sent anyway), so all it did was drop system prompt parts from the history,
    and the history has none (`ModelHistory` leaves them out; the client's message goes through
    the adapter's `sanitize_messages`, which strips them). A refusal of the client's message (a
    `UserError`) is raised here, inside the stream, so it reaches the learner as an `error` chunk,
    as with `run_stream_native`."""
    deferred = adapter.deferred_tool_results
    client = adapter.sanitize_messages(
        _drop_compaction_parts(adapter.messages) if earlier else adapter.messages,
        deferred_tool_results=deferred,
    )
    async with agent.run_stream_events(
        message_history=[*earlier, *client],
        deferred_tool_results=deferred,
        conversation_id=adapter.conversation_id,
        deps=deps,
    ) as events:
        async for event in events:
            yield event


def _cost(result: AgentRunResult[Any]) -> float | None:
    total = 0.0
    for message in result.new_messages():
        if isinstance(message, ModelResponse):
            try:
                total += float(message.cost().total_price)
            except (LookupError, ValueError, AssertionError):
                return None
    return total


def chunk_data(chunk: BaseChunk) -> dict[str, Any] | None:
    """One UI message stream chunk as a JSON-shaped dict (None for the `[DONE]` terminator), the
    very object `chunk.encode(6)` writes, not encoded: the turn encodes each chunk once, after it
    has reworded it (`services.classroom.turn_stream.sse_event`, which also makes a lone surrogate
    a model sent writable; issue 26, item 3)."""
    if isinstance(chunk, DoneChunk):
        return None
    return chunk.model_dump(mode="json", by_alias=True, exclude_none=True)


async def stream_turn(
    agent: Agent[LessonDeps, Any],
    *,
    chat_id: str,
    messages: list[dict[str, Any]],
    reply_id: str,
    on_usage: Callable[[RunUsage], None] | None = None,
    graph: GraphReader | None = None,
    spawn: Callable[[str, str, dict[str, Any]], str] | None = None,
    take_steers: Callable[[], list[dict[str, Any]]] | None = None,
    transcript: list[dict[str, Any]] | None = None,
    history: ModelHistory | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """Run one agent over the transcript and yield UI message stream chunks as JSON objects.

    Args:
        agent: the role's agent.
        chat_id: the session id.
        messages: the transcript as the model must see it (no dangling tool calls), oldest first.
        reply_id: the assistant message id (sent in the `start` chunk).
        on_usage: called once with the run's usage when it completes (not when it is cancelled).
        graph: the graph's read side for the teacher's graph tools (None when they are off).
        spawn / take_steers: the Workbench's seams (`LessonDeps`).
        transcript: the whole record's messages, for the tools' checks (the plan is authored
            once); `messages` may be a bounded view of it (`core.context`). Defaults to `messages`.
        history: the lesson's conversion cache: the messages before the last are converted once
            each (the last goes through the adapter as the client's message, so answered questions
            resume as deferred tool results).

    Yields:
        Chunk dicts, e.g. `{"type": "text-delta", "id": ..., "delta": ...}`, ending with `finish`
        (or `error`). The `[DONE]` terminator is not yielded: the transport adds it. Model
        failures arrive as an `error` chunk, never as an exception; when the guarded model
        classified the failure, the chunk also carries `"failure": {"kind": FailureKind value,
        "retryAfterS": float | None, "limitS": the passed deadline in seconds | None}` (server-side
        only: strip it before the chunk reaches a client).
    """
    if history is not None and len(messages) > 1:
        earlier: list[ModelMessage] = history.convert(messages[:-1])
        run_input = SubmitMessage(id=chat_id, messages=[UIMessage.model_validate(messages[-1])])
    else:
        earlier = []
        run_input = SubmitMessage(id=chat_id, messages=[UIMessage.model_validate(m) for m in messages])
    adapter = _FailureTellingAdapter(
        agent=agent, run_input=run_input, sdk_version=SDK_VERSION, server_message_id=reply_id
    )

    async def on_complete(result: AgentRunResult[Any]) -> None:
        if on_usage is not None:
            usage = result.usage
            on_usage(RunUsage(usage.input_tokens, usage.output_tokens, usage.requests, _cost(result)))

    deps = LessonDeps(
        messages=transcript if transcript is not None else messages,
        graph=graph,
        spawn=spawn,
        take_steers=take_steers,
    )
    async for chunk in adapter.transform_stream(
        _run_events(agent, adapter, earlier, deps), on_complete=on_complete
    ):
        data = chunk_data(chunk)
        if data is None:
            continue
        if data.get("type") == "error" and adapter.failure is not None:
            data["failure"] = {
                "kind": adapter.failure.kind.value,
                "retryAfterS": adapter.failure.retry_after_s,
                "limitS": adapter.failure.limit_s,
            }
        yield data
