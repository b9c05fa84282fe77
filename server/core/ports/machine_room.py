"""The machine room's ports: settings and API keys."""

from __future__ import annotations

from typing import Protocol

from server.core.contracts.models import SecretName, Settings


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

    def get(self, provider: SecretName) -> str | None: ...

    def set(self, provider: SecretName, key: str) -> None: ...

    def delete(self, provider: SecretName) -> None: ...
