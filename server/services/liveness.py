"""The turn liveness registry: at most one running turn per session (seed §5, turn contract).

A running turn is broadcast: its SSE events are kept from the turn's start, as the very bytes
sent, so any number of followers (the POST that started it, a reloaded tab reattaching through
`GET /api/chats/{id}/stream`) see the whole turn. A follower leaving does not stop the turn; an
explicit abort does. In-memory and single-process: one server owns a data dir (the data-dir
lock), so one registry sees every turn of its sessions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from server.core.events import EventBus


class RunningTurn:
    """One turn in flight: a replayable, append-only list of SSE events (each `data: ...\n\n`,
    UTF-8, encoded once by the turn) plus its task."""

    def __init__(self, chat_id: str) -> None:
        self.chat_id = chat_id
        self.lines: list[bytes] = []
        self.done = False
        self.task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    def publish(self, line: bytes) -> None:
        self.lines.append(line)
        self._wake()

    def finish(self) -> None:
        self.done = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def follow(self) -> AsyncIterator[bytes]:
        """Every line from the turn's start, then live ones, until the turn ends."""
        index = 0
        while True:
            while index < len(self.lines):
                yield self.lines[index]
                index += 1
            if self.done:
                return
            await self._changed.wait()

    def abort(self) -> bool:
        """Cancel the turn (it persists what streamed). False when it is not running."""
        if self.task is None or self.task.done():
            return False
        self.task.cancel()
        return True


class TurnRegistry:
    """Which sessions have a turn running. `begin` is the only way in; `end` always runs last."""

    def __init__(self, events: EventBus | None = None) -> None:
        self._running: dict[str, RunningTurn] = {}
        self.events = events if events is not None else EventBus()

    def begin(self, chat_id: str) -> RunningTurn | None:
        """Claim the session; None when a turn already runs (the caller answers 409, silently).
        Emits `turn-started` after the claim."""
        if chat_id in self._running:
            return None
        turn = RunningTurn(chat_id)
        self._running[chat_id] = turn
        self.events.emit("turn-started", {"chatId": chat_id})
        return turn

    def end(self, chat_id: str) -> None:
        """Release the session (idempotent). Emits `turn-settled` when a live turn was released:
        the turn service calls this after persisting the reply, so a refetch reads it."""
        if self._running.pop(chat_id, None) is not None:
            self.events.emit("turn-settled", {"chatId": chat_id})

    def running(self, chat_id: str) -> bool:
        return chat_id in self._running

    def running_ids(self) -> frozenset[str]:
        """The sessions whose turn runs now."""
        return frozenset(self._running)

    def get(self, chat_id: str) -> RunningTurn | None:
        return self._running.get(chat_id)

    def all(self) -> list[RunningTurn]:
        return list(self._running.values())
