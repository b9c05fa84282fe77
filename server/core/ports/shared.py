"""Ports every system uses: the session records (seed §3) and the one storage error."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from server.core.contracts.chat import ChatRecord, ChatSummary


class StoreCorrupt(Exception):
    """A canonical record exists but cannot be read (bad JSON or bad shape). Nothing was changed."""


class ChatStore(Protocol):
    """Session records, `data/chats/<id>.json` (a snapshot replaced atomically) and its
    append-only log `<id>.log` (decision 0015)."""

    def get(self, chat_id: str) -> ChatRecord | None:
        """The record, or None when no such session exists. Raises StoreCorrupt.

        A record is an immutable value: it may be shared with other callers (a read cache), so
        changes are derived with `model_copy(update=...)`, never made in place."""
        ...

    def save(self, record: ChatRecord) -> None:
        """Make `record` the stored record, durable before returning (a tail change appended to
        the log and fdatasynced, else the snapshot replaced atomically). Raises OSError loudly."""
        ...

    def update(self, chat_id: str, change: Callable[[ChatRecord], ChatRecord]) -> ChatRecord | None:
        """Read, change (`change(stored) -> new`; the same object: no write) and save the record as
        one step that no other save interleaves with, from any thread. Returns the stored record,
        or None when no such session exists. Raises as `get`/`save` do, and what `change` raises
        (nothing written)."""
        ...

    def flush(self) -> None:
        """Write what derived files still wait for (the session index); called at shutdown."""
        ...

    def summaries(self) -> list[ChatSummary]:
        """The session list's rows (`running` False), one per readable record, in no particular
        order, without reading the records that did not change (an index kept on save and
        delete); unreadable records are skipped and logged. May answer the very same list object
        while nothing changed (callers never mutate it; `ChatService.list_json` keys its cached
        body on it)."""
        ...

    def record_json(self, chat_id: str) -> bytes | None:
        """The record as the bytes of one JSON object (as `get` returns it, dumped by alias:
        camelCase keys), or None when no such session exists. Raises StoreCorrupt."""
        ...

    def list(self) -> list[ChatRecord]:
        """Every readable record; unreadable ones are skipped and logged."""
        ...

    def delete(self, chat_id: str) -> bool:
        """Remove the record; False when it did not exist."""
        ...

    def held(self) -> AbstractContextManager[Any]:
        """The store's lock as a context: no record is written while it is held (a backup reads,
        the trash moves a lesson's files, under it)."""
        ...
