"""Ports: what the domain needs from storage, as typing.Protocol (seed §3).

Adapters in `server.store` implement them; `server.services.stores` wires them; tests use the
fakes in `tests/fakes/`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, Protocol

import numpy as np

from server.core.classroom.context import SummaryCover
from server.core.contracts.chat import ChatRecord, ChatSummary
from server.core.contracts.graph import (
    Chain,
    ChainLine,
    CoverageLine,
    Proposition,
    RunLine,
    SourceLine,
    VersionLine,
)
from server.core.contracts.intake import IntakeEntry
from server.core.contracts.jobs import JobRecord
from server.core.contracts.models import SecretName, Settings
from server.core.contracts.practice import ProblemSet
from server.core.library.graph import ChainIndex, MergePlan


class StoreCorrupt(Exception):
    """A canonical record exists but cannot be read (bad JSON or bad shape). Nothing was changed."""


class ChatStore(Protocol):
    """Session records, `data/chats/<id>.json` (a snapshot replaced atomically) and its
    append-only log `<id>.log` (decision 0015)."""

    def get(self, chat_id: str) -> ChatRecord | None:
        """The record, or None when no such session exists. Raises StoreCorrupt.

        A record is an immutable value: it may be shared with other callers (a read cache), so
        changes are derived with `model_copy(update=...)`, never made in place."""
        ...

    def save(self, record: ChatRecord) -> None:
        """Make `record` the stored record, durable before returning (a tail change appended to
        the log and fdatasynced, else the snapshot replaced atomically). Raises OSError loudly."""
        ...

    def update(self, chat_id: str, change: Callable[[ChatRecord], ChatRecord]) -> ChatRecord | None:
        """Read, change (`change(stored) -> new`; the same object: no write) and save the record as
        one step that no other save interleaves with, from any thread. Returns the stored record,
        or None when no such session exists. Raises as `get`/`save` do, and what `change` raises
        (nothing written)."""
        ...

    def flush(self) -> None:
        """Write what derived files still wait for (the session index); called at shutdown."""
        ...

    def summaries(self) -> list[ChatSummary]:
        """The session list's rows (`running` False), one per readable record, in no particular
        order, without reading the records that did not change (an index kept on save and
        delete); unreadable records are skipped and logged. May answer the very same list object
        while nothing changed (callers never mutate it; `ChatService.list_json` keys its cached
        body on it)."""
        ...

    def record_json(self, chat_id: str) -> bytes | None:
        """The record as the bytes of one JSON object (as `get` returns it, dumped by alias:
        camelCase keys), or None when no such session exists. Raises StoreCorrupt."""
        ...

    def list(self) -> list[ChatRecord]:
        """Every readable record; unreadable ones are skipped and logged."""
        ...

    def delete(self, chat_id: str) -> bool:
        """Remove the record; False when it did not exist."""
        ...


class SettingsStore(Protocol):
    """`data/settings.json`."""

    def load(self) -> Settings:
        """The settings, defaults when the file is absent. Raises StoreCorrupt when unreadable."""
        ...

    def save(self, settings: Settings) -> None:
        """Replace the file atomically."""
        ...


class SecretStore(Protocol):
    """API keys, by provider. Keys never reach settings, records or logs."""

    source: str
    """Where keys live: "keyring" or "file"."""

    def get(self, provider: SecretName) -> str | None: ...

    def set(self, provider: SecretName, key: str) -> None: ...

    def delete(self, provider: SecretName) -> None: ...


class GraphStore(Protocol):
    """The graph ledgers in `data/graph/` (seed §6). Reads fold the ledgers; the only writes are
    a merge's commit, a source's record and a job's usage, all by the extraction pipeline."""

    def signature(self) -> tuple[tuple[int, int, int], ...]:
        """Changes whenever anything a view derives from changes (for caching reads)."""
        ...

    def rows_signature(self) -> tuple[tuple[int, int, int], ...]:
        """As `signature`, but unchanged by source lines (they only name clusters: a cache keyed on
        this must key on the labels too)."""
        ...

    def nodes(self) -> dict[str, Proposition]: ...

    def chains(self) -> dict[str, Chain]: ...

    def chain_lines(self) -> list[ChainLine]: ...

    def chain_index(self) -> ChainIndex:
        """The `ChainIndex` of exactly `chains()`, kept across merges by the store (the writer
        carries it forward); read-only for callers (layer more chains with `over`)."""
        ...

    def covered(self, source: str) -> dict[str, set[str]]:
        """message id -> fingerprints committed on, for one source (a retired job's do not count)."""
        ...

    def coverage(self, source: str) -> list[CoverageLine]:
        """The source's coverage lines that count."""
        ...

    def contributors(self, source: str) -> set[str]:
        """The source's jobs that wrote a run line and are not retired (counted or pending)."""
        ...

    def pending(self) -> frozenset[str]:
        """Jobs of a replacing run that merged but that no version line accepted yet."""
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

    def complete(self, line: VersionLine) -> None:
        """Append a version's swap: from then on its accepted jobs count, its retired ones (their
        lines and coverage) do not."""
        ...

    def sources(self) -> dict[str, SourceLine]:
        """Each source's latest line."""
        ...

    def runs(self) -> list[RunLine]: ...

    def archived_chains(self) -> dict[str, Chain]:
        """Chains simplification took out whose lines would still count, by id."""
        ...

    def restore_chains(self, chain_ids: set[str]) -> None:
        """Put archived chains back (a retirement removed what made them redundant)."""
        ...

    def drop_chains(self, chain_ids: set[str]) -> None:
        """Take provably redundant chains out (archived, restorable)."""
        ...

    def commit_merge(self, plan: MergePlan, coverage: list[CoverageLine], run: RunLine) -> None:
        """Write a merge in a crash-tolerant order: nodes, chains, the simplification rewrite,
        the run line, and coverage last (a crash before it checkpoints nothing). A crash leaves
        whole lines; the deterministic ids make a rerun converge. Raises OSError loudly."""
        ...

    def view_snapshot(self, key: bytes, name: str = "view") -> bytes | None:
        """The derived view bytes saved under `key`, or None (absent, unreadable, another key).
        `name`: "view" (full JSON) or "view-compact" (the compact form)."""
        ...

    def save_view_snapshot(self, key: bytes, body: bytes, name: str = "view") -> None:
        """Replace the derived view snapshot (derived data: not fsynced). Raises OSError."""
        ...

    def record_source(self, line: SourceLine) -> None: ...

    def record_usage(self, line: dict[str, object]) -> None:
        """Append one job's usage record (`usage.jsonl`)."""
        ...

    def positions(self) -> dict[str, tuple[float, float]]: ...

    def save_positions(self, positions: dict[str, tuple[float, float]]) -> None: ...

    def render_settings(self) -> dict[str, Any]: ...

    def save_render_settings(self, settings: dict[str, Any]) -> None: ...

    def delete(self, node_ids: set[str], chain_ids: set[str], at: str = "") -> None:
        """Full death: record the deleted ids, rewrite the ledgers without them and prune their
        positions."""
        ...


class GraphReader(Protocol):
    """What the teacher's graph tools may read (seed §6: the teacher probes, nothing is injected)."""

    def sessions(self) -> list[dict[str, Any]]:
        """Birth sessions: `{id, title, kind, propositions}`."""
        ...

    def propositions(self, session: str) -> list[dict[str, str]]:
        """`{id, name, statement}` of the propositions a session gave the graph."""
        ...


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


class JobStore(Protocol):
    """Workbench job records, `data/jobs/<id>.json`, written only by the job runner (seed §4)."""

    def get(self, job_id: str) -> JobRecord | None:
        """The record, or None when absent. Raises StoreCorrupt when unreadable."""
        ...

    def save(self, job: JobRecord) -> None:
        """Replace the record atomically. Raises OSError loudly."""
        ...

    def update(self, job_id: str, change: Callable[[JobRecord], JobRecord | None]) -> JobRecord | None:
        """Read, change and write under the job's lock; `change` returns the new record or None
        (no write). Returns what was written, or None."""
        ...

    def list(self, chat_id: str | None = None) -> list[JobRecord]:
        """Every readable record (of one session when `chat_id` is given); unreadable ones are
        skipped and logged."""
        ...

    def delete(self, job_id: str) -> bool:
        """Remove the record; False when it did not exist."""
        ...


class HtmlCheck(Protocol):
    """What running an HTML page in a headless browser observed."""

    console_errors: list[str]
    page_errors: list[str]
    dialogs: list[str]
    visible: bool
    timed_out: bool


class SvgRender(Protocol):
    """An SVG rendered to pixels."""

    png: bytes
    nonblank: bool


class Headless(Protocol):
    """A headless browser that runs untrusted HTML and SVG with no network (seed §5.1: sub-agents
    verify, never one-shot). The adapter is `server.agent.workbench.headless.ChromiumHeadless`."""

    def available(self) -> bool:
        """Whether a browser can run here (demo and visual tools are offered only then)."""
        ...

    async def run_html(self, html: str, *, timeout_s: float = 10.0) -> HtmlCheck:
        """Load the page, let it run, and report errors, dialogs and whether anything visible was
        drawn. A page that never settles reports `timed_out`."""
        ...

    async def render_svg(self, svg: str, *, width: int = 800, height: int = 600) -> SvgRender:
        """Render an SVG (already sanitized) to a PNG."""
        ...


class SearchHit(Protocol):
    title: str
    url: str
    snippet: str


class WebSearch(Protocol):
    """A web search provider the learner configured (Tavily, Brave or Google Programmable Search)."""

    async def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Hits for a query. Raises SearchFailed (in the adapter module) with a plain sentence."""
        ...

    async def read_page(self, url: str) -> str:
        """The main text of a page (extracted), at most a bounded number of characters. Raises
        SearchFailed when it cannot be fetched or holds no text."""
        ...


class SummaryCache(Protocol):
    """Derived lesson summaries (issue 15): a cache keyed by session, never the source of truth."""

    def get(self, chat_id: str) -> SummaryCover | None:
        """The cached summary, or None (also when its file is unreadable: it is rebuilt)."""
        ...

    def put(self, chat_id: str, cover: SummaryCover) -> None:
        """Replace the session's summary atomically."""
        ...

    def delete(self, chat_id: str) -> None:
        """Forget the session's summary (the session was deleted)."""
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
