"""The turn liveness registry: at most one running turn per session (seed §5, turn contract).

In-memory and single-process: one server owns a data dir (the data-dir lock), so one registry
sees every turn of its sessions.
"""

from __future__ import annotations


class TurnRegistry:
    """Which sessions have a turn running. `begin` is the only way in; `end` always runs last."""

    def __init__(self) -> None:
        self._running: set[str] = set()

    def begin(self, chat_id: str) -> bool:
        """Claim the session; False when a turn already runs (the caller answers 409)."""
        if chat_id in self._running:
            return False
        self._running.add(chat_id)
        return True

    def end(self, chat_id: str) -> None:
        """Release the session (idempotent)."""
        self._running.discard(chat_id)

    def running(self, chat_id: str) -> bool:
        return chat_id in self._running
