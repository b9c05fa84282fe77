"""The steers each lesson is owed (seed §5.1): filled and confirmed by the wake pipeline, taken
from by a live turn of the lesson at its model-request boundaries.

Its own object so that neither the turn nor the wake pipeline holds the other for it: the turn
takes from it, the wake pipeline starts turns (`server.services.bootstrap` gives both the
same object). What a run does with the steers it took is the agent's `SteerInbox` capability
(`server.agent.classroom.capabilities`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("lh.wake")


class OwedSteers:
    """Per session, the steer messages owed and which of them a live turn has taken.

    Args:
        consented: whether a live turn of the session may take steers now (seed §5.1: "live
            agent and background consent?"; `BackgroundConsentService.allows`). Without it the
            entries stay, for the wake pipeline to deliver once consent permits. Default: always.

    Attributes:
        entries: per session, steer id -> (job id, steer message); one entry per steer id.
        taken: per session, the steer ids a live turn took and has not saved yet (not offered
            again to it).
    """

    def __init__(self, consented: Callable[[str], bool] = lambda chat_id: True) -> None:
        self.consented = consented
        self.entries: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {}
        self.taken: dict[str, set[str]] = {}

    def take(self, chat_id: str) -> list[dict[str, Any]]:
        """The live turn's intake: steers of this session not yet taken (in arrival order); none
        while background consent withholds the session's subscription. Their delivery completes
        when the turn's save holds them."""
        pending = self.entries.get(chat_id)
        if not pending or not self._consented(chat_id):
            return []
        taken = self.taken.setdefault(chat_id, set())
        out = []
        for sid, (_, steer) in pending.items():
            if sid not in taken:
                taken.add(sid)
                out.append(steer)
        return out

    def _consented(self, chat_id: str) -> bool:
        """`consented`, contained: a failure to decide (unreadable settings) withholds the steers
        for now and never fails the live turn that asked."""
        try:
            return self.consented(chat_id)
        except Exception:
            log.exception("[steers %s] deciding background consent failed; the steers wait", chat_id)
            return False

    def pending(self, chat_id: str) -> list[str]:
        """Steer ids the session is still owed (for reads and tests)."""
        return list(self.entries.get(chat_id, {}))
