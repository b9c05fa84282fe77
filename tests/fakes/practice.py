"""The PracticeStore fake: in memory, recording every write (cosmicpython style); checked against
`FilePracticeStore` by tests/store/test_practice_store_contract.py."""

from __future__ import annotations

from collections.abc import Callable

from server.core.contracts.practice import ProblemSet
from server.store.practice.sets import SET_ID


class FakePracticeStore:
    """In-memory PracticeStore; `writes` holds every set written, in order."""

    def __init__(self) -> None:
        self.sets: dict[str, ProblemSet] = {}
        self.writes: list[ProblemSet] = []

    def get(self, set_id: str) -> ProblemSet | None:
        found = self.sets.get(set_id)
        return found.model_copy(deep=True) if found else None

    def save(self, problem_set: ProblemSet) -> None:
        if not SET_ID.match(problem_set.id):  # as the file store: an id is a file name
            raise ValueError(f"not a problem set id: {problem_set.id!r}")
        self.sets[problem_set.id] = problem_set.model_copy(deep=True)
        self.writes.append(problem_set.model_copy(deep=True))

    def update(self, set_id: str, change: Callable[[ProblemSet], ProblemSet | None]) -> ProblemSet | None:
        current = self.get(set_id)
        if current is None:
            return None
        changed = change(current)
        if changed is None:
            return None
        self.save(changed)
        return changed

    def list(self) -> list[ProblemSet]:
        return [self.sets[k].model_copy(deep=True) for k in sorted(self.sets)]

    def delete(self, set_id: str) -> bool:
        return self.sets.pop(set_id, None) is not None
