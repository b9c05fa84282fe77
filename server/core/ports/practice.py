"""Practice's port: problem sets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from server.core.contracts.practice import ProblemSet


class PracticeStore(Protocol):
    """Problem sets (seed §7), written only by the practice pipeline."""

    def get(self, set_id: str) -> ProblemSet | None:
        """The set, or None. Raises StoreCorrupt when unreadable."""
        ...

    def save(self, problem_set: ProblemSet) -> None:
        """Replace the set atomically; OSError propagates."""
        ...

    def update(self, set_id: str, change: Callable[[ProblemSet], ProblemSet | None]) -> ProblemSet | None:
        """Read-modify-write under the set's lock; None when the set is gone or nothing changed."""
        ...

    def list(self) -> list[ProblemSet]:
        """Every readable set."""
        ...

    def delete(self, set_id: str) -> bool:
        """Remove the set; False when absent."""
        ...
