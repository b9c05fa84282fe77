"""The accepted queue in `data/intake/queue.jsonl` (implements core.ports.IntakeStore).

Work the app answered for and has not finished (issue 26, item 4): a notes import's files
(`accepted` before its 202, one line for the whole batch, fsynced), a lesson's extraction trigger,
and `settled` lines naming the entries that ended. Reads skip a torn or invalid line (a crash mid
append: that batch was never answered, so nothing promised is lost). A lost `settled` line only
makes a restart look at an entry again, which finds its chunks in the graph's coverage and merges
nothing twice, so settled lines are fsynced in the background (`LedgerSyncer`).

The file is rewritten to hold only the open entries at start (`compact`, under the data-dir lock),
and emptied whenever every entry accepted in this process has settled.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import orjson

from server.core.contracts.intake import IntakeEntry, IntakeLine
from server.store.atomic import write_bytes_atomic
from server.store.ledger import LedgerSyncer, append_ledger, read_ledger

log = logging.getLogger("lh.store.intake")


class FileIntakeStore:
    """Args: root: the intake directory (`data/intake`, created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / "queue.jsonl"
        self._lock = threading.Lock()
        self._open: set[str] | None = None
        """Keys accepted and not settled, as this process knows them (None until first read)."""
        self._syncer = LedgerSyncer()

    def accept(self, entries: Sequence[IntakeEntry], *, durable: bool = True) -> None:
        """Append one `accepted` line holding `entries` (one write). `durable`: fsynced before
        returning (call it off the event loop); else written at once (a process that dies keeps
        it) and fsynced by a worker thread. Raises OSError when it cannot be written: then nothing
        was accepted."""
        if not entries:
            return
        line = IntakeLine(accepted=list(entries))
        with self._lock:  # the fsync is made outside it: a settle on the event loop never waits for it
            known = self._known()
            if durable:
                append_ledger(self.path, [line], sync=False)
            else:
                self._syncer.append(self.path, [line])
            known.update(e.key for e in entries)
        if durable:  # the file is not emptied meanwhile: its new keys are open until they settle
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def settle(self, keys: Sequence[str]) -> None:
        """Append one `settled` line naming `keys` (fsynced in the background); when no accepted
        entry is left open, the file is emptied. A write that fails is logged, never raised (the
        entry is then looked at again after a restart: it finds its work merged)."""
        if not keys:
            return
        with self._lock:
            known = self._known()
            try:
                if known.isdisjoint(keys):
                    return
                known.difference_update(keys)
                if known:
                    self._syncer.append(self.path, [IntakeLine(settled=list(keys))])
                else:  # nothing open: the file starts over (no batch of texts is kept for nothing)
                    os.truncate(self.path, 0)
            except OSError:
                log.exception("recording settled intake entries failed")

    def open(self) -> list[IntakeEntry]:
        """The entries accepted and not settled, in the order accepted (one per key: the last
        accepted). Invalid lines are skipped and logged."""
        accepted: dict[str, IntakeEntry] = {}
        settled: set[str] = set()
        for line in read_ledger(self.path, IntakeLine):
            for entry in line.accepted or ():
                accepted.pop(entry.key, None)
                accepted[entry.key] = entry
            settled.update(line.settled or ())
        return [e for key, e in accepted.items() if key not in settled]

    def compact(self) -> list[IntakeEntry]:
        """At start, before anything is accepted (the caller holds the data-dir lock): the open
        entries, with the file rewritten to hold only them (atomically; removed when none is
        open). Raises OSError when it cannot be rewritten (the file stays as it was)."""
        with self._lock:
            entries = self.open()
            if entries:
                payload = orjson.dumps(
                    IntakeLine(accepted=entries).model_dump(mode="json", by_alias=True, exclude_none=True)
                )
                write_bytes_atomic(self.path, payload + b"\n")
            elif self.path.exists():
                self.path.unlink()
            self._open = {e.key for e in entries}
            return entries

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the background fsyncs requested so far are done (shutdown)."""
        return self._syncer.flush(timeout)

    def _known(self) -> set[str]:
        if self._open is None:
            self._open = {e.key for e in self.open()}
        return self._open
