"""One role's agent run within a lesson turn (seed §5): the role's agent (built once per role,
model and tools, and kept), the transcript it reads, the steers it takes at its model-request
boundaries, and the usage it spent, as a stream of UI message chunks for the turn to relay.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models import Model

from server.agent.classroom.history import ModelHistory
from server.agent.classroom.lesson import RunUsage, build_prober, build_teacher, stream_turn
from server.agent.classroom.tools import LessonDeps
from server.agent.classroom.ui_messages import UsableMemo, usable_for_model
from server.core.classroom.phases import Role
from server.core.classroom.turns import upsert_message
from server.core.clock import Clock
from server.core.contracts.chat import ChatRecord, TurnUsage
from server.core.contracts.jobs import JobKind
from server.core.contracts.models import ResolvedModel, teacher_reads_graph
from server.core.contracts.probe import ProbeAssessment
from server.core.ports import GraphReader, SettingsStore
from server.core.transcript import for_model, probe_assessment
from server.services.classroom.context import ContextService
from server.services.classroom.turn_stream import Chunks, TurnState, artifact_chunk

log = logging.getLogger("lh.turn")

OFFLINE_MAX_TOKENS = 256
"""Reply cap for the offline demo model, in tokens (it otherwise fills its context)."""

AGENT_CACHE_SIZE = 16
"""How many built role agents are kept (least recently used dropped first)."""

OFFLINE_RETRIES = 1
"""Retries of a failed tool call for the offline demo model (each costs it tens of seconds)."""

DEMO_METADATA: dict[str, Any] = {"type": "message-metadata", "messageMetadata": {"demo": True}}
"""The chunk that marks a reply written by the offline demo model (`metadata.demo`, issue 29,
item 3): the page shows a visible demo mark on it."""

Agents = dict[tuple[Any, ...], tuple[Model, Agent[LessonDeps, Any]]]
"""Built role agents by (role, model object, cap, retries, tools, assessment), most recently used
last (`TurnService._agents`)."""
Histories = dict[tuple[str, bool], tuple[UsableMemo, ModelHistory]]
"""Per lesson and per whether its model reads images, what was checked and converted for the
model (`TurnService._histories`)."""


@dataclass(frozen=True)
class Seams:
    """What the teacher gets besides the lesson this turn (the prober gets none): the graph's
    read side for its graph tools, the Workbench's job tools with their dispatch, and the live
    intake of finished jobs' steers (None / empty: off)."""

    graph: GraphReader | None = None
    jobs: tuple[JobKind, ...] = ()
    spawn: Callable[[str, str, dict[str, Any]], str] | None = None
    steer_source: Callable[[str], list[dict[str, Any]]] | None = None


def teacher_seams(
    chat_id: str,
    *,
    offline: bool,
    settings: SettingsStore,
    graph_reader: GraphReader,
    job_tools: Callable[[], list[JobKind]],
    spawn_job: Callable[[str, str, JobKind, dict[str, Any]], str],
    steer_source: Callable[[str], list[dict[str, Any]]],
) -> Seams:
    """The teacher's seams this turn: the graph when `agent.graphTools` and `graph.enabled` are
    both on (seed §6; off when the settings cannot be read), the job tools the Workbench offers
    (none on the offline model, and none when deciding fails: a side channel, logged), each
    spawned for session `chat_id`."""
    try:
        loaded = settings.load()
        graph = graph_reader if teacher_reads_graph(loaded.graph, loaded.agent) else None
    except Exception:
        graph = None
    jobs: list[JobKind] = []
    if not offline:
        try:
            jobs = job_tools()
        except Exception:  # a side channel: the teacher teaches without job tools this turn
            log.exception("deciding the job tools failed")

    def dispatch(kind: str, tool_call_id: str, tool_input: dict[str, Any]) -> str:
        return spawn_job(chat_id, tool_call_id, kind, tool_input)  # type: ignore[arg-type]

    return Seams(graph, tuple(jobs), dispatch if jobs else None, steer_source)


def role_agent(
    agents: Agents,
    role: Role,
    model: Model,
    *,
    offline: bool,
    graph_tools: bool,
    jobs: list[JobKind],
    assessment: ProbeAssessment | None,
) -> Agent[LessonDeps, Any]:
    """The role's agent for `model`, from `agents` or built and kept there (at most
    AGENT_CACHE_SIZE, the least recently used dropped): an agent is stateless between runs (its
    runs read the lesson through their deps), so turns reuse it (issue 15: building one costs
    ~0.5 ms). `offline`: capped replies and fewer retries (the offline demo model)."""
    cap = OFFLINE_MAX_TOKENS if offline else None
    retries = OFFLINE_RETRIES if offline else None
    key = (
        role,
        id(model),
        cap,
        retries,
        graph_tools,
        tuple(jobs),
        assessment.model_dump_json() if assessment is not None else None,
    )
    built = agents.pop(key, None)
    if built is None or built[0] is not model:
        agent = (
            build_prober(model, max_tokens=cap, retries=retries)
            if role == "prober"
            else build_teacher(
                model,
                assessment=assessment,
                max_tokens=cap,
                retries=retries,
                graph_tools=graph_tools,
                job_tools=jobs,
            )
        )
        built = (model, agent)
        if len(agents) >= AGENT_CACHE_SIZE:
            agents.pop(next(iter(agents)))
    agents[key] = built  # the most recently used last
    return built[1]


def record_usage(
    state: TurnState, role: Role, resolved: ResolvedModel, clock: Clock, run: RunUsage | None
) -> None:
    """One usage entry per run, appended to `state.usage`; None (aborted or failed) records unknown
    spend, not zero. A run whose provider reported no tokens at all (pydantic-ai then counts 0 in
    and 0 out, but no real request reads nothing) is unknown too, and so is its cost."""
    reported = run is not None and bool(run.input_tokens or run.output_tokens)
    state.usage.append(
        TurnUsage(
            message_id=state.fold.message_id,
            role=role,
            provider=resolved.provider,
            model=resolved.model,
            input_tokens=run.input_tokens if run and reported else None,
            output_tokens=run.output_tokens if run and reported else None,
            requests=run.requests if run else 0,
            cost_usd=run.cost_usd if run and reported else None,
            at=clock(),
        )
    )


def take_steers(source: Callable[[str], list[dict[str, Any]]], state: TurnState) -> list[dict[str, Any]]:
    """The live intake at a model-request boundary (`source`: the Workbench's, by session):
    the steers taken are kept in `state.steers`. Contained: a failure delivers nothing now, and
    the steers stay pending for an idle wake."""
    try:
        taken = source(state.chat_id)
    except Exception:
        log.exception("taking steers for session %s failed", state.chat_id)
        return []
    state.steers.extend(taken)
    return taken


async def run_role(
    record: ChatRecord,
    role: Role,
    state: TurnState,
    resolved_model: tuple[ResolvedModel, Model],
    *,
    agents: Agents,
    histories: Histories,
    context: ContextService,
    clock: Clock,
    seams: Seams | None = None,
    skip_start: bool = False,
) -> Chunks:
    """Run `role`'s agent over the lesson (its record with the reply folded so far) and yield its
    chunks: without `start` when `skip_start` (the teacher continuing the prober's reply), and the
    steers the run took shown as artifacts (the record keeps them as their own messages, placed
    before this reply at the save, never inside it). Appends the run's usage to `state.usage`
    (unknown when the run did not complete). `seams`: the teacher's (`teacher_seams`)."""
    resolved, model = resolved_model
    seams = seams or Seams()
    state.offline = resolved.offline
    reply = state.fold.message()
    transcript = upsert_message(record.messages, reply) if reply else record.messages
    agent = role_agent(
        agents,
        role,
        model,
        offline=resolved.offline,
        graph_tools=seams.graph is not None,
        jobs=list(seams.jobs),
        assessment=probe_assessment(transcript) if role == "teacher" else None,
    )
    on_usage = partial(record_usage, state, role, resolved, clock)
    images = resolved.reads_images
    usable_memo, history = histories.setdefault((record.id, images), ({}, ModelHistory()))
    shown = context.view(record.id, transcript, offline=resolved.offline).messages
    stream = stream_turn(
        agent,
        chat_id=record.id,
        messages=usable_for_model(for_model(shown), usable_memo, images=images),
        transcript=transcript,
        history=history,
        reply_id=state.fold.message_id,
        on_usage=on_usage,
        graph=seams.graph,
        spawn=seams.spawn,
        take_steers=None if seams.steer_source is None else partial(take_steers, seams.steer_source, state),
    )
    reported = len(state.usage)
    marked = not resolved.offline
    try:
        async for chunk in stream:
            if skip_start and chunk.get("type") == "start":
                continue
            if not marked and chunk.get("type") != "start":
                marked = True
                yield {**DEMO_METADATA, "messageMetadata": {"demo": True}}  # the demo mark, live and saved
            if chunk.get("type") == "data-enqueued-messages":
                for steer in state.steers[state.announced :]:
                    yield artifact_chunk(steer)
                state.announced = len(state.steers)
                continue
            yield chunk
    finally:
        if len(state.usage) == reported:
            on_usage(None)


async def with_handoff(
    record: ChatRecord,
    role: Role,
    state: TurnState,
    first: tuple[ResolvedModel, Model],
    run: Callable[[ChatRecord, Role, TurnState, tuple[ResolvedModel, Model], bool], Chunks],
    teacher_model: Callable[[], Awaitable[tuple[ResolvedModel, Model]]],
) -> Chunks:
    """The turn's chunk stream: `role`'s run on `first` (`run`: the turn's `run_role` with its
    seams), and when the prober files `probe_done`, the teacher's right after it in the same
    reply (one `start`, one `finish`) on the model `teacher_model` resolves (Refused: 503)."""
    finish: dict[str, Any] | None = None
    async for chunk in run(record, role, state, first, False):
        if role == "prober" and chunk.get("type") == "finish":
            finish = chunk  # held back: the teacher may continue this reply
            continue
        yield chunk
    if finish is None:
        return
    reply = state.fold.message()
    if reply is None or probe_assessment([reply]) is None:
        yield finish
        return
    log.info("session %s: probe done, the teacher takes over", record.id)
    teacher = await teacher_model()
    async for chunk in run(record, "teacher", state, teacher, True):
        yield chunk
