"""The in-process fan-outs: what happens in other services after a service's canonical write.

Not the browser's notifications: `server.core.events.EventBus` tells windows that truth moved
(`GET /api/events`); `FanOut` hands a settled fact to the services that act on it. A publishing
service receives the `FanOut` at construction; its one table `{message type: [handlers]}` is
declared in `server.services.bootstrap` (the only place that knows who listens to whom).

Law: a handler never breaks the canonical write that published it. Each handler is contained on
its own (a failure is logged with the message and the handler, and the next handler still runs);
`publish` returns nothing and raises nothing.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.core.contracts.chat import ChatRecord
from server.core.contracts.jobs import JobRecord

log = logging.getLogger("lh.fanout")


@dataclass(frozen=True)
class TurnSettled:
    """A lesson turn ended and its reply was saved (`record` is the saved session record)."""

    record: ChatRecord


@dataclass(frozen=True)
class LessonDeleted:
    """A session was deleted (its record is gone; what other services keep for it may go)."""

    chat_id: str


@dataclass(frozen=True)
class JobOutcomeSaved:
    """A Workbench job's outcome was saved with a pending delivery (`job` is the saved record)."""

    job: JobRecord


@dataclass(frozen=True)
class MergeLanded:
    """A merge into the graph, or a retirement, was committed (`label` names the job or source)."""

    label: str


Message = TurnSettled | LessonDeleted | JobOutcomeSaved | MergeLanded

Handler = Callable[[Any], object]
"""Called with one message; may return an awaitable (awaited by `publish_awaited` only)."""

Handlers = Mapping[type[Message], Sequence[Handler]]


class FanOut:
    """Dispatches a message to the handlers its type has in the table given at construction.

    Args:
        handlers: `{message type: [handler, ...]}`, called in order; a type absent from it has no
            handlers (publishing it does nothing).
    """

    def __init__(self, handlers: Handlers) -> None:
        self.handlers = handlers

    def publish(self, message: Message) -> None:
        """Call each handler of `message`'s type now, each contained. A handler that returns an
        awaitable belongs behind `publish_awaited`: its awaitable is closed unrun and logged."""
        for handler in self.handlers.get(type(message), ()):
            try:
                result = handler(message)
            except Exception:
                log.exception("%s: the handler %s failed", type(message).__name__, _name(handler))
                continue
            if inspect.isawaitable(result):
                close = getattr(result, "close", None)
                if close is not None:
                    close()
                log.error("%s: the async handler %s was not run", type(message).__name__, _name(handler))

    async def publish_awaited(self, message: Message) -> None:
        """Call each handler of `message`'s type in order, awaiting one that returns an awaitable
        before the next starts, each contained."""
        for handler in self.handlers.get(type(message), ()):
            try:
                result = handler(message)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("%s: the handler %s failed", type(message).__name__, _name(handler))


def _name(handler: Handler) -> str:
    """A handler's qualified name for the log (a lambda's says where it was declared; the logged
    traceback names the service method that failed)."""
    return str(getattr(handler, "__qualname__", None) or repr(handler))
