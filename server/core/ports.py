"""Ports: what the domain needs from storage, as typing.Protocol (seed §3).

Adapters in `server.store` implement them; `server.services.stores` wires them; tests use the
fakes in `tests/fakes/`.
"""

from __future__ import annotations

from typing import Protocol

from server.core.contracts.chat import ChatRecord
from server.core.contracts.models import KeyedProvider, Settings


class StoreCorrupt(Exception):
    """A canonical record exists but cannot be read (bad JSON or bad shape). Nothing was changed."""


class ChatStore(Protocol):
    """Session records, `data/chats/<id>.json`, replaced atomically."""

    def get(self, chat_id: str) -> ChatRecord | None:
        """The record, or None when no such session exists. Raises StoreCorrupt."""
        ...

    def save(self, record: ChatRecord) -> None:
        """Replace the record atomically (temp file, fsync, rename). Raises OSError loudly."""
        ...

    def list(self) -> list[ChatRecord]:
        """Every readable record; unreadable ones are skipped and logged."""
        ...

    def delete(self, chat_id: str) -> bool:
        """Remove the record; False when it did not exist."""
        ...


class SettingsStore(Protocol):
    """`data/settings.json`."""

    def load(self) -> Settings:
        """The settings, defaults when the file is absent. Raises StoreCorrupt when unreadable."""
        ...

    def save(self, settings: Settings) -> None:
        """Replace the file atomically."""
        ...


class SecretStore(Protocol):
    """API keys, by provider. Keys never reach settings, records or logs."""

    source: str
    """Where keys live: "keyring" or "file"."""

    def get(self, provider: KeyedProvider) -> str | None: ...

    def set(self, provider: KeyedProvider, key: str) -> None: ...

    def delete(self, provider: KeyedProvider) -> None: ...
