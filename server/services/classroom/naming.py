"""The naming side channel (seed §9): once a lesson's goal is known, the cheap slot gives it a
short title. Contained: it runs after the turn has settled, in the background; a failure is
logged and the old title stays; a title the learner set (at creation or by a rename) is never
overwritten. A title written emits `chats-changed` (a list-shape write)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from pydantic_ai.models import Model

from server.agent.classroom.namer import name_lesson
from server.core.contracts.chat import ChatRecord
from server.core.contracts.models import ResolvedModel
from server.core.events import EventBus
from server.core.ports import ChatStore
from server.core.transcript import naming_brief

log = logging.getLogger("lh.naming")

MAX_TRIES = 2
"""Naming attempts per lesson and server run (a failing cheap slot is not asked every turn)."""


class NamingService:
    """Titles lessons from their goal with the cheap slot.

    Args:
        chats: the session store (read before and after the model call; written once).
        cheap_model: resolves the cheap slot's runnable model; raises when it cannot run.
        events: the bus `chats-changed` goes out on.
    """

    def __init__(
        self,
        chats: ChatStore,
        cheap_model: Callable[[], Awaitable[tuple[ResolvedModel, Model]]],
        events: EventBus,
    ) -> None:
        self.chats = chats
        self.cheap_model = cheap_model
        self.events = events
        self.running: dict[str, asyncio.Task[str | None]] = {}
        self.tries: dict[str, int] = {}

    def settled(self, record: ChatRecord) -> None:
        """After a settled turn: start naming in the background when the title is still the
        automatic one, the goal is known, and no attempt runs or the tries are spent."""
        if record.title_by != "auto" or self.tries.get(record.id, 0) >= MAX_TRIES:
            return
        running = self.running.get(record.id)
        if running is not None and not running.done():
            return
        brief = naming_brief(record.messages)
        if brief is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.running[record.id] = loop.create_task(self.name(record.id, brief))

    async def name(self, chat_id: str, brief: str) -> str | None:
        """Ask the cheap slot for a title and write it over an automatic title. Returns the title
        written, or None (the model failed, the session vanished, or the learner named it
        meanwhile); never raises but CancelledError."""
        self.tries[chat_id] = self.tries.get(chat_id, 0) + 1
        try:
            _, model = await self.cheap_model()
            title = await name_lesson(model, brief)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("naming lesson %s failed (the title stays): %s", chat_id, exc)
            return None
        try:

            def named(fresh: ChatRecord) -> ChatRecord:
                if fresh.title_by != "auto":  # the learner's title wins
                    return fresh
                return fresh.model_copy(update={"title": title, "title_by": "model"})

            # one read-and-write: a turn's save from a worker thread cannot come between
            stored = self.chats.update(chat_id, named)
            if stored is None or stored.title_by != "model" or stored.title != title:  # deleted, or kept
                return None
        except Exception:
            log.warning("saving the title of lesson %s failed", chat_id, exc_info=True)
            return None
        self.events.emit("chats-changed")
        log.info("lesson %s named %r", chat_id, title)
        return title

    def forget(self, chat_id: str) -> None:
        """The session was deleted: a running attempt is cancelled."""
        self.tries.pop(chat_id, None)
        task = self.running.pop(chat_id, None)
        if task is not None:
            task.cancel()

    async def shutdown(self) -> None:
        tasks = [t for t in self.running.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
