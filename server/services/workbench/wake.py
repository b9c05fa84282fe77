"""The wake pipeline (seed §5.1): each finished job's steer enters its lesson exactly once.

A per-session registry (`OwedSteers`) holds one entry per steer id. A live turn of the session
takes the entries at its next model-request boundary (`OwedSteers.take`) when background consent
permits; its save places them before its reply. A session is woken through the normal turn
composition (`TurnService.start_wake`) only when it is turn-free, question-free, unpaused (the
learner did not stop its last reply: `server.core.workbench.wake.paused`) and consented (no
subscription it runs has background consent off: `BackgroundConsentService`). A 409 (a turn began
meanwhile) backs off 500 -> 1000 -> 2000 -> 5000 ms; a 403 (consent off) holds the entries until
consent is switched on again (`consent_changed`), which wakes them; any other failed start leaves
the entries quietly pending until the session's next turn or a restart. Switching consent off
stops an idle wake running on that subscription (never a learner's own turn). Delivery completes
only when the steer message is in the saved record; then the job is acknowledged. After a
restart, `recover` re-registers what the job records still owe.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from server.core.contracts.jobs import JobRecord, steer_message
from server.core.events import EventBus
from server.core.ports import ChatStore
from server.core.refusals import Refused
from server.core.workbench.wake import backoff_delay, delivered, paused, pending_delivery
from server.services.workbench.runner import JobRunner
from server.services.workbench.steers import OwedSteers

log = logging.getLogger("lh.wake")

StartWake = Callable[[str, list[dict[str, Any]]], Awaitable[object]]
"""`TurnService.start_wake`: (session, steers) -> the started turn or None; raises Refused."""
ConsentRefusal = Callable[[str], Refused | None]
"""`BackgroundConsentService.refusal`: the 403 a session's idle wake gets now, or None."""
StopWake = Callable[[str], Awaitable[bool]]
"""`TurnService.abort`: stop the session's running turn (False when none runs)."""

CONSENT_REFUSED = "background_not_consented"
"""The code of the 403 that holds a result until consent permits delivery."""


async def _no_stop(chat_id: str) -> bool:
    return False


class WakeService:
    """Args:
    chats: the session store (read only: delivery is confirmed against the saved record).
    runner: the job runner (acknowledges delivered jobs; the job store's only writer).
    events: the browser's bus; `turn-settled` is when a session may be woken or its delivery
        confirmed.
    turn_running: whether a session's turn is live.
    start_wake: starts an idle wake through the normal turn composition (`TurnService.start_wake`).
    owed: the steers owed per session (the live turn takes from the same object).
    consent: the gate's consent check (`BackgroundConsentService.refusal`; default: always
        consented).
    stop_wake: stops a running idle wake when consent is switched off (`TurnService.abort`).
    sleep: the clock's wait (tests pass a fake clock).
    """

    def __init__(
        self,
        chats: ChatStore,
        runner: JobRunner,
        events: EventBus,
        turn_running: Callable[[str], bool],
        *,
        start_wake: StartWake,
        owed: OwedSteers,
        consent: ConsentRefusal = lambda chat_id: None,
        stop_wake: StopWake = _no_stop,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.chats = chats
        self.runner = runner
        self.turn_running = turn_running
        self.start_wake = start_wake
        self.owed = owed
        self.consent = consent
        self.stop_wake = stop_wake
        self.sleep = sleep
        self.parked: set[str] = set()
        """Sessions whose idle wake failed to start: quiet until their next turn or a restart."""
        self.held: set[str] = set()
        """Sessions whose results wait for background consent (not a failure: a consent change
        wakes them)."""
        self.woken: set[str] = set()
        """Sessions whose running turn is an idle wake this pipeline started (until it settles)."""
        self.loops: dict[str, asyncio.Task[None]] = {}
        self._stops: set[asyncio.Task[None]] = set()
        self._unsubscribe = events.subscribe(self._on_event)

    # -- intake -----------------------------------------------------------------------------------
    def intake(self, job: JobRecord) -> None:
        """A job's outcome was saved with a pending delivery: register its steer and try to
        deliver. Repeated intake of the same job shares the one entry."""
        if not pending_delivery(job):
            return
        steer = steer_message(job)
        self.owed.entries.setdefault(job.chat_id, {}).setdefault(steer["id"], (job.id, steer))
        self._kick(job.chat_id)

    def recover(self, owed: list[JobRecord]) -> None:
        """After a restart: register every job that still owes its lesson a steer (those whose
        steer is already saved are acknowledged, not delivered again)."""
        for job in owed:
            self.intake(job)

    def forget(self, chat_id: str) -> None:
        """The session was deleted: its delivery obligations go with it."""
        self.owed.entries.pop(chat_id, None)
        self.owed.taken.pop(chat_id, None)
        self.parked.discard(chat_id)
        self.held.discard(chat_id)
        self.woken.discard(chat_id)
        loop = self.loops.pop(chat_id, None)
        if loop is not None:
            loop.cancel()

    def pending(self, chat_id: str) -> list[str]:
        """Steer ids the session is still owed (for reads and tests)."""
        return self.owed.pending(chat_id)

    # -- confirmation and waking --------------------------------------------------------------------
    def _on_event(self, event: str, data: dict[str, Any]) -> None:
        if event != "turn-settled":
            return
        chat_id = str(data.get("chatId"))
        self.woken.discard(chat_id)
        self.owed.taken.pop(chat_id, None)  # the saved ones are confirmed below; the rest offered again
        self.parked.discard(chat_id)  # the session's next turn ran: a quiet entry may try again
        if chat_id in self.owed.entries:
            self.confirm(chat_id)
            self._kick(chat_id)

    def confirm(self, chat_id: str) -> list[str]:
        """Acknowledge every entry whose steer is in the saved record; returns their steer ids.
        A failed acknowledgement leaves the job pending, but the entry goes: the marker is saved,
        and recovery sees it there and acknowledges instead of delivering again."""
        pending = self.owed.entries.get(chat_id)
        if not pending:
            return []
        try:
            record = self.chats.get(chat_id)
        except Exception:
            log.exception("[wake %s] reading the record failed", chat_id)
            return []
        if record is None:  # deleted: nothing to deliver into
            self.forget(chat_id)
            return []
        done = [sid for sid in pending if delivered(record.messages, sid)]
        for sid in done:
            job_id, _ = pending.pop(sid)
            try:
                self.runner.acknowledge(job_id)
            except Exception:
                log.exception("[wake %s] acknowledging job %s failed", chat_id, job_id)
        if not pending:
            self.owed.entries.pop(chat_id, None)
        return done

    def consent_changed(self, provider: str, allowed: bool) -> None:
        """A subscription's background consent was switched (`BackgroundConsentService.set`).
        On: every held session is tried again (each re-checks its own consent). Off: an idle wake
        running on that subscription is stopped; the learner's own turns are not touched
        (foreground-preserving cancellation)."""
        if allowed:
            held, self.held = self.held, set()
            for chat_id in sorted(held):
                self._kick(chat_id)
            return
        for chat_id in sorted(self.woken):
            try:
                withheld = self.consent(chat_id) is not None
            except Exception:
                log.exception("[wake %s] deciding background consent failed", chat_id)
                withheld = True  # unknown: stop the idle wake (the learner's own turns are never stopped)
            if withheld:
                log.info(
                    "[wake %s] background consent for %s switched off: the wake stops", chat_id, provider
                )
                self._spawn(self.stop_wake(chat_id), f"stop wake {chat_id}")

    def _spawn(self, work: Awaitable[object], name: str) -> None:
        async def run() -> None:
            try:
                await work
            except Exception:
                log.exception("%s failed", name)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(run(), name=name)
        self._stops.add(task)
        task.add_done_callback(self._stops.discard)

    def _kick(self, chat_id: str) -> None:
        if chat_id in self.parked or chat_id in self.held or not self.owed.entries.get(chat_id):
            return
        loop = self.loops.get(chat_id)
        if loop is not None and not loop.done():
            return
        try:
            running_loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a sync caller at startup): the next event kicks again
            return
        self.loops[chat_id] = running_loop.create_task(self._wake(chat_id), name=f"wake {chat_id}")

    async def _wake(self, chat_id: str) -> None:
        """Try an idle wake until the entries are delivered, a turn takes them, or a start fails."""
        attempt = 0
        try:
            while True:
                self.confirm(chat_id)  # a restart between the save and the acknowledgement
                pending = self.owed.entries.get(chat_id)
                if not pending:
                    return
                if self.turn_running(chat_id):
                    return  # the live turn takes them at its next boundary; its settle kicks again
                try:
                    withheld = self.consent(chat_id) is not None
                except Exception:  # settings unreadable: a failed start, quiet until the next turn
                    log.exception("[wake %s] deciding background consent failed", chat_id)
                    self.parked.add(chat_id)
                    return
                if withheld:
                    self.held.add(chat_id)  # a consent change wakes it; nothing is sent meanwhile
                    return
                record = self.chats.get(chat_id)
                if record is None or paused(record.messages):
                    return  # the learner stopped the teacher: their next turn takes the results
                steers = [steer for _, steer in pending.values()]
                try:
                    await self.start_wake(chat_id, steers)
                except Refused as exc:
                    if exc.code == CONSENT_REFUSED:
                        log.info("[wake %s] held until background consent permits delivery", chat_id)
                        self.held.add(chat_id)
                        return
                    if exc.code == "turn_running":
                        await self.sleep(backoff_delay(attempt))
                        attempt += 1
                        continue
                    if exc.code == "question_pending":
                        return  # not a failure: the answer's turn takes them
                    log.info("[wake %s] could not start (%s); the result stays pending", chat_id, exc.detail)
                    self.parked.add(chat_id)
                    return
                except Exception:
                    log.exception("[wake %s] could not start; the result stays pending", chat_id)
                    self.parked.add(chat_id)
                    return
                if self.turn_running(chat_id):
                    self.woken.add(chat_id)  # its settle discards it
                self.confirm(chat_id)  # the wake's write-ahead saved the steers: delivered
                return
        finally:
            if self.loops.get(chat_id) is asyncio.current_task():
                self.loops.pop(chat_id, None)

    async def shutdown(self) -> None:
        loops = [*self.loops.values(), *self._stops]
        for loop in loops:
            loop.cancel()
        if loops:
            await asyncio.gather(*loops, return_exceptions=True)
        self._unsubscribe()
