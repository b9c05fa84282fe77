"""The lesson's agents and their turn stream (seed §5: prober -> teacher).

The record (a list of UIMessages) is the only truth: every turn the model's history is rebuilt
from it through pydantic-ai's Vercel AI adapter, which also turns the agent's events into AI SDK v6
UI message stream chunks. Agents are built fresh each turn (stateless).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from pydantic_ai import Agent, DeferredToolRequests, RunContext, ToolOutput
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.capabilities import AbstractCapability, PrepareOutputTools, PrepareTools
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    _drop_compaction_parts,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from pydantic_ai.ui.vercel_ai.request_types import SubmitMessage, UIMessage
from pydantic_ai.ui.vercel_ai.response_types import BaseChunk, DoneChunk

from server.agent.classroom.job_tools import job_toolset
from server.agent.classroom.tools import (
    LessonDeps,
    graph_toolset,
    offline_tool_schema,
    question_toolset,
    teacher_toolset,
)
from server.agent.machine_room.engine import WholeResponseModel
from server.agent.machine_room.model_guard import ModelFailure, model_failure_of
from server.agent.prompts import load_prompt
from server.core.contracts.jobs import JobKind
from server.core.contracts.plan import PlanTree
from server.core.contracts.probe import ProbeAssessment
from server.core.ports import GraphReader
from server.core.transcript import INTERRUPTED, has_plan, tool_name

SDK_VERSION: Literal[6] = 6
"""The AI SDK major the browser speaks (frontend pins ai@6 / @ai-sdk/react@3)."""

Role = Literal["prober", "teacher"]

log = logging.getLogger("lh.turn")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate in a Python string (a pair is one character in Python, never two)."""


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


# -- fitting the agents to the offline model (issue 9) ------------------------------------------------
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

_DETECT: Final = "detect"


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


def _offline_settings(
    tuning: OfflineTuning, base: ModelSettings | None, next_tool: Callable[[LessonDeps], str]
) -> ModelSettings | Callable[[RunContext[LessonDeps]], ModelSettings] | None:
    if not tuning.force_tool:
        return base

    def settings(ctx: RunContext[LessonDeps]) -> ModelSettings:
        return ModelSettings(**(base or {}), tool_choice=[next_tool(ctx.deps)])

    return settings


def _offline_capabilities(tuning: OfflineTuning) -> list[Any]:
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


def _tuning_for(model: Model, offline: OfflineTuning | str | None) -> OfflineTuning | None:
    if offline == _DETECT:
        return OFFLINE_TUNING if is_offline_model(model) else None
    assert offline is None or isinstance(offline, OfflineTuning)
    return offline


def _teacher_next_tool(deps: LessonDeps) -> str:
    return "quiz" if deps.plan_authored or has_plan(deps.messages) else "plan_init"


def build_prober(
    model: Model,
    *,
    max_tokens: int | None = None,
    retries: int | None = None,
    offline: OfflineTuning | str | None = _DETECT,
) -> Agent[LessonDeps, Any]:
    """The prober: asks the goal, probes floor and ceiling, ends its run by calling `probe_done`.

    `offline`: how the agent is fitted to the offline model; by default `OFFLINE_TUNING` for the
    offline model (`engine.is_offline_model`) and nothing for any other.
    """
    tries = DEFAULT_RETRIES if retries is None else retries
    tuning = _tuning_for(model, offline)
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
            _offline_settings(tuning, settings, lambda deps: prober_next_tool(deps.messages))
            if tuning
            else settings
        ),
        capabilities=[*(_offline_capabilities(tuning) if tuning else []), NoLoneSurrogates()],
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


class SteerInbox(AbstractCapability[LessonDeps]):
    """Delivers finished background jobs into a live run at its next model-request boundary
    (seed §5.1): each steer message's text is enqueued (pydantic-ai's native steering), so the
    model reads it in the request being prepared. Which steers were taken is the caller's to
    record (`LessonDeps.take_steers` is its intake); the run's stream then carries a
    `data-enqueued-messages` chunk for them."""

    async def before_model_request(self, ctx: RunContext[LessonDeps], request_context: Any) -> Any:
        take = ctx.deps.take_steers
        if take is None:
            return request_context
        for steer in take():
            text = next((p.get("text") for p in steer.get("parts", []) if p.get("type") == "text"), None)
            if text:
                ctx.enqueue(str(text))
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None


class NoLoneSurrogates(AbstractCapability[LessonDeps]):
    """Makes each model response writable before the agent acts on it (issue 26, item 3).

    A provider may send a lone surrogate (`\\udc80` JSON-escaped in its stream, decoded into a
    Python string); no JSON encoder writes one, so the reply could be neither streamed, saved, nor
    sent back to the provider. In a tool call's arguments each one becomes its JSON escape again
    (`\\udc80` as six characters), which the arguments' validation refuses ("lone leading
    surrogate in hex escape"): the call goes back to the model as a retry, like any call it got
    wrong. In text and thinking each becomes U+FFFD. What streamed before the response ended is
    made writable where the turn encodes it (`services.classroom.turn_stream.written`)."""

    async def after_model_request(
        self, ctx: RunContext[LessonDeps], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                if isinstance(part.args, str) and _LONE_SURROGATE.search(part.args):
                    part.args = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", part.args)
                elif isinstance(part.args, dict) and _LONE_SURROGATE.search(json.dumps(part.args)):
                    part.args = json.dumps(part.args)  # ASCII: each lone surrogate as its escape
                else:
                    continue
                log.warning("a %s call held a lone surrogate; it goes back to the model", part.tool_name)
            elif isinstance(part, TextPart | ThinkingPart) and _LONE_SURROGATE.search(part.content):
                part.content = _LONE_SURROGATE.sub("\ufffd", part.content)
        return response

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None


def build_teacher(
    model: Model,
    *,
    assessment: ProbeAssessment | None = None,
    max_tokens: int | None = None,
    retries: int | None = None,
    graph_tools: bool = False,
    job_tools: list[JobKind] | None = None,
    offline: OfflineTuning | str | None = _DETECT,
) -> Agent[LessonDeps, Any]:
    """The teacher: authors the plan once (`plan_init`), then teaches with tagged quizzes; with
    `graph_tools` it may read the learner's knowledge graph (`list_sessions`, `list_propositions`);
    with `job_tools` it may hand slow work to the Workbench (`research`, `demo`, `visual`), and it
    receives finished jobs' steers at its model-request boundaries (`SteerInbox`).
    `offline` as for `build_prober`."""
    tries = DEFAULT_RETRIES if retries is None else retries
    tuning = _tuning_for(model, offline)
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
        model_settings=_offline_settings(tuning, settings, _teacher_next_tool) if tuning else settings,
        capabilities=[*(_offline_capabilities(tuning) if tuning else []), SteerInbox(), NoLoneSurrogates()],
        retries={"tools": tries, "output": tries},
    )


class ModelHistory:
    """One lesson's UIMessages converted to pydantic-ai messages, each once (issue 15).

    Keyed by message id, valid while the message is the very same object (records are immutable
    values; `core.transcript.for_model` copies only messages it changes) or an equal one (the
    view's context message is made anew each turn, and changes only when the summary or the
    window does). Each turn gets fresh
    message objects with fresh part lists, so a run never changes what the cache holds.
    A system prompt a record's message carries (a `system` UIMessage) is left out, as the
    adapter's server-owned system prompt did (`stream_turn`): the agents' instructions are theirs."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[dict[str, Any], list[ModelMessage]]] = {}

    def convert(self, messages: list[dict[str, Any]]) -> list[ModelMessage]:
        out: list[ModelMessage] = []
        kept: dict[str, tuple[dict[str, Any], list[ModelMessage]]] = {}
        for message in messages:
            key = str(message.get("id"))
            hit = self._cache.get(key)
            if hit is not None and hit[0] is not message and hit[0] == message:
                hit = (message, hit[1])  # a new object, the same content (the context message)
            elif hit is None or hit[0] is not message:
                hit = (message, _without_system_prompts(_load(message)))
            kept[key] = hit
            out.extend(_with_own_parts(m) for m in hit[1])
        self._cache = kept
        return out


def _load(message: dict[str, Any]) -> list[ModelMessage]:
    """One record message as pydantic-ai messages. A message the adapter cannot load (it raises
    for a part it does not support in that role) is loaded without the parts that fail alone, and
    the log names them; when it still fails, it is left out (logged). Never raises for a message
    that passed `ui_messages.usable_for_model`, so no record can stop its lesson (issue 26)."""
    try:
        return VercelAIAdapter.load_messages([UIMessage.model_validate(message)])
    except Exception as exc:
        problem = exc
    parts = message.get("parts") or []
    kept: list[Any] = []
    dropped: list[str] = []
    for index, part in enumerate(parts):
        try:
            VercelAIAdapter.load_messages([UIMessage.model_validate({**message, "parts": [part]})])
        except Exception:
            dropped.append(f"part {index} ({str(part.get('type'))[:60] if isinstance(part, dict) else '?'})")
        else:
            kept.append(part)
    try:
        loaded = VercelAIAdapter.load_messages([UIMessage.model_validate({**message, "parts": kept})])
    except Exception:
        log.warning("message %s left out for the model: it cannot be loaded (%r)", message.get("id"), problem)
        return []
    log.warning(
        "message %s: %s left out for the model: the adapter cannot load them (%r)",
        message.get("id"),
        ", ".join(dropped) or "no part",
        problem,
    )
    return loaded


def _without_system_prompts(messages: list[ModelMessage]) -> list[ModelMessage]:
    """`messages` without `SystemPromptPart`s (a request left empty is dropped): what
    `ReinjectSystemPrompt(replace_existing=True)` removed from the history of every request, done
    once per message instead of per run (issue 15)."""
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(isinstance(p, SystemPromptPart) for p in message.parts):
            parts = [p for p in message.parts if not isinstance(p, SystemPromptPart)]
            if not parts:
                continue
            message = replace(message, parts=parts)
        out.append(message)
    return out


def _with_own_parts(message: ModelMessage) -> ModelMessage:
    """A shallow copy of `message` with its own part list (what `dataclasses.replace(message,
    parts=list(message.parts))` gives, without re-running `__init__`: ~4x faster, and a
    lesson's view holds hundreds of messages per turn; issue 15)."""
    copied = object.__new__(type(message))
    copied.__dict__.update(message.__dict__)
    copied.parts = list(message.parts)  # type: ignore[assignment]
    return copied


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
