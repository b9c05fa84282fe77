"""The SummaryCache fake: in memory, counting puts."""

from __future__ import annotations

from server.core.classroom.context import SummaryCover


class FakeSummaryCache:
    def __init__(self) -> None:
        self.covers: dict[str, SummaryCover] = {}
        self.puts = 0

    def get(self, chat_id: str) -> SummaryCover | None:
        return self.covers.get(chat_id)

    def put(self, chat_id: str, cover: SummaryCover) -> None:
        self.puts += 1
        self.covers[chat_id] = cover

    def delete(self, chat_id: str) -> None:
        self.covers.pop(chat_id, None)
