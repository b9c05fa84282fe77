"""THE turn composition root: one lesson turn from request to persisted reply (seed §5).

In order: validate -> load the record (404) -> claim liveness (409) -> accept the learner's input
(a new message, or answers to pending questions) -> resolve the role's model (503) -> write-ahead
save -> stream the role's agent (the prober hands over to the teacher within the turn when it
files `probe_done`), folding the reply -> persist the reply and usage (also when aborted or failed)
-> release liveness (always last). A model that fails before any content answers 503.
`TurnService` composes it; the input checks and the record's writes are `turn_record`, a role's
agent run and the prober's handoff `role_runs`, the chunks' way to the browser `turn_stream`.
Slightly past 400 lines: the turn's stages above share one claimed record and its liveness slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models import Model

from server.agent.classroom.history import ModelHistory
from server.agent.classroom.tools import LessonDeps
from server.agent.classroom.ui_messages import UsableMemo
from server.core.classroom.phases import Role, phase_of, role_for
from server.core.classroom.turns import MessageIndex
from server.core.classroom.ui_stream import AssistantMessageFold
from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.chat import ChatRecord
from server.core.contracts.jobs import JobKind
from server.core.contracts.models import ResolvedModel
from server.core.events import EventBus
from server.core.fanout import FanOut, TurnSettled
from server.core.ports import ChatStore, GraphReader, SettingsStore
from server.core.refusals import Refused
from server.core.workbench.wake import idle_wake_ready, place_steers
from server.services.classroom.context import ContextService
from server.services.classroom.role_runs import run_role, teacher_seams, with_handoff
from server.services.classroom.turn_record import (
    learner_input,
    parse_request,
    persist_reply,
    with_input,
    write_ahead,
)
from server.services.classroom.turn_stream import (
    APP_FAILURE_BEFORE,
    DONE,
    Chunks,
    TurnState,
    close,
    prime,
    relay,
    sse,
)
from server.services.liveness import RunningTurn, TurnRegistry
from server.services.machine_room.background import awaited_whole
from server.services.machine_room.models import ModelService

log = logging.getLogger("lh.turn")


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
            now (`OwedSteers.take`).
        background_refusal: the 403 an idle wake of a session gets now because a subscription
            it runs has background consent off (`BackgroundConsentService.refusal`), or None.
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
        background_refusal: Callable[[str], Refused | None] = lambda chat_id: None,
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
        self.background_refusal = background_refusal
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
        message = learner_input(request, self.chats, self._index)
        record = self.chats.get(request.id)
        if record is None:
            raise Refused("not_found", "chat_not_found", f"no session {request.id!r}; start a new lesson")
        turn = self.registry.begin(record.id)
        if turn is None:
            raise Refused(
                "conflict", "turn_running", "a turn is already running in this session; wait for it"
            )
        try:
            messages, continued = with_input(record, request, message, self._index(record.id))
            role = role_for(phase_of(messages))
        except BaseException:
            self.registry.end(record.id)
            raise
        return await self._launch(turn, record, messages, continued, role)

    async def start_wake(self, chat_id: str, steers: list[dict[str, Any]]) -> RunningTurn | None:
        """An idle wake (seed §5.1): a turn whose input is finished jobs' steer messages, run
        through the normal turn composition. None when every steer is already in the record.

        Raises Refused: 404 (no session), 409 `turn_running` (back off and try again),
        409 `question_pending` (a question awaits the learner: the steers wait for that answer's
        turn), 403 `background_not_consented` (a subscription the session runs has background
        consent off: the steers wait for consent), 503 (no model)."""
        record = self.chats.get(chat_id)
        if record is None:
            raise Refused("not_found", "chat_not_found", f"no session {chat_id!r}")
        turn = self.registry.begin(record.id)
        if turn is None:
            raise Refused("conflict", "turn_running", "a turn is already running in this session")
        try:
            if not idle_wake_ready(record.messages):
                raise Refused("conflict", "question_pending", "a question awaits the learner's answer")
            refusal = self.background_refusal(record.id)
            if refusal is not None:
                raise refusal
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
            teacher = partial(self.models.model_for, record.model, "teacher")
            chunks = with_handoff(record, role, state, first, self._role_run, teacher)
            preamble = await prime(chunks, state, self.models)
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
        """Write-ahead (`turn_record.write_ahead`): the learner's input is durable before any model
        starts, written over the record as it is now (a rename made while the model was resolved
        stays; issue 12, item 6), in a worker thread awaited to its end (issue 26: twenty turns
        starting at once stalled the event loop). Raises Refused(not_found) when the session is gone."""
        saved, renamed = await awaited_whole(
            asyncio.to_thread(write_ahead, self.chats, record.id, messages, self.clock)
        )
        if saved is None:
            raise Refused("not_found", "chat_not_found", f"no session {record.id!r}; start a new lesson")
        if renamed:  # the first message named the lesson: a list-shape write
            self.events.emit("chats-changed")
        return saved

    # -- the agents -------------------------------------------------------------------------------
    def _role_run(
        self,
        record: ChatRecord,
        role: Role,
        state: TurnState,
        resolved_model: tuple[ResolvedModel, Model],
        skip_start: bool = False,
    ) -> Chunks:
        """One role's run (`role_runs.run_role`), the teacher's with its seams."""
        seams = None
        if role == "teacher":
            seams = teacher_seams(
                record.id,
                offline=resolved_model[0].offline,
                settings=self.settings,
                graph_reader=self.graph_reader,
                job_tools=self.job_tools,
                spawn_job=self.spawn_job,
                steer_source=self.steer_source,
            )
        return run_role(
            record,
            role,
            state,
            resolved_model,
            agents=self._agents,
            histories=self._histories,
            context=self.context,
            clock=self.clock,
            seams=seams,
            skip_start=skip_start,
        )

    # -- running and settling ---------------------------------------------------------------------
    async def _run(self, turn: RunningTurn, state: TurnState, preamble: list[bytes], chunks: Chunks) -> None:
        """The rest of the turn, decoupled from any HTTP connection: followers come and go, the
        turn runs to its end (or its abort) and persists."""
        try:
            await relay(turn, state, preamble, chunks, self.models)
            if state.fold.error_text is not None:
                self._failed(state.chat_id, state.fold.error_text)
            try:
                index = self._index(state.chat_id)
                saved = await awaited_whole(
                    asyncio.to_thread(persist_reply, self.chats, state, index, self.clock, self.new_id)
                )
            except Exception as exc:
                # Settlement failure is reported before [DONE], never swallowed (seed §5).
                log.exception("saving the reply of session %s failed", state.chat_id)
                text = f"the reply could not be saved: {exc}"
                self._failed(state.chat_id, text)
                turn.publish(sse({"type": "error", "errorText": text}))
            else:
                self._settled(saved)
                if state.offline and state.fold.finished and state.fold.error_text is None:
                    # a crash shown in the banner is history now; the turn measures its speed
                    written = sum(u.output_tokens or 0 for u in state.usage if u.provider == "local")
                    self.models.offline_answered(written, time.monotonic() - state.started)
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

    def _persist_reply(self, state: TurnState) -> ChatRecord | None:
        """`turn_record.persist_reply` of this service's store, clock and ids (raises as it does)."""
        return persist_reply(self.chats, state, self._index(state.chat_id), self.clock, self.new_id)

    def _settled(self, record: ChatRecord | None) -> None:
        """The side channels after a settled turn (`TurnSettled`: the extraction trigger, the
        context summaries, the naming): each contained, never touching the response or the record."""
        if record is not None:
            self.fanout.publish(TurnSettled(record))

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
