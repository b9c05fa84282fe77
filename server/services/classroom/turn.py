"""THE turn composition root: one lesson turn from request to persisted reply (seed §5).

In order: validate -> load the record (404) -> claim liveness (409) -> accept the learner's input
(a new message, or answers to pending questions) -> resolve the role's model (503) -> write-ahead
save -> stream the role's agent (the prober hands over to the teacher within the turn when it
files `probe_done`), folding the reply -> persist the reply and usage (also when aborted or failed)
-> release liveness (always last). A model that fails before any content answers 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import ValidationError
from pydantic_ai import Agent
from pydantic_ai.models import Model

from server.agent.classroom.lesson import ModelHistory, RunUsage, build_prober, build_teacher, stream_turn
from server.agent.classroom.tools import LessonDeps
from server.agent.classroom.ui_messages import UsableMemo, message_problem, usable_for_model
from server.core.classroom.answers import apply_answers
from server.core.classroom.phases import Role, phase_of, role_for
from server.core.classroom.turns import (
    MessageIndex,
    accept_learner_message,
    learner_message,
    title_after,
    upsert_message,
)
from server.core.classroom.ui_stream import AssistantMessageFold
from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.chat import ChatRecord, ChatRequest, TurnUsage, plain_problems
from server.core.contracts.jobs import JobKind
from server.core.contracts.models import ResolvedModel
from server.core.events import EventBus
from server.core.fanout import FanOut, TurnSettled
from server.core.machine_room.model_failures import (
    failure_in_text,
    learner_words,
    refusal_code,
    tool_error_sentence,
)
from server.core.ports import ChatStore, GraphReader, SettingsStore
from server.core.refusals import Refused
from server.core.transcript import awaits_continuation, for_model, probe_assessment
from server.core.workbench.wake import idle_wake_ready, place_steers, place_steers_in_answer
from server.services.classroom.context import ContextService
from server.services.classroom.turn_stream import (
    DONE,
    PREAMBLE_TYPES,
    Chunks,
    TurnState,
    artifact_chunk,
    close,
    sse,
    sse_event,
)
from server.services.liveness import RunningTurn, TurnRegistry
from server.services.machine_room.background import awaited_whole
from server.services.machine_room.models import ModelService

log = logging.getLogger("lh.turn")

OFFLINE_MAX_TOKENS = 256
"""Reply cap for the offline demo model, in tokens (it otherwise fills its context)."""

AGENT_CACHE_SIZE = 16
"""How many built role agents are kept (least recently used dropped first)."""

OFFLINE_RETRIES = 1
"""Retries of a failed tool call for the offline demo model (each costs it tens of seconds)."""

EARLY_END = (
    "the model's reply ended early (its stream closed without finishing); what arrived is kept, "
    "marked as cut short. Send your message again to continue"
)


APP_FAILURE = (
    "the turn failed because of an error in the app (the server log has the details); what arrived "
    "is kept, marked as cut short. Send your message again to continue"
)
"""What the learner reads of a turn that failed on the app's side after it opened (never the
exception's text: it names Python classes)."""

APP_FAILURE_BEFORE = (
    "the turn could not start because of an error in the app (the server log has the details); "
    "your message is saved. Send it again to continue"
)
"""The same, for a turn that failed before its first token (`lastFailure`)."""

_REPR = re.compile(
    r"<class '|<[A-Za-z_][\w.]* object at 0x|Traceback \(most recent|\b[A-Z]\w*(?:Error|Exception)\b"
    r"|\bpydantic(?:_core|_ai)?\.|\bserver\.\w+\."
)
"""Python's insides in an error text: a class or object repr, a traceback, an exception class's
name, a module path."""


def plain_or(text: str, instead: str) -> str:
    """`text`, unless it shows Python's insides (a class, an object repr, a traceback): then
    `instead` (the text goes to the log)."""
    if _REPR.search(text):
        log.warning("an error text not fit for a learner: %s", text[:2000])
        return instead
    return text


def learner_facing(chunk: dict[str, Any], offline: bool = False, before: bool = False) -> dict[str, Any]:
    """An `error` chunk in words a learner can act on (the framework's text stays in the log): the
    guarded model's failure as it is (one plain sentence), a known framework error said plainly,
    any other error (the app's own) as APP_FAILURE (`before` the first token: the sentence for a
    turn that did not start). Any other chunk is returned unchanged."""
    if chunk.get("type") != "error":
        return chunk
    failure = chunk.get("failure")
    chunk = {k: v for k, v in chunk.items() if k != "failure"}  # server-side only (`stream_turn`)
    text = str(chunk.get("errorText", ""))
    log.warning("turn error: %s", text)
    gave_up = failure_in_text(text, offline=offline)  # the framework's retries ran out
    if gave_up is not None:
        text = learner_words(gave_up)
    elif not failure and _REPR.search(text):
        # not the guarded model's failure (one plain sentence already) nor one known above, and
        # its text names Python's insides: the app's own error (issue 26)
        log.warning("an error not fit for a learner: %s", text[:2000])
        text = APP_FAILURE_BEFORE if before else APP_FAILURE
    return {**chunk, "errorText": text}


def plain_tool_error(chunk: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A `tool-input-error` / `tool-output-error` chunk whose errorText is pydantic's raw error list
    made one plain sentence (`tool_error_sentence`, trial finding 2); the raw text goes to the log.
    `names` maps tool call ids to tool names, learned from the turn's earlier chunks (updated here).
    Any other chunk is returned unchanged."""
    call_id = str(chunk.get("toolCallId", ""))
    if chunk.get("toolName"):
        names[call_id] = str(chunk["toolName"])
    if chunk.get("type") not in ("tool-input-error", "tool-output-error"):
        return chunk
    raw = str(chunk.get("errorText") or "")
    text = tool_error_sentence(names.get(call_id), raw)
    if text == raw:
        return chunk
    log.info("tool call %s failed: %s", call_id, raw[:2000])
    return {**chunk, "errorText": text}


def parse_request(body: bytes) -> ChatRequest:
    """Raises Refused(invalid) naming the first problems of a malformed body."""
    try:
        return ChatRequest.model_validate_json(body)
    except ValidationError as exc:
        problems = plain_problems(exc.errors(include_url=False))  # never a Python class's name
        raise Refused("invalid", "bad_request", f"malformed chat request ({problems})") from exc


class TurnService:
    """Runs lesson turns.

    Args:
        chats: the session store port (canonical writes).
        models: resolves each role's model.
        registry: the liveness registry.
        events: the browser's bus (`chats-changed` when a lesson's first message names it).
        settings: the settings port (`agent.graphTools`: whether the teacher reads the graph).
        fanout: publishes `TurnSettled` with the saved record after each settled turn (the
            Library's extraction trigger, the context summaries, the lesson's naming); its
            handlers never touch the response or the record.
        context: the model's bounded view of a long lesson (issue 15).
        graph_reader: the graph's read side the teacher's graph tools read.
        job_tools: the Workbench's offer: which job tools the teacher gets this turn.
        spawn_job: the job runner's dispatch: (session, tool call id, kind, input) -> job id.
        steer_source: the Workbench's live intake: the steers a running turn of a session takes
            now (`SteerInbox.take`).
        clock: ISO timestamp source (`server.core.clock`).
        new_id: mints message ids (`m_` + 16 hex digits).
    """

    def __init__(
        self,
        chats: ChatStore,
        models: ModelService,
        registry: TurnRegistry,
        *,
        events: EventBus,
        settings: SettingsStore,
        fanout: FanOut,
        context: ContextService,
        graph_reader: GraphReader,
        job_tools: Callable[[], list[JobKind]],
        spawn_job: Callable[[str, str, JobKind, dict[str, Any]], str],
        steer_source: Callable[[str], list[dict[str, Any]]],
        clock: Clock = utc_now,
        new_id: NewId = new_id,
    ) -> None:
        self.chats = chats
        self.models = models
        self.registry = registry
        self.events = events
        self.settings = settings
        self.fanout = fanout
        self.context = context
        self.graph_reader = graph_reader
        self.job_tools = job_tools
        self.spawn_job = spawn_job
        self.steer_source = steer_source
        self.clock = clock
        self.new_id = new_id
        self.failures: dict[str, dict[str, str]] = {}
        """Per session, the last accepted turn's failure `{detail, at}` (seed §5, late attachment):
        memory only, cleared by the session's next accepted turn, its deletion, or the server's
        exit. `GET /api/chats/{id}` shows it as `lastFailure`; never written to the record."""
        self._histories: dict[tuple[str, bool], tuple[UsableMemo, ModelHistory]] = {}
        """Per lesson and per whether its model reads images (`ResolvedModel.reads_images`): what
        was already checked and converted for the model (each message once). A lesson whose model
        changes between one that reads images and one that does not has a view for each, so each
        model gets the images as it can read them (issue 26, item 1)."""
        self._agents: dict[tuple[Any, ...], tuple[Model, Agent[LessonDeps, Any]]] = {}
        """The role agents built, by (role, model object, cap, retries, tools, assessment): an agent
        is stateless between runs (its runs read the lesson through their deps), so a turn reuses
        it (issue 15: building one costs ~0.5 ms a turn)."""
        self._indexes: dict[str, MessageIndex] = {}
        """Per lesson: where each message id sits in its record (accepting and placing by id)."""
        self._waking: set[str] = set()
        """Sessions whose idle wake is starting and has not opened: a failure there is quiet (seed
        §5.1, no new error UI for a turn the learner never started), so it is not `lastFailure`."""

    # -- accepting a turn -------------------------------------------------------------------------
    async def start(self, body: bytes) -> RunningTurn:
        """Accept a turn, or raise Refused with nothing written (400/404/409/503).

        The learner's input is either a new user message (the last message of the body) or the
        answers to pending questions (the last message is the assistant's, as `addToolOutput`
        leaves it). A failed write-ahead save raises OSError (the API answers 500).
        """
        request = parse_request(body)
        incoming = request.messages[-1]
        message: dict[str, Any] | None = None
        if incoming.role == "user":  # checked whole before anything is written (issue 26, item 1)
            try:
                message = learner_message(request)
            except Refused:
                message = self._held_again(request)  # a retry of what the record holds, or raise
        elif incoming.role == "assistant":  # the answers to pending questions (`addToolOutput`)
            problem = message_problem(incoming.model_dump(mode="python"))
            if problem is not None:  # issue 10, defect 1
                raise Refused(
                    "invalid",
                    "bad_request",
                    f"the message is malformed ({problem}); nothing was saved, send it again",
                )
        else:
            raise Refused(
                "invalid",
                "bad_request",
                f"the last message must be the learner's (role 'user') or the answered questions "
                f"(role 'assistant'), got '{incoming.role}'; nothing was saved",
            )
        record = self.chats.get(request.id)
        if record is None:
            raise Refused("not_found", "chat_not_found", f"no session {request.id!r}; start a new lesson")
        turn = self.registry.begin(record.id)
        if turn is None:
            raise Refused(
                "conflict", "turn_running", "a turn is already running in this session; wait for it"
            )
        try:
            if message is not None:
                messages = accept_learner_message(
                    record.messages,
                    message,
                    regenerate=request.trigger == "regenerate-message",
                    index=self._index(record.id),
                )
                continued = None
            else:
                messages = self._answers_or_continuation(
                    record.messages, incoming.model_dump(mode="json", exclude_none=True)
                )
                self._index(record.id).moved(record.messages, messages)  # the last one replaced
                continued = messages[-1]
            role = role_for(phase_of(messages))
        except BaseException:
            self.registry.end(record.id)
            raise
        return await self._launch(turn, record, messages, continued, role)

    def _held_again(self, request: ChatRequest) -> dict[str, Any]:
        """The last message of `request` when it is, unchanged, a user message the record already
        holds (the browser's retry resends the record's own message: a steer of a wake that
        failed, or a message an older build took); else the refusal `learner_message` raised."""
        raw = request.messages[-1].model_dump(mode="python")
        record = self.chats.get(request.id)
        if record is not None:
            at = self._index(record.id).position(record.messages, raw.get("id"))
            if at is not None and record.messages[at] == raw:
                return record.messages[at]
        return learner_message(request)  # raises its Refused again

    async def start_wake(self, chat_id: str, steers: list[dict[str, Any]]) -> RunningTurn | None:
        """An idle wake (seed §5.1): a turn whose input is finished jobs' steer messages, run
        through the normal turn composition. None when every steer is already in the record.

        Raises Refused: 404 (no session), 409 `turn_running` (back off and try again),
        409 `question_pending` (a question awaits the learner: the steers wait for that answer's
        turn), 503 (no model)."""
        record = self.chats.get(chat_id)
        if record is None:
            raise Refused("not_found", "chat_not_found", f"no session {chat_id!r}")
        turn = self.registry.begin(record.id)
        if turn is None:
            raise Refused("conflict", "turn_running", "a turn is already running in this session")
        try:
            if not idle_wake_ready(record.messages):
                raise Refused("conflict", "question_pending", "a question awaits the learner's answer")
            messages = place_steers(record.messages, steers)
            if len(messages) == len(record.messages):
                self.registry.end(record.id)
                return None
            role = role_for(phase_of(messages))
        except BaseException:
            self.registry.end(record.id)
            raise
        log.info("session %s: woken by %d finished job(s)", record.id, len(messages) - len(record.messages))
        self._waking.add(record.id)
        try:
            return await self._launch(turn, record, messages, None, role)
        finally:
            self._waking.discard(record.id)

    async def _launch(
        self,
        turn: RunningTurn,
        record: ChatRecord,
        messages: list[dict[str, Any]],
        continued: dict[str, Any] | None,
        role: Role,
    ) -> RunningTurn:
        """Run an accepted turn as a task the registry holds; returns once it opened (or raises
        what refused it before anything streamed)."""
        if record.id not in self._waking:  # a wake's start may still fail quietly (popped at its opening)
            self.failures.pop(record.id, None)  # accepted: an earlier failure is no longer the news
        # From here on the turn is a task the registry holds, so an abort reaches it at every
        # moment: while the model is resolved (the offline model starting), before the first
        # token, and after (issue 10, defect 2). This request waits for the turn's opening.
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        opened.add_done_callback(lambda f: None if f.cancelled() else f.exception())  # retrieved
        turn.task = asyncio.get_running_loop().create_task(
            self._open_and_run(turn, record, messages, continued, role, opened), name=f"turn {record.id}"
        )
        await asyncio.shield(opened)
        return turn

    @staticmethod
    def _answers_or_continuation(
        messages: list[dict[str, Any]], incoming: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The learner's answers applied; or, when they were saved but the teacher never went on
        (`awaits_continuation`), the record as it is, to be continued. Raises Refused as
        `apply_answers` does."""
        try:
            return apply_answers(messages, incoming)
        except Refused as exc:
            same = bool(messages) and messages[-1].get("id") == incoming.get("id")
            if exc.code == "not_pending" and same and awaits_continuation(messages):
                return list(messages)  # the record's own messages, never mutated (issue 15)
            raise

    async def _open_and_run(
        self,
        turn: RunningTurn,
        record: ChatRecord,
        messages: list[dict[str, Any]],
        continued: dict[str, Any] | None,
        role: Role,
        opened: asyncio.Future[None],
    ) -> None:
        """Resolve the model (503 before anything is written), write the input ahead, read up to
        the first content (503 when the model fails before it), then run the rest of the turn.
        A refusal or an abort before the opening is handed to `start` through `opened`."""
        state: TurnState | None = None
        try:
            first = await self.models.model_for(record.model, role)  # 503 before anything is written
            record = await self._save_input(record, messages)
            state = TurnState(
                record.id, AssistantMessageFold(self.new_id("m_"), initial=continued), continued=continued
            )
            chunks = self._chunks(record, role, state, first)
            preamble = await self._prime(chunks, state)
        except asyncio.CancelledError:  # aborted before its first token: the learner's input stays
            if state is not None:
                await close(chunks)
                state.fold.interrupted = True
                try:  # the run's usage is unknown, not zero (seed §5), and is kept
                    self._persist_reply(state)
                except Exception:
                    log.exception("saving the usage of aborted session %s failed", record.id)
            self.registry.end(record.id)
            turn.publish(sse({"type": "abort"}))
            turn.publish(DONE)
            turn.finish()
            if not opened.done():
                opened.set_result(None)
            raise
        except BaseException as exc:
            prior = self.failures.get(record.id)
            if isinstance(exc, Refused):
                self._failed(record.id, exc.detail)
            elif isinstance(exc, Exception):
                log.error("session %s: the turn could not start", record.id, exc_info=exc)
                self._failed(
                    record.id,
                    f"the turn could not start: saving the lesson failed ({exc.strerror or 'no reason'})"
                    if isinstance(exc, OSError)
                    else APP_FAILURE_BEFORE,
                )
            # a window attached meanwhile (GET /stream) sees why in plain words, then the terminal,
            # never an empty 200 (seed §5); the notice is the one `lastFailure` shows (only this
            # turn's: a quiet failure publishes the terminal alone)
            notice = None if record.id in self._waking else self.failures.get(record.id)  # a wake: quiet
            if notice is not None and notice is not prior:
                turn.publish(sse({"type": "error", "errorText": notice["detail"]}))
            turn.publish(DONE)
            self.registry.end(record.id)
            turn.finish()
            if not opened.done():
                opened.set_exception(exc)
            if isinstance(exc, Exception):
                return
            raise
        if record.id in self._waking:  # the wake opened: from here on it is a turn like any other
            self._waking.discard(record.id)
            self.failures.pop(record.id, None)
        opened.set_result(None)
        await self._run(turn, state, preamble, chunks)

    async def _save_input(self, record: ChatRecord, messages: list[dict[str, Any]]) -> ChatRecord:
        """Write-ahead: the learner's input is durable before any model starts.

        Written over the record as it is now, not as the turn first read it: resolving the model
        may take seconds (the offline model starting), and a rename made meanwhile must stay
        (issue 12, item 6); the read and the write are one `ChatStore.update`. Only this turn
        writes messages while it holds the session's claim. The write (its fdatasync) runs in a
        worker thread, awaited to its end (issue 26: twenty turns starting at once stalled the
        event loop for their fdatasyncs in a row). Raises Refused(not_found) when the session is
        gone."""
        renamed = False

        def write_ahead(fresh: ChatRecord) -> ChatRecord:
            nonlocal renamed
            title = title_after(fresh.title, messages)
            renamed = title != fresh.title
            return fresh.model_copy(update={"messages": messages, "updated_at": self.clock(), "title": title})

        saved = await awaited_whole(asyncio.to_thread(self.chats.update, record.id, write_ahead))
        if saved is None:
            raise Refused("not_found", "chat_not_found", f"no session {record.id!r}; start a new lesson")
        if renamed:  # the first message named the lesson: a list-shape write
            self.events.emit("chats-changed")
        return saved

    # -- the agents -------------------------------------------------------------------------------
    async def _chunks(
        self, record: ChatRecord, role: Role, state: TurnState, first: tuple[ResolvedModel, Model]
    ) -> Chunks:
        """The turn's chunk stream: the role's agent, and when the prober files `probe_done`,
        the teacher right after it in the same reply (one `start`, one `finish`)."""
        finish: dict[str, Any] | None = None
        async for chunk in self._agent_run(record, role, state, first):
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
        teacher = await self.models.model_for(record.model, "teacher")
        async for chunk in self._agent_run(record, "teacher", state, teacher, skip_start=True):
            yield chunk

    async def _agent_run(
        self,
        record: ChatRecord,
        role: Role,
        state: TurnState,
        resolved_model: tuple[ResolvedModel, Model],
        skip_start: bool = False,
    ) -> Chunks:
        resolved, model = resolved_model
        state.offline = resolved.offline
        reply = state.fold.message()
        transcript = upsert_message(record.messages, reply) if reply else record.messages
        cap = OFFLINE_MAX_TOKENS if resolved.offline else None
        retries = OFFLINE_RETRIES if resolved.offline else None
        graph = self._graph_for_teacher() if role == "teacher" else None
        jobs = self._job_tools() if role == "teacher" and not resolved.offline else []
        assessment = probe_assessment(transcript) if role == "teacher" else None
        key = (
            role,
            id(model),
            cap,
            retries,
            graph is not None,
            tuple(jobs),
            assessment.model_dump_json() if assessment is not None else None,
        )
        built = self._agents.pop(key, None)
        if built is None or built[0] is not model:
            agent = (
                build_prober(model, max_tokens=cap, retries=retries)
                if role == "prober"
                else build_teacher(
                    model,
                    assessment=assessment,
                    max_tokens=cap,
                    retries=retries,
                    graph_tools=graph is not None,
                    job_tools=jobs,
                )
            )
            built = (model, agent)
            if len(self._agents) >= AGENT_CACHE_SIZE:
                self._agents.pop(next(iter(self._agents)))
        self._agents[key] = built  # the most recently used last
        agent = built[1]

        def record_usage(run: RunUsage | None) -> None:
            """One usage entry per run; None (aborted or failed) records unknown spend, not zero.
            A run whose provider reported no tokens at all (pydantic-ai then counts 0 in and 0
            out, but no real request reads nothing) is unknown too, and so is its cost."""
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
                    at=self.clock(),
                )
            )

        images = resolved.reads_images
        usable_memo, history = self._histories.setdefault((record.id, images), ({}, ModelHistory()))
        shown = self.context.view(record.id, transcript, offline=resolved.offline).messages
        stream = stream_turn(
            agent,
            chat_id=record.id,
            messages=usable_for_model(for_model(shown), usable_memo, images=images),
            transcript=transcript,
            history=history,
            reply_id=state.fold.message_id,
            on_usage=record_usage,
            graph=graph,
            spawn=self._spawner(record.id) if jobs else None,
            take_steers=(lambda: self._take_steers(state)) if role == "teacher" else None,
        )
        reported = len(state.usage)
        try:
            async for chunk in stream:
                if skip_start and chunk.get("type") == "start":
                    continue
                if chunk.get("type") == "data-enqueued-messages":
                    # the steers the run took: shown as artifacts; the record keeps them as their
                    # own messages (placed before this reply at the save), never inside it
                    for steer in state.steers[state.announced :]:
                        yield artifact_chunk(steer)
                    state.announced = len(state.steers)
                    continue
                yield chunk
        finally:
            if len(state.usage) == reported:
                record_usage(None)

    async def _prime(self, chunks: Chunks, state: TurnState) -> list[bytes]:
        """Read up to the first content chunk; returns their SSE events. A model error before any
        content is a 503, not a stream."""
        preamble: list[bytes] = []
        async for chunk in chunks:
            if chunk.get("type") == "error":
                state.fold.add(chunk)
                await close(chunks)
                crash = (
                    await self.models.offline_failure(state.started, chunk.get("failure"))
                    if state.offline
                    else None
                )
                if crash:
                    raise Refused(
                        "unavailable",
                        "model_unreachable",
                        f"{crash}. Send your message again in a moment, or add an API key in Settings "
                        "to use a hosted model.",
                    )
                # the guarded engine's errors are one plain sentence that says what to do
                # (server.core.machine_room.model_failures); nothing is appended to it
                said = str(learner_facing(chunk, state.offline, before=True).get("errorText") or "")
                if said == APP_FAILURE_BEFORE:  # the app's own error, not the model's
                    raise Refused("unavailable", "model_unreachable", said)
                text = plain_or(said or "the model gave no reason", APP_FAILURE_BEFORE).strip().rstrip(".")
                failure = chunk.get("failure") or {}
                wait = failure.get("retryAfterS")
                raise Refused(
                    "unavailable",
                    refusal_code(failure.get("kind")),
                    f"the model failed before replying: {text}",
                    float(wait) if isinstance(wait, int | float) else None,
                )
            chunk, line = sse_event(chunk)
            state.fold.add(chunk)
            preamble.append(line)
            if chunk.get("type") not in PREAMBLE_TYPES:
                break
        return preamble

    # -- running and settling ---------------------------------------------------------------------
    async def _run(self, turn: RunningTurn, state: TurnState, preamble: list[bytes], chunks: Chunks) -> None:
        """The rest of the turn, decoupled from any HTTP connection: followers come and go, the
        turn runs to its end (or its abort) and persists."""
        try:
            for line in preamble:
                turn.publish(line)
            tool_names: dict[str, str] = {}
            try:
                async for chunk in chunks:
                    chunk = plain_tool_error(chunk, tool_names)
                    crash = (
                        await self.models.offline_failure(state.started, chunk.get("failure"))
                        if chunk.get("type") == "error" and state.offline
                        else None
                    )
                    if crash:
                        chunk = {
                            "type": "error",
                            "errorText": f"{crash}. Send your message again in a moment.",
                        }
                    else:
                        chunk = learner_facing(chunk, state.offline)  # saved as the learner read it
                    chunk, line = sse_event(chunk)  # the chunk's one encode
                    state.fold.add(chunk)
                    turn.publish(line)
            except Refused as exc:  # e.g. the teacher's model cannot run after the handoff
                self._fail(turn, state, exc.detail)
            except Exception:
                log.exception("turn of session %s failed", state.chat_id)
                self._fail(turn, state, APP_FAILURE)
            if not state.fold.finished and state.fold.error_text is None:
                # the stream ended without `finish` and without an error: say so, live and saved
                self._fail(turn, state, EARLY_END)
            if not state.fold.finished:
                state.fold.interrupted = True
            if state.fold.error_text is not None:
                self._failed(state.chat_id, state.fold.error_text)
            try:
                saved = await awaited_whole(asyncio.to_thread(self._persist_reply, state))
            except Exception as exc:
                # Settlement failure is reported before [DONE], never swallowed (seed §5).
                log.exception("saving the reply of session %s failed", state.chat_id)
                text = f"the reply could not be saved: {exc}"
                self._failed(state.chat_id, text)
                turn.publish(sse({"type": "error", "errorText": text}))
            else:
                self._settled(saved)
                if state.offline and state.fold.finished and state.fold.error_text is None:
                    self.models.offline_answered()  # a crash shown in the banner is history now
            turn.publish(DONE)
        finally:
            try:
                if not state.fold.saved:  # aborted or failed: keep what streamed, marked as cut short
                    state.fold.interrupted = True
                    self._persist_reply(state)
            except Exception:
                log.exception("saving the partial reply of session %s failed", state.chat_id)
            finally:
                await close(chunks)
                self.registry.end(state.chat_id)
                turn.finish()

    def _index(self, chat_id: str) -> MessageIndex:
        return self._indexes.setdefault(chat_id, MessageIndex())

    def _failed(self, chat_id: str, detail: str) -> None:
        """Record the session's `lastFailure`; not for a wake that failed before it opened."""
        if chat_id in self._waking:
            log.info("session %s: the wake could not start (%s); the result stays pending", chat_id, detail)
            return
        self.failures[chat_id] = {"detail": detail, "at": self.clock()}

    def forget(self, chat_id: str) -> None:
        """The session was deleted: its failure notice and conversion caches go with it."""
        self.failures.pop(chat_id, None)
        for images in (True, False):
            self._histories.pop((chat_id, images), None)
        self._indexes.pop(chat_id, None)

    @staticmethod
    def _fail(turn: RunningTurn, state: TurnState, text: str) -> None:
        """An error the learner sees live and finds again in the saved reply (`metadata.error`)."""
        chunk, line = sse_event({"type": "error", "errorText": text})
        state.fold.add(chunk)
        turn.publish(line)

    def _persist_reply(self, state: TurnState) -> ChatRecord | None:
        """Canonical write of the reply and its usage (one `ChatStore.update`: a rename saved
        meanwhile stays); raises loudly (OSError, StoreCorrupt). Returns the saved record (None
        when the session vanished). Thread-safe for the turn that owns `state` (a settled turn
        runs it in a worker thread)."""
        state.fold.saved = True
        reply = state.fold.message()
        stored = self.chats.update(state.chat_id, lambda record: self._with_reply(record, state, reply))
        if stored is None:  # the session was deleted mid-turn; nothing to attach the reply to
            log.warning("session %s vanished during its turn; reply dropped", state.chat_id)
        return stored

    def _with_reply(self, record: ChatRecord, state: TurnState, reply: dict[str, Any] | None) -> ChatRecord:
        """`record` with the turn's reply, steers and usage placed (`record` itself when there is
        nothing to write)."""
        if reply is None and not state.usage:
            return record
        update: dict[str, Any] = {"updated_at": self.clock(), "usage": [*record.usage, *state.usage]}
        if reply is not None:
            update["messages"] = upsert_message(record.messages, reply, self._index(record.id))
        if state.steers and reply is not None and state.continued is not None:
            # an answer turn: after the answered question, its continuation a message of its own
            update["messages"] = place_steers_in_answer(
                update["messages"],
                state.steers,
                reply=reply,
                answered=state.continued,
                tail_id=self.new_id("m_"),
            )
        elif state.steers:  # delivered into the live run: placed before its reply, each once
            update["messages"] = place_steers(
                update.get("messages", record.messages), state.steers, before=reply["id"] if reply else None
            )
        return record.model_copy(update=update)

    def _settled(self, record: ChatRecord | None) -> None:
        """The side channels after a settled turn (`TurnSettled`: the extraction trigger, the
        context summaries, the naming): each contained, never touching the response or the record."""
        if record is not None:
            self.fanout.publish(TurnSettled(record))

    def _job_tools(self) -> list[JobKind]:
        try:
            return self.job_tools()
        except Exception:  # a side channel: the teacher teaches without job tools this turn
            log.exception("deciding the job tools failed")
            return []

    def _spawner(self, chat_id: str) -> Callable[[str, str, dict[str, Any]], str]:
        spawn = self.spawn_job

        def dispatch(kind: str, tool_call_id: str, tool_input: dict[str, Any]) -> str:
            return spawn(chat_id, tool_call_id, kind, tool_input)  # type: ignore[arg-type]

        return dispatch

    def _take_steers(self, state: TurnState) -> list[dict[str, Any]]:
        """The live intake at a model-request boundary: contained (a failure delivers nothing now;
        the steers stay pending for an idle wake)."""
        try:
            taken = self.steer_source(state.chat_id)
        except Exception:
            log.exception("taking steers for session %s failed", state.chat_id)
            return []
        state.steers.extend(taken)
        return taken

    def _graph_for_teacher(self) -> GraphReader | None:
        """The graph's read side when `agent.graphTools` is on."""
        try:
            enabled = self.settings.load().agent.graph_tools
        except Exception:
            return None
        return self.graph_reader if enabled else None

    # -- other entry points -----------------------------------------------------------------------
    def follow(self, chat_id: str) -> AsyncIterator[bytes] | None:
        """The running turn's lines from its start (for reattaching), or None when none runs."""
        turn = self.registry.get(chat_id)
        return turn.follow() if turn else None

    async def abort(self, chat_id: str, wait_s: float = 10.0) -> bool:
        """Abort the session's running turn and wait (up to `wait_s`) until it has saved what
        streamed, so a read right after sees the settled record. False when none runs."""
        turn = self.registry.get(chat_id)
        if turn is None or not turn.abort():
            return False
        if turn.task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait({turn.task}, timeout=wait_s)
        return True

    async def shutdown(self) -> None:
        """Cancel running turns (server exit); each persists what streamed."""
        tasks = [t.task for t in self.registry.all() if t.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
