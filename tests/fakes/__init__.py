"""One fake per port, recording state (cosmicpython style)."""

from __future__ import annotations

from collections.abc import Callable

import orjson

from server.core.contracts.chat import ChatRecord, ChatSummary, summarize
from server.core.contracts.models import KeyedProvider, Settings
from tests.fakes.intake import FakeIntakeStore as FakeIntakeStore


class FakeChatStore:
    """In-memory ChatStore; `saves` counts canonical writes, `fail_saves` makes them raise."""

    def __init__(self) -> None:
        self.records: dict[str, ChatRecord] = {}
        self.saves = 0
        self.fail_saves = False

    def get(self, chat_id: str) -> ChatRecord | None:
        record = self.records.get(chat_id)
        return record.model_copy(deep=True) if record else None

    def save(self, record: ChatRecord) -> None:
        if self.fail_saves:
            raise OSError(28, "No space left on device")
        self.saves += 1
        self.records[record.id] = record.model_copy(deep=True)

    def update(self, chat_id: str, change: Callable[[ChatRecord], ChatRecord]) -> ChatRecord | None:
        record = self.get(chat_id)
        if record is None:
            return None
        changed = change(record)
        if changed is not record:
            self.save(changed)
        return changed

    def list(self) -> list[ChatRecord]:
        return list(self.records.values())

    def summaries(self) -> list[ChatSummary]:
        return [summarize(r) for r in self.records.values()]

    def record_json(self, chat_id: str) -> bytes | None:
        record = self.records.get(chat_id)
        return orjson.dumps(record.model_dump(mode="json", by_alias=True)) if record else None

    def delete(self, chat_id: str) -> bool:
        return self.records.pop(chat_id, None) is not None

    def flush(self) -> None:
        """Nothing derived waits to be written in memory."""


class FakeSettingsStore:
    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.saved: list[Settings] = []

    def load(self) -> Settings:
        return self.settings.model_copy(deep=True)

    def save(self, settings: Settings) -> None:
        self.saved.append(settings)
        self.settings = settings


class FakeSecrets:
    source = "fake"

    def __init__(self, keys: dict[str, str] | None = None) -> None:
        self.keys: dict[str, str] = dict(keys or {})

    def get(self, provider: KeyedProvider) -> str | None:
        return self.keys.get(provider)

    def set(self, provider: KeyedProvider, key: str) -> None:
        self.keys[provider] = key

    def delete(self, provider: KeyedProvider) -> None:
        self.keys.pop(provider, None)
