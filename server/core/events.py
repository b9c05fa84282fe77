"""The change-notification bus behind `GET /api/events` (seed §10): pure, in-process, app-scoped.

An event says that truth moved, never what it is now: a window refetches what it shows. The
vocabulary (seed §10.2):

| event | data | emitted |
|---|---|---|
| `turn-started` | `{chatId}` | a turn claimed its session (a refused double begin is silent) |
| `turn-settled` | `{chatId}` | a live turn released its session, after its reply was persisted |
| `jobs-changed` | `{chatId}` | a job-store write of the Workbench (spawn, outcome, delivery, discard) |
| `activity-changed` | `{}` | an extraction, Background agents or practice row, or a pending flush, changed |
| `chats-changed` | `{}` | list-shape writes: a session created, renamed or deleted |
| `graph-changed` | `{}` | a merge committed, a retirement, a deletion of nodes or chains |
| `subscriptions-changed` | `{}` | a subscription login's state moved, or desktop main pushed auth |

Emitter laws (pinned by tests): notify after the write; a mutation that changed nothing emits
nothing; content writers (saving a turn's messages, usage, settings) are silent; reads never emit.

The bus is a listener set iterated over a snapshot (a listener may unsubscribe while an event is
being delivered), and one failing listener never keeps the event from the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal, get_args

log = logging.getLogger("lh.events")

EventName = Literal[
    "turn-started",
    "turn-settled",
    "jobs-changed",
    "activity-changed",
    "chats-changed",
    "graph-changed",
    "subscriptions-changed",
]
EVENT_NAMES: tuple[str, ...] = get_args(EventName)

Listener = Callable[[str, dict[str, Any]], None]


class EventBus:
    """Listeners get `(event, data)` synchronously, in subscription order."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._closers: dict[int, Callable[[], None]] = {}
        self.closed = False

    def subscribe(self, listener: Listener, on_close: Callable[[], None] | None = None) -> Callable[[], None]:
        """Add a listener; returns its unsubscribe (idempotent). `on_close` runs once when the
        bus closes (the server is stopping), at once when it already has."""
        if on_close is not None:
            if self.closed:
                on_close()
            self._closers[id(listener)] = on_close
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)
            self._closers.pop(id(listener), None)

        return unsubscribe

    def emit(self, event: EventName, data: dict[str, Any] | None = None) -> None:
        """Deliver to every listener subscribed now; raises ValueError for an unknown event name
        (a programming error, caught by the tests)."""
        if event not in EVENT_NAMES:
            raise ValueError(f"unknown event {event!r}; one of {', '.join(EVENT_NAMES)}")
        payload = dict(data or {})
        for listener in list(self._listeners):
            try:
                listener(event, payload)
            except Exception:  # one broken listener never starves the others
                log.exception("an events listener failed on %s", event)

    def close(self) -> None:
        """The server is stopping: tell every subscriber (its stream ends; the browser's
        EventSource reconnects to the next server). Idempotent."""
        if self.closed:
            return
        self.closed = True
        for closer in list(self._closers.values()):
            try:
                closer()
            except Exception:
                log.exception("an events subscriber failed to close")

    def __len__(self) -> int:
        return len(self._listeners)
