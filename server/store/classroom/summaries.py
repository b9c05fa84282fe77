"""Lesson summaries, `data/cache/summaries/<chat id>.json` (implements core.ports.SummaryCache).

A derived cache, never the source of truth (issue 15): an unreadable or foreign file reads as no
summary (it is rebuilt), and deleting the directory loses nothing."""

from __future__ import annotations

import logging
from pathlib import Path

from server.core.classroom.context import SummaryCover
from server.core.contracts.chat import CHAT_ID_PATTERN
from server.store.atomic import read_json, write_json_atomic

log = logging.getLogger("lh.store.summaries")


class FileSummaryCache:
    """Args: root: the summaries directory (created on first put)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, chat_id: str) -> Path | None:
        return self.root / f"{chat_id}.json" if CHAT_ID_PATTERN.match(chat_id) else None

    def get(self, chat_id: str) -> SummaryCover | None:
        path = self._path(chat_id)
        if path is None:
            return None
        try:
            data = read_json(path)
            return SummaryCover(
                count=int(data["count"]),
                fingerprint=str(data["fingerprint"]),
                last_id=str(data["lastId"]),
                text=str(data["text"]),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:  # a cache: rebuilt, never trusted
            log.warning("ignoring an unreadable lesson summary %s: %s", path, exc)
            return None

    def put(self, chat_id: str, cover: SummaryCover) -> None:
        path = self._path(chat_id)
        if path is None:
            raise ValueError(f"not a session id: {chat_id!r}")
        write_json_atomic(
            path,
            {
                "count": cover.count,
                "fingerprint": cover.fingerprint,
                "lastId": cover.last_id,
                "text": cover.text,
            },
        )

    def delete(self, chat_id: str) -> None:
        path = self._path(chat_id)
        if path is not None:
            path.unlink(missing_ok=True)
