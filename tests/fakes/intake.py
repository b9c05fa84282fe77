"""The IntakeStore fake: the accepted queue in memory, recording every write (cosmicpython style);
checked against `FileIntakeStore` by tests/store/library/test_intake_contract.py."""

from __future__ import annotations

from collections.abc import Sequence

from server.core.contracts.intake import IntakeEntry


class FakeIntakeStore:
    """In-memory IntakeStore. `entries`: the open entries by key, in the order accepted;
    `accepted` / `settled`: every batch accepted (with its `durable`) and every settle call's keys
    that were open, in order; `compactions`: how many times `compact` ran; `fail_accepts` makes
    `accept` raise OSError (then nothing is accepted, as with the file)."""

    def __init__(self) -> None:
        self.entries: dict[str, IntakeEntry] = {}
        self.accepted: list[tuple[list[IntakeEntry], bool]] = []
        self.settled: list[list[str]] = []
        self.compactions = 0
        self.fail_accepts = False

    def accept(self, entries: Sequence[IntakeEntry], *, durable: bool = True) -> None:
        if not entries:
            return
        if self.fail_accepts:
            raise OSError(28, "No space left on device")
        batch = [e.model_copy(deep=True) for e in entries]
        self.accepted.append((batch, durable))
        for entry in batch:  # one per key, the last accepted (it moves to the end, as in the file)
            self.entries.pop(entry.key, None)
            self.entries[entry.key] = entry

    def settle(self, keys: Sequence[str]) -> None:
        ended = [key for key in keys if key in self.entries]
        if not ended:
            return
        self.settled.append(ended)
        for key in ended:
            del self.entries[key]

    def open(self) -> list[IntakeEntry]:
        return [e.model_copy(deep=True) for e in self.entries.values()]

    def compact(self) -> list[IntakeEntry]:
        self.compactions += 1
        return self.open()

    def flush(self, timeout: float | None = None) -> bool:
        """Nothing waits to be fsynced in memory."""
        return True
