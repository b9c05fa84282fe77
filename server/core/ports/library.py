"""The Library's ports: the graph ledgers as the roles their callers use, the intake queue and the
auditor's embedder.

The graph ledgers (`data/graph/`, seed §6) are one adapter, `server.store.library.graph.
FileGraphStore`, seen through narrow roles (each a typing.Protocol, each with one fake in
`tests/fakes/graph.py`):

- `GraphRows`: the counted graph (propositions and chains) — read by every graph caller; Practice
  needs nothing else.
- `SourceLedger`: each source's latest line and how far it is read (coverage, contributors,
  pending jobs) — the Library, extraction, the graph view's cluster labels.
- `SourceRecorder`: appending a source's line — the Library only.
- `MergeLedger`: the merge's reads and its writes (commit, version swap, simplification's
  archive) — extraction only, the graph's single writer.
- `UsageLedger`: appending a job's usage record — extraction.
- `ViewCache`: the state signatures a derived view is keyed on and the saved view snapshots — the
  graph view.
- `LayoutStore`: resting positions and render settings — the graph view.
- `GraphDeleter`: the learner's full deletion — the graph view.

A caller's parameter names the union it needs (`LibraryGraph`, `ExtractionGraph`,
`GraphViewStore`); `GraphStore` is every role at once (what the wiring holds).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

import numpy as np

from server.core.contracts.graph import Chain, CoverageLine, Proposition, RunLine, SourceLine, VersionLine
from server.core.contracts.intake import IntakeEntry
from server.core.library.graph import MergePlan
from server.core.library.simplify import ChainIndex


class GraphRows(Protocol):
    """The graph as it counts now: the merged propositions and the chains whose every member is a
    proposition. Both answer a new mapping (the caller may change it) of read-only values."""

    def nodes(self) -> dict[str, Proposition]:
        """Proposition id -> proposition."""
        ...

    def chains(self) -> dict[str, Chain]:
        """Chain id (`arg_…`) -> chain; a chain with a member that is not in `nodes()` is absent."""
        ...


class SourceLedger(Protocol):
    """Sources (lessons and notes files) and how far each is read into the graph (seed §6)."""

    def sources(self) -> dict[str, SourceLine]:
        """Each source's latest line, by source id, in the order sources first appeared."""
        ...

    def coverage(self, source: str) -> list[CoverageLine]:
        """The source's coverage lines that count (their job wrote its run line and is not
        retired; a pending job's count)."""
        ...

    def covered(self, source: str) -> dict[str, set[str]]:
        """message id -> fingerprints committed on, for one source (a retired job's do not count)."""
        ...

    def contributors(self, source: str) -> set[str]:
        """The source's jobs that wrote a run line and are not retired (counted or pending)."""
        ...

    def pending(self) -> frozenset[str]:
        """Jobs of a replacing run that merged but that no version line accepted yet."""
        ...


class SourceRecorder(Protocol):
    """The Library's one write to the ledgers outside a merge."""

    def record_source(self, line: SourceLine) -> None:
        """Append a source's line (it becomes the source's latest); readers see it at once.
        Raises OSError."""
        ...


class MergeLedger(GraphRows, Protocol):
    """What a merge reads beyond the counted graph and every write it makes: the extraction
    pipeline is the graph's only writer (seed §6)."""

    def chain_index(self) -> ChainIndex:
        """The `ChainIndex` of exactly `chains()`, kept across merges by the store (the writer
        carries it forward); read-only for callers (layer more chains with `over`)."""
        ...

    def graph_with(self, jobs: Collection[str]) -> tuple[dict[str, Proposition], dict[str, Chain]]:
        """The graph as it stands plus the lines of the pending jobs among `jobs`."""
        ...

    def contribution(self, jobs: set[str]) -> tuple[dict[str, Proposition], dict[str, Chain]]:
        """What these jobs' lines say (pending ones included), restricted to `graph_with(jobs)`."""
        ...

    def deleted(self) -> frozenset[str]:
        """Every id the learner deleted (no line of them counts again)."""
        ...

    def commit_merge(self, plan: MergePlan, coverage: list[CoverageLine], run: RunLine) -> None:
        """Write a merge in a crash-tolerant order: nodes, chains, coverage, the run line (the
        commit point), then the simplification rewrite. A crash leaves whole lines; the
        deterministic ids make a rerun converge. Raises OSError loudly."""
        ...

    def complete(self, line: VersionLine) -> None:
        """Append a version's swap: from then on its accepted jobs count, its retired ones (their
        lines and coverage) do not."""
        ...

    def archived_chains(self) -> dict[str, Chain]:
        """Chains simplification took out whose lines would still count, by id."""
        ...

    def restore_chains(self, chain_ids: set[str]) -> None:
        """Put archived chains back (a retirement removed what made them redundant)."""
        ...

    def drop_chains(self, chain_ids: set[str]) -> None:
        """Take provably redundant chains out (archived, restorable)."""
        ...


class UsageLedger(Protocol):
    """Token usage, one record per extraction job (`usage.jsonl`)."""

    def record_usage(self, line: dict[str, object]) -> None:
        """Append one job's usage record (any JSON object). Raises OSError."""
        ...


class ViewCache(Protocol):
    """What a derived view of the graph is keyed on, and where the derived bytes are kept so a
    cold start serves them without folding the ledgers."""

    def signature(self) -> tuple[tuple[int, int, int], ...]:
        """Changes whenever anything a view derives from changes (for caching reads)."""
        ...

    def rows_signature(self) -> tuple[tuple[int, int, int], ...]:
        """As `signature`, but unchanged by source lines (they only name clusters: a cache keyed on
        this must key on the labels too)."""
        ...

    def view_snapshot(self, key: bytes, name: str = "view") -> bytes | None:
        """The derived view bytes saved under `key`, or None (absent, unreadable, another key).
        `name`: "view" (full JSON) or "view-compact" (the compact form); another name raises
        ValueError."""
        ...

    def save_view_snapshot(self, key: bytes, body: bytes, name: str = "view") -> None:
        """Replace the derived view snapshot (derived data: not fsynced). `key` is one line.
        Raises OSError, ValueError."""
        ...


class LayoutStore(Protocol):
    """The sanctioned graph-adjacent writes: where nodes rest and how the canvas draws."""

    def positions(self) -> dict[str, tuple[float, float]]:
        """Resting positions by node id (a new dict); empty when none are saved or unreadable."""
        ...

    def save_positions(self, positions: dict[str, tuple[float, float]]) -> None:
        """Replace every saved position. Raises OSError."""
        ...

    def render_settings(self) -> dict[str, Any]:
        """The canvas's render settings (a JSON object); empty when none are saved."""
        ...

    def save_render_settings(self, settings: dict[str, Any]) -> None:
        """Replace the render settings. Raises OSError."""
        ...


class GraphDeleter(Protocol):
    """The learner's full deletion (seed §6: full death)."""

    def delete(self, node_ids: set[str], chain_ids: set[str], at: str = "") -> None:
        """Record the deleted ids (no line of them counts again, even one written later), rewrite
        the ledgers without them and prune their positions. `at`: when (ISO time)."""
        ...


class LibraryGraph(GraphRows, SourceLedger, SourceRecorder, Protocol):
    """What `LibraryService` uses: sources, their coverage, and the propositions they gave."""


class ExtractionGraph(MergeLedger, SourceLedger, UsageLedger, Protocol):
    """What `ExtractionService` uses: everything a merge reads and writes."""


class GraphViewStore(GraphRows, SourceLedger, ViewCache, LayoutStore, GraphDeleter, Protocol):
    """What `GraphService` uses: the rows and labels it derives the view from, its cache, the
    layout and deletion."""


class GraphStore(ExtractionGraph, LibraryGraph, GraphViewStore, Protocol):
    """The graph ledgers in `data/graph/` (seed §6), every role at once: what the wiring holds and
    hands each caller as the role it needs."""

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the source and usage appends made so far are durable (shutdown); False when
        `timeout` (s) ran out."""
        ...


class IntakeStore(Protocol):
    """The accepted queue, `data/intake/` (issue 26): work answered for and not yet finished (a
    notes import's files, a lesson's extraction trigger), written only by the Library, read at
    start to resume it."""

    def accept(self, entries: Sequence[IntakeEntry], *, durable: bool = True) -> None:
        """Record a batch with one write; `durable`: fsynced before returning (off the event
        loop), else fsynced in the background. Raises OSError: then nothing was accepted."""
        ...

    def settle(self, keys: Sequence[str]) -> None:
        """The entries ended (merged, failed, aborted, or found merged); never raises."""
        ...

    def open(self) -> list[IntakeEntry]:
        """The entries accepted and not settled, in the order accepted."""
        ...

    def compact(self) -> list[IntakeEntry]:
        """At start: `open()`, with the file rewritten to hold only them. Raises OSError."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for the background fsyncs (shutdown); False when `timeout` (s) ran out."""
        ...


class EmbedderUnavailable(Exception):
    """The embedding model cannot be loaded or run (missing package data, a broken runtime). The
    caller falls back to lexical candidates; nothing is lost."""


class Embedder(Protocol):
    """Sentence embeddings for the auditor's candidates (issue 16): offline, on the CPU."""

    name: str
    """The model's id (vectors of different models are never compared)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), float32, L2-normalised rows; (0, dim) for no texts. The same
        text always gives the same row. Blocking CPU work: call it off the event loop. Raises
        EmbedderUnavailable."""
        ...
