"""What a source's run is and what runs it (seed §6): `Run` (a source's run, queued or executing,
kept in `ExtractionService`'s run table) and `RunHost`, the narrow seam the run's task
(`jobs.run_source`, `packs.run_pack`) sees of the service that launched it. A leaf: the service
satisfies `RunHost` structurally, so `jobs.py` and `packs.py` never import `extraction.py`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from pydantic_ai.models import Model

from server.core.clock import Clock
from server.core.contracts.graph import SourceKind
from server.core.contracts.models import ResolvedModel
from server.core.ports import ExtractionGraph
from server.services.library.feed import ImportTally, JobRow, JobSpec, Phase
from server.services.library.merge import MergeSection


@dataclass
class Run:
    """A source's run, queued or executing.

    Attributes:
        source: the source id (a chat id or a notes file's id).
        kind: `chat` or `notes`.
        label: the activity rows' label (a lesson's title, a file's name).
        specs: its jobs' inputs, in order.
        on_complete: called with whether every job merged (e.g. a notes file's fingerprint stamp).
        version: every (coverage key -> fingerprint) of the source's new content, or None.
        tally: the import it belongs to (its summary row), or None.
        ended: set once the run's task ended or it was dropped from the queue.
        rows: its activity rows, one per spec (made when it launches, or at once without a tally).
    """

    source: str
    kind: SourceKind
    label: str
    specs: list[JobSpec]
    on_complete: Callable[[bool], None] | None
    version: dict[str, str] | None
    tally: ImportTally | None
    ended: asyncio.Event
    rows: list[JobRow] = field(default_factory=list)


class RunHost(Protocol):
    """What a run's task uses of the service that launched it (`ExtractionService`): the graph,
    the model, the permits, the merge section, the clock and the activity feed. Read-only."""

    @property
    def graph(self) -> ExtractionGraph:
        """The graph ledgers port (the service is its only writer)."""
        ...

    @property
    def model_for(self) -> Callable[[], Awaitable[tuple[ResolvedModel, Model]]]:
        """The background slot's (resolved, model), resolved per job."""
        ...

    @property
    def clock(self) -> Clock:
        """ISO timestamp source."""
        ...

    @property
    def permits(self) -> asyncio.Semaphore:
        """The process-wide model-call permits, held only around model calls."""
        ...

    @property
    def merge(self) -> MergeSection:
        """The audit -> merge section and what runs in it."""
        ...

    @property
    def merge_section(self) -> asyncio.Lock:
        """The section's lock (shared with deletions)."""
        ...

    def set_phase(self, row: JobRow, phase: Phase) -> None:
        """Set an activity row's phase and tell the feed."""
        ...

    def feed_changed(self) -> None:
        """Tell the feed's listeners and the browser that rows changed."""
        ...
