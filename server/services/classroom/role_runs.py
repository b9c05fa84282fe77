"""One role's agent run within a lesson turn (seed §5): the role's agent (built once per role,
model and tools, and kept), the transcript it reads, the steers it takes at its model-request
boundaries, and the usage it spent, as a stream of UI message chunks for the turn to relay.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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
from server.core.contracts.models import ResolvedModel
from server.core.contracts.probe import ProbeAssessment
from server.core.ports import GraphReader
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

Agents = dict[tuple[Any, ...], tuple[Model, Agent[LessonDeps, Any]]]
"""Built role agents by (role, model object, cap, retries, tools, assessment), most recently used
last (`TurnService._agents`)."""
Histories = dict[tuple[str, bool], tuple[UsableMemo, ModelHistory]]
"""Per lesson and per whether its model reads images, what was checked and converted for the
model (`TurnService._histories`)."""


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
    graph: GraphReader | None = None,
    jobs: list[JobKind] | None = None,
    spawn: Callable[[str, str, dict[str, Any]], str] | None = None,
    steer_source: Callable[[str], list[dict[str, Any]]] | None = None,
    skip_start: bool = False,
) -> Chunks:
    """Run `role`'s agent over the lesson (its record with the reply folded so far) and yield its
    chunks: without `start` when `skip_start` (the teacher continuing the prober's reply), and the
    steers the run took shown as artifacts (the record keeps them as their own messages, placed
    before this reply at the save, never inside it). Appends the run's usage to `state.usage`
    (unknown when the run did not complete). `graph`, `jobs` + `spawn` and `steer_source` are the
    teacher's seams (None / empty: off)."""
    resolved, model = resolved_model
    state.offline = resolved.offline
    reply = state.fold.message()
    transcript = upsert_message(record.messages, reply) if reply else record.messages
    agent = role_agent(
        agents,
        role,
        model,
        offline=resolved.offline,
        graph_tools=graph is not None,
        jobs=jobs or [],
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
        graph=graph,
        spawn=spawn if jobs else None,
        take_steers=partial(take_steers, steer_source, state) if steer_source is not None else None,
    )
    reported = len(state.usage)
    try:
        async for chunk in stream:
            if skip_start and chunk.get("type") == "start":
                continue
            if chunk.get("type") == "data-enqueued-messages":
                for steer in state.steers[state.announced :]:
                    yield artifact_chunk(steer)
                state.announced = len(state.steers)
                continue
            yield chunk
    finally:
        if len(state.usage) == reported:
            on_usage(None)
