"""Session records as JSON files: `data/chats/<id>.json` (implements core.ports.ChatStore)."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import ValidationError

from server.core.contracts.chat import CHAT_ID_PATTERN, ChatRecord
from server.core.ports import StoreCorrupt
from server.store.atomic import read_json, write_json_atomic

log = logging.getLogger("lh.store.chats")


class FileChatStore:
    """One JSON file per session under `root`.

    Args:
        root: the chats directory (created on first save).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, chat_id: str) -> Path:
        if not CHAT_ID_PATTERN.match(chat_id):
            raise ValueError(f"not a session id: {chat_id!r}")
        return self.root / f"{chat_id}.json"

    def get(self, chat_id: str) -> ChatRecord | None:
        """The record, or None. Raises StoreCorrupt when the file is unreadable (left untouched)."""
        try:
            path = self._path(chat_id)
        except ValueError:
            return None
        try:
            data = read_json(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(f"{path}: {exc}") from exc
        try:
            return ChatRecord.model_validate(data)
        except ValidationError as exc:
            raise StoreCorrupt(f"{path}: not a session record ({exc.error_count()} problems)") from exc

    def save(self, record: ChatRecord) -> None:
        """Replace the record atomically. OSError propagates: a canonical write never fails silently."""
        write_json_atomic(self._path(record.id), record.model_dump(mode="json", by_alias=True))

    def list(self) -> list[ChatRecord]:
        """Every readable record (unreadable files are logged and skipped, never deleted)."""
        if not self.root.is_dir():
            return []
        records = []
        for path in sorted(self.root.glob("*.json")):
            try:
                record = self.get(path.stem)
            except StoreCorrupt as exc:
                log.warning("skipping unreadable session record %s", exc)
                continue
            if record is not None:
                records.append(record)
        return records

    def delete(self, chat_id: str) -> bool:
        """Remove the record file; False when absent."""
        try:
            self._path(chat_id).unlink()
        except (FileNotFoundError, ValueError):
            return False
        return True
