"""Builds every service for one data dir: the app's single wiring point above storage.

Every service receives what it uses at construction; none is assigned a collaborator afterwards
and none checks for a missing one at run time. What one service settles and others act on (a
turn settled, a lesson deleted, a job's outcome saved, a merge landed) is published as a small
message through one `FanOut`, whose table `{message type: [handlers]}` is declared here. The
clock and id makers (`server.core.clock`) are passed in here too.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from server.agent.library.embedder import IDLE_RELEASE_S, OnnxEmbedder
from server.agent.machine_room.subscription_clients import build_clients
from server.agent.workbench.headless import ChromiumHeadless
from server.config import SHELL_SECRET_ENV, TOKEN_ENV, DataPaths
from server.core.clock import new_id, utc_now
from server.core.contracts.jobs import JobKind
from server.core.events import EventBus
from server.core.fanout import FanOut, JobOutcomeSaved, LessonDeleted, MergeLanded, TurnSettled
from server.core.machine_room.local_servers import ports_in
from server.core.ports import Headless, SecretStore
from server.services.chats import ChatService
from server.services.classroom.context import ContextService
from server.services.classroom.naming import NamingService
from server.services.classroom.turn import TurnService
from server.services.library.extraction import ExtractionService
from server.services.library.graph import GraphService, MergeGate
from server.services.library.library import LibraryService
from server.services.library.memory import release_memory
from server.services.liveness import TurnRegistry
from server.services.machine_room.backup import BackupService
from server.services.machine_room.first_run import FirstRunService
from server.services.machine_room.models import ModelFactory, ModelService
from server.services.machine_room.offline_build import OfflineBuild, builder_command
from server.services.machine_room.offline_model import OfflineModelServer
from server.services.machine_room.search import SearchService
from server.services.machine_room.subscriptions import SubscriptionService
from server.services.practice.sets import PracticeService
from server.services.stores import Stores, build_stores
from server.services.trash import TrashService
from server.services.workbench.consent import BackgroundConsentService
from server.services.workbench.reads import JobReads
from server.services.workbench.runner import JobRunner
from server.services.workbench.steers import OwedSteers
from server.services.workbench.wake import WakeService
from server.services.workbench.workers import WorkerHost

log = logging.getLogger("lh.services")


@dataclass
class Services:
    """What the transport layer calls. Built once per server, never at import time."""

    paths: DataPaths
    stores: Stores
    models: ModelService
    chats: ChatService
    turns: TurnService
    registry: TurnRegistry
    offline: OfflineModelServer | None
    extraction: ExtractionService
    library: LibraryService
    graph: GraphService
    practice: PracticeService
    events: EventBus
    jobs: JobRunner
    wake: WakeService
    workers: WorkerHost
    job_reads: JobReads
    context: ContextService
    naming: NamingService
    subscriptions: SubscriptionService
    backup: BackupService
    """Back up the data dir; check and stage a restore (decision 0041)."""
    trash: TrashService
    """Deleted lessons and problem sets, kept 30 days; restore, empty (decision 0043)."""
    search: SearchService
    """Search lessons, propositions and practice sets (a derived index; decision 0044)."""
    consent: BackgroundConsentService
    """Background consent per subscription (seed §8.1; the wake gate's "consented")."""
    first_run: FirstRunService = field(default_factory=lambda: FirstRunService(ports_in(os.environ)))
    """The first screen's key test and local model servers (ports from `LH_LOCAL_SERVER_PORTS`)."""

    async def startup(self) -> None:
        """Resume what was accepted before a crash (the accepted queue's imports and lesson
        triggers, problem sets and grades left running), re-arm lessons' idle flushes (timers live
        in memory), and start the offline model early when it is what the strong slot resolves to."""
        try:  # before the resumes: a half-done move is put back first
            self.trash.startup()
        except Exception:  # the trash stays as it is; the next start tries again
            log.exception("recovering or purging the trash failed")
        try:  # before the idle timers: a lesson flushed now is not armed too
            resumed = self.library.resume_accepted()
            if any(resumed.values()):
                log.info("accepted work resumed after a restart: %s", resumed)
        except Exception:  # the queue stays as it is; the next start tries again
            log.exception("resuming the accepted queue failed")
        try:
            armed = self.library.resume_pending()
            if armed:
                log.info("%d lessons wait to be read into the graph", armed)
        except Exception:  # a side channel: the next settled turn re-arms the lesson
            log.exception("re-arming lessons' idle flushes failed")
        try:
            self.practice.resume()
        except Exception:  # the sets stay as they are; the next start tries again
            log.exception("resuming interrupted problem sets failed")
        try:  # lazy recovery (seed §5.1): what finished jobs still owe their lessons
            self.wake.recover(self.jobs.recover())
        except Exception:  # the job records stay as they are; the next start tries again
            log.exception("recovering pending job deliveries failed")
        if self.offline is not None and not self.offline.installed and (command := builder_command()):
            # `make run` (issue 29): llama.cpp is built in the background; picked up when it ends
            self.offline.build = OfflineBuild(
                command, self.paths.logs / "offline-build.log", self._offline_built
            )
            self.offline.build.start()
        self._start_offline_if_used()
        self.search.warm()  # a data dir without a search index is indexed in the background

    def _start_offline_if_used(self) -> None:
        """Start the offline model when it is available and the strong slot resolves to it."""
        if self.offline is None or not self.offline.available:
            return
        try:
            strong = self.models.status()["resolved"]["strong"]
        except Exception:  # corrupt settings: the settings page says so; start nothing
            log.warning("settings unreadable at startup; offline model not started", exc_info=True)
            return
        if strong and strong.get("offline"):
            self.offline.ensure_started()

    def _offline_built(self) -> None:
        """The background build installed llama.cpp: the offline model is offered from now on
        (each slot resolves anew per request) and started at once when lessons use it."""
        if self.offline is not None and self.offline.look_again():
            self._start_offline_if_used()
        elif self.offline is not None:
            log.error("llama.cpp was built, but the offline model is still not available here")

    async def shutdown(self) -> None:
        """Cancel running turns (each persists what streamed) and extraction runs (a cancelled job
        checkpoints nothing), then stop the offline model."""
        await self.turns.shutdown()
        await self.wake.shutdown()
        await self.context.shutdown()
        await self.naming.shutdown()
        await self.subscriptions.shutdown()
        await self.jobs.shutdown()
        close = getattr(self.workers.headless, "close", None)
        if close is not None:
            try:
                await close()
            except Exception:
                log.warning("closing the headless browser failed", exc_info=True)
        self.library.shutdown()
        await self.practice.shutdown()
        await self.extraction.shutdown()
        if self.offline is not None:
            self.offline.stop()
        self.stores.chats.flush()  # the session index's pending write (it is written at most once a second)
        flush = getattr(self.stores.graph, "flush", None)  # the source and usage appends' fsyncs
        if flush is not None:
            await asyncio.to_thread(flush, 10.0)
        await asyncio.to_thread(self.stores.intake.flush, 10.0)  # settled entries' fsyncs


def build_services(
    paths: DataPaths,
    *,
    model_factory: ModelFactory | None = None,
    offline: bool = True,
    secrets: SecretStore | None = None,
    offline_server: OfflineModelServer | None = None,
    headless: Headless | None = None,
) -> Services:
    """Wire the services for a data dir: each service receives everything it uses at construction
    (nothing is assigned afterwards), and the fan-outs are one table of handlers (`FanOut`).

    Args:
        paths: the data dir.
        model_factory: builds model clients (tests inject scripted models).
        offline: whether to manage the offline llama.cpp server (tests with scripted models pass False).
        secrets: overrides the key store (tests).
        offline_server: overrides the offline model server (tests pass one with a scripted child).
        headless: overrides the browser that verifies demos and visuals (tests pass a fake).

    Returns the `Services`; nothing runs until `Services.startup` (no thread, task or child
    process is started here). Raises OSError when the data dir's stores cannot be opened.
    """
    stores = build_stores(paths, secrets=secrets)
    if offline_server is None and offline:
        offline_server = OfflineModelServer(paths.logs / "offline-model.log")
    events = EventBus()  # the browser's notification bus behind GET /api/events
    # The in-process fan-outs: who acts on what another service settled, in one table. Its
    # handlers name services built below (each publisher receives `fanout` at construction);
    # nothing is published before this function returns. Each handler is contained on its own.
    fanout = FanOut(
        {
            TurnSettled: [
                lambda m: library.lesson_settled(m.record),  # arm the lesson's idle extraction
                lambda m: context.settled(m.record),  # summarise a long lesson's older turns
                lambda m: naming.settled(m.record),  # name a lesson still called "New lesson"
            ],
            LessonDeleted: [
                lambda m: library.lesson_deleted(m.chat_id),  # forget its pending flush
                lambda m: turns.forget(m.chat_id),  # its model views, agents and last failure
                lambda m: wake.forget(m.chat_id),  # its delivery obligations
                lambda m: jobs.discard(m.chat_id),  # its job records
                lambda m: context.forget(m.chat_id),
                lambda m: naming.forget(m.chat_id),
            ],
            JobOutcomeSaved: [lambda m: wake.intake(m.job)],  # deliver the steer into its lesson
            MergeLanded: [lambda m: graph.settle_layout()],  # awaited: settle the layout
        }
    )
    desktop = bool(os.environ.get(TOKEN_ENV))
    subscriptions = SubscriptionService(  # the one process-global owner of subscription logins
        None if desktop else stores.subscriptions,
        build_clients(os.environ),
        events,
        desktop=desktop,
        shell_secret=os.environ.get(SHELL_SECRET_ENV),
    )
    models = ModelService(
        stores.settings, stores.secrets, offline_server, model_factory, subscriptions=subscriptions
    )
    registry = TurnRegistry(events)
    extraction = ExtractionService(
        stores.graph,
        lambda: models.model_for_role("extraction"),
        clock=utc_now,
        events=events,
        embedder=OnnxEmbedder(idle_release_s=IDLE_RELEASE_S, released=release_memory),  # issue 28 item 3
        fanout=fanout,
        new_id=new_id,
    )
    library = LibraryService(
        stores.graph,
        extraction,
        stores.settings,
        clock=utc_now,
        chats=stores.chats,
        turn_running=registry.running,
        context_window=lambda: models.context_window("extraction"),
        intake=stores.intake,
        events=events,
        new_id=new_id,
    )
    graph = GraphService(
        stores.graph,
        stores.chats,
        MergeGate(extraction.merge_section, extraction.running),
        events=events,
        clock=utc_now,
        new_id=new_id,
    )
    context = ContextService(
        stores.summaries, stores.settings, lambda: models.model_for_role("summaries"), extraction.permits
    )
    naming = NamingService(stores.chats, lambda: models.model_for_role("naming"), events)
    trash = TrashService(stores.trash, stores.chats, stores.chats.held, stores.jobs, events, clock=utc_now)
    practice = PracticeService(  # the one background-model pool (permits), shared with extraction
        stores.practice,
        stores.graph,
        models.model_for_role,
        extraction.permits,
        events,
        clock=utc_now,
        new_id=new_id,
        discard=trash.practice_set,
    )

    if headless is None:
        headless = ChromiumHeadless()
    workers = WorkerHost(models, headless, stores.settings)
    jobs = JobRunner(
        stores.jobs, workers.run, extraction.permits, events, fanout=fanout, clock=utc_now, new_id=new_id
    )

    def spawn_job(chat_id: str, call_id: str, kind: JobKind, tool_input: dict[str, Any]) -> str:
        return jobs.spawn(chat_id, call_id, kind, tool_input).id

    consent = BackgroundConsentService(stores.settings, stores.chats, models.choice_for, events)
    owed = OwedSteers(consent.allows)  # the turn takes steers; the wake pipeline fills it and starts turns
    turns = TurnService(
        stores.chats,
        models,
        registry,
        events=events,
        settings=stores.settings,
        fanout=fanout,
        context=context,
        graph_reader=library,
        job_tools=workers.job_kinds,
        spawn_job=spawn_job,
        steer_source=owed.take,
        background_refusal=consent.refusal,
        clock=utc_now,
        new_id=new_id,
    )
    wake = WakeService(
        stores.chats,
        jobs,
        events,
        registry.running,
        start_wake=turns.start_wake,
        owed=owed,
        consent=consent.refusal,
        stop_wake=turns.abort,
    )
    consent.listeners.append(wake.consent_changed)
    trash.restored.append(lambda record, _jobs: library.lesson_settled(record))  # re-arm its idle flush
    trash.restored.append(lambda _record, jobs: wake.recover(jobs))  # their steers owed again
    trash.restored_sets.append(practice.resume)  # a set deleted mid-run goes on from where it stopped
    chats = ChatService(
        stores.chats,
        models,
        registry,
        fanout=fanout,
        jobs_computing=jobs.computing,
        clock=utc_now,
        new_id=new_id,
        events=events,
        discard=trash.lesson,
    )
    job_reads = JobReads(stores.jobs, chats.get)  # a session's jobs (404 for an unknown one), a demo's page
    return Services(
        paths=paths,
        stores=stores,
        models=models,
        chats=chats,
        turns=turns,
        registry=registry,
        offline=offline_server,
        extraction=extraction,
        library=library,
        graph=graph,
        practice=practice,
        events=events,
        jobs=jobs,
        wake=wake,
        workers=workers,
        job_reads=job_reads,
        context=context,
        naming=naming,
        subscriptions=subscriptions,
        backup=BackupService(stores.backup, extraction.merge_section, utc_now, new_id),
        search=SearchService(stores.search, stores.chats, stores.graph, stores.practice),
        consent=consent,
        trash=trash,
    )
