"""API keys: the OS keychain (keyring), or an owner-only file where no keychain backend exists.

Keys are never written to settings, records or logs (seed §8, machine room).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import keyring
import keyring.backends.fail
import keyring.errors

from server.core.contracts.models import SecretName
from server.store.atomic import read_json, write_json_atomic


class KeyringSecrets:
    """Keys in the OS keychain under one service name."""

    source = "keyring"

    def __init__(self, service: str) -> None:
        self.service = service

    def get(self, provider: SecretName) -> str | None:
        return keyring.get_password(self.service, provider)

    def set(self, provider: SecretName, key: str) -> None:
        keyring.set_password(self.service, provider, key)

    def delete(self, provider: SecretName) -> None:
        with contextlib.suppress(keyring.errors.PasswordDeleteError):
            keyring.delete_password(self.service, provider)


class FileSecrets:
    """Keys in a JSON file readable by the owner only (mode 0600).

    Args:
        path: the secrets file (in the data dir, never in settings.json).
    """

    source = "file"

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, str]:
        try:
            data = read_json(self.path)
        except FileNotFoundError:
            return {}
        except ValueError:
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def get(self, provider: SecretName) -> str | None:
        return self._load().get(provider)

    def set(self, provider: SecretName, key: str) -> None:
        data = self._load()
        data[provider] = key
        write_json_atomic(self.path, data, mode=0o600)

    def delete(self, provider: SecretName) -> None:
        data = self._load()
        if data.pop(provider, None) is not None:
            write_json_atomic(self.path, data, mode=0o600)


def keychain_available() -> bool:
    """Whether keyring found a real backend (not the 'fail' placeholder)."""
    try:
        backend = keyring.get_keyring()
    except Exception:  # a broken keyring configuration counts as none
        return False
    return not isinstance(backend, keyring.backends.fail.Keyring) and (
        os.environ.get("LH_KEYRING", "on") != "off"
    )
