"""The Classroom's ports: derived lesson summaries and the teacher's read of the graph."""

from __future__ import annotations

from typing import Any, Protocol

from server.core.classroom.context import SummaryCover


class SummaryCache(Protocol):
    """Derived lesson summaries (issue 15): a cache keyed by session, never the source of truth."""

    def get(self, chat_id: str) -> SummaryCover | None:
        """The cached summary, or None (also when its file is unreadable: it is rebuilt)."""
        ...

    def put(self, chat_id: str, cover: SummaryCover) -> None:
        """Replace the session's summary atomically."""
        ...

    def delete(self, chat_id: str) -> None:
        """Forget the session's summary (the session was deleted)."""
        ...


class GraphReader(Protocol):
    """What the teacher's graph tools may read (seed §6: the teacher probes, nothing is injected)."""

    def sessions(self) -> list[dict[str, Any]]:
        """Birth sessions: `{id, title, kind, propositions}`."""
        ...

    def propositions(self, session: str) -> list[dict[str, str]]:
        """`{id, name, statement}` of the propositions a session gave the graph."""
        ...
