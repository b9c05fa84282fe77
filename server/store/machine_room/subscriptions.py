"""Web-mode subscription credentials: one owner-only JSON file per provider (issue 19 item 2).

`<data dir>/subscriptions/<provider>.json`, mode 0600, written atomically; the folder is 0700.
A file that is not a credential (garbage, a wrong shape) or that other users may read (group or
world permission bits) is moved aside as `<provider>.json.set-aside-<epoch s>` (kept for the
learner to inspect, never read again) and reported as `CredentialRefused` with plain words.
In desktop mode Electron main keeps these files in its own folder; the server never writes here.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

import orjson

from server.core.machine_room.subscription_credentials import credential_record, grant_from_record
from server.core.machine_room.subscriptions import (
    CredentialRefused,
    Grant,
)
from server.store.atomic import read_json, write_json_atomic

OWNER_ONLY = 0o600


class FileSubscriptionStore:
    """One saved connection per provider, in `root/<provider>.json`.

    Args:
        root: the folder (created 0700 on the first save).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, provider: str) -> Path:
        return self.root / f"{provider}.json"

    def load(self, provider: str) -> Grant | None:
        """The saved connection, or None when there is none.

        Raises:
            CredentialRefused: the file was unreadable as a credential or readable by others;
                it has been moved aside.
        """
        path = self.path(provider)
        try:
            info = path.lstat()
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(info.st_mode):
            raise self._set_aside(path, "is not a regular file")
        if os.name == "posix" and info.st_mode & 0o077:
            raise self._set_aside(path, f"could be read by other users (mode {stat.S_IMODE(info.st_mode):o})")
        try:
            data = read_json(path)
        except (orjson.JSONDecodeError, OSError):
            raise self._set_aside(path, "is not valid JSON") from None
        try:
            return grant_from_record(provider, data)
        except ValueError as exc:
            raise self._set_aside(path, f"is not a saved login ({exc})") from None

    def save(self, provider: str, grant: Grant) -> None:
        """Replace the provider's file atomically, owner-only. Raises OSError."""
        self.root.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(self.root, 0o700)
        write_json_atomic(
            self.path(provider), credential_record(provider, grant, time.time()), mode=OWNER_ONLY
        )

    def delete(self, provider: str) -> bool:
        """Forget the provider's connection; True when a file was removed."""
        try:
            self.path(provider).unlink()
        except FileNotFoundError:
            return False
        return True

    def _set_aside(self, path: Path, why: str) -> CredentialRefused:
        aside = path.with_name(f"{path.name}.set-aside-{int(time.time())}")
        try:
            os.replace(path, aside)
            where = f"it was moved aside as {aside.name}"
        except OSError:
            where = "it could not be moved aside"
        return CredentialRefused(f"The saved login file {why}; {where}. Connect again.")
