"""The machine room's ports: settings and API keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from server.core.contracts.models import SecretName, Settings
from server.core.machine_room.search import Entry, Group


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


class SearchIndex(Protocol):
    """The derived full-text index (`data/search/index.sqlite`, decision 0044): rows grouped by
    owner, each owner's rows stamped with what they were made from."""

    rebuilt: bool
    """True when the last open made the index anew (absent, damaged, another schema)."""

    def stamps(self, group: Group) -> dict[str, str]:
        """`{owner: stamp}` indexed for this owner kind."""
        ...

    def present(self) -> bool:
        """The index file is there (False once removed: the next use makes it anew)."""
        ...

    def meta(self, key: str) -> str | None:
        """A value kept beside the index."""
        ...

    def replace(
        self,
        group: Group,
        owners: Mapping[str, tuple[str, Sequence[Entry]]],
        drop: Iterable[str] = (),
        meta: dict[str, str] | None = None,
    ) -> None:
        """Owners' rows replaced and `drop`'s removed, in one transaction. Raises sqlite3.Error."""
        ...

    def query(self, match: str, limit: int) -> list[tuple[str, str, str, str, str, float]]:
        """`(kind, owner, target, label, snippet, rank)` best first for an FTS5 query."""
        ...

    def file_stamps(self, folder: str, prefix: str = "", suffix: str = ".json") -> dict[str, str]:
        """`{name: "mtime_ns:size"}` of a data dir folder's record files."""
        ...
