"""`data/settings.json` (implements core.ports.SettingsStore)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from server.core.contracts.models import Settings
from server.core.ports import StoreCorrupt
from server.store.atomic import read_json, write_json_atomic


class FileSettingsStore:
    """Settings as one JSON file; defaults when absent.

    Args:
        path: the settings file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Settings:
        """Raises StoreCorrupt (naming the file and the problem) when the file is not valid settings."""
        try:
            data = read_json(self.path)
        except FileNotFoundError:
            return Settings()
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(f"{self.path} is not valid JSON ({exc}); fix or delete it") from exc
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
            )
            raise StoreCorrupt(f"{self.path} has invalid settings ({problems}); fix or delete it") from exc

    def save(self, settings: Settings) -> None:
        write_json_atomic(self.path, settings.model_dump(mode="json", by_alias=True))
