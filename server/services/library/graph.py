"""The graph's read channel and its few sanctioned writes: the view, clusters, positions,
render settings, and deletion (seed §6, §7). Slightly past 400 lines: `GraphService` is the
one reader of the view and its only learner-driven writer, and its cache is already `view_cache`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.events import EventBus
from server.core.library.folders import folder_tree
from server.core.library.layout import sanitize_positions, settle
from server.core.library.view_compact import compact_bytes
from server.core.library.view_derive import clusters, deletion, derive_view, live_chains
from server.core.library.view_rows import ViewRows, view_bytes
from server.core.ports import ChatStore, GraphViewStore
from server.core.refusals import Refused
from server.services.library.memory import release_memory
from server.services.library.view_cache import Compact, compact_answer, from_snapshot, patched, view_key
from server.services.machine_room import heap
from server.services.machine_room.background import run_background

log = logging.getLogger("lh.graph")

RENDER_KEYS: dict[str, type | tuple[type, ...]] = {
    "labels": bool,
    "hulls": bool,
    "labelZoom": (int, float),
    "nodeSize": (int, float),
    "linkOpacity": (int, float),
}


T = TypeVar("T")

TRIM_AFTER_PROPOSITIONS = 20_000
"""A read's derivation over at least this many propositions is followed by `release_memory()`
(glibc `malloc_trim`): a full derivation at 100k propositions frees ~800 MB of transient heap that
glibc kept mapped (the server's RSS 1.5 GB -> ~0.7 GB after the trim; issue 16 item 2,
`tests/bench/library/bench_graph_memory.py`). Below it the trim is not worth its walk of the heap."""


FULL_KEPT_BELOW = 20_000
"""The full view's form (its JSON and row memo) is kept in memory, and derived and patched by the
settle after each merge, only for graphs of fewer propositions than this; at and above it the full
form is derived when read and not kept (`_keep_full`), and the settle derives and snapshots the
compact form alone (issue 28 item 3: at 100k propositions the full body and its memo were ~120 MB
of the served RSS, and the page reads only the compact form; the full one is for scripts and
tests). A full read of a large graph then derives it whole in a worker thread (seconds at 100k)
unless the snapshot still matches the files."""
FULL_KEPT_BYTES = 16_000_000
"""`FULL_KEPT_BELOW` in bytes of the full view's JSON (~750 bytes a proposition with its chain
and links), for a body read from the snapshot, whose graph was not folded."""


def _then_trim(propositions: int, derive: Callable[..., T], *args: Any) -> T:
    """`derive(*args)`, then hand freed heap back to the OS when the graph is large (worker thread:
    ctypes drops the GIL during the trim)."""
    result = derive(*args)
    if propositions >= TRIM_AFTER_PROPOSITIONS:
        release_memory()
    return result


@dataclass(frozen=True)
class MergeGate:
    """What a deletion needs from the extraction pipeline: its audit->merge section (held while
    the graph changes) and whether a source's extraction is queued or running (it blocks the
    deletion of that source's nodes).

    Attributes:
        section: the lock every merge into the graph holds (`ExtractionService.merge_section`).
        extracting: source id -> whether it has a run queued or executing.
    """

    section: asyncio.Lock
    extracting: Callable[[str], bool]


class GraphService:
    """Args:
    graph: the ledgers.
    chats: for the current titles of lesson clusters.
    gate: the extraction pipeline's merge section and running sources (deletions only).
    events: the browser's bus (`graph-changed` after a deletion; a private one when omitted).
    clock: ISO timestamp source of a deletion's line (`server.core.clock`).
    new_id: mints this process's view epoch (8 hex digits).
    """

    def __init__(
        self,
        graph: GraphViewStore,
        chats: ChatStore,
        gate: MergeGate,
        *,
        events: EventBus | None = None,
        clock: Clock = utc_now,
        new_id: NewId = new_id,
    ) -> None:
        self.graph = graph
        self.chats = chats
        self.gate = gate
        self.events = events if events is not None else EventBus()
        self.clock = clock
        self._view_cache: tuple[object, bytes] | None = None
        self._rows: ViewRows | None = None
        """The last derived view's rows: the next derivation re-derives only the rows whose
        propositions, chains or positions changed (a merge's, a drag's)."""
        self._compact: Compact | None = None
        self._read_lock = asyncio.Lock()
        """One derivation for reads at a time (`read_json`)."""
        self._epoch = new_id("", 8)
        """Versions are `<epoch>-<n>`: a version from another process is never mistaken for one
        of this process's."""
        self._versions = itertools.count(1)
        self._positions_lock = threading.Lock()
        """Serialises read-modify-writes of the positions file (the settle's worker thread, drags)."""

    def _labels(self) -> dict[str, tuple[str, str | None]]:
        """Cluster labels: notes files from the sources ledger, lessons from their records' current
        titles (a deleted lesson has none: its label is null)."""
        labels: dict[str, tuple[str, str | None]] = {}
        for source in self.graph.sources().values():
            if source.kind == "notes":
                labels[source.id] = ("notes", source.title)
            else:
                try:
                    record = self.chats.get(source.id)
                except Exception:  # an unreadable record names nothing
                    record = None
                if record is not None:
                    labels[source.id] = ("chat", record.title)
        return labels

    def _paths(self) -> dict[str, str | None]:
        """Notes source id -> its path as imported: the folder clusters (`core.folders`)."""
        return {s.id: s.path for s in self.graph.sources().values() if s.kind == "notes"}

    def sources_named(self) -> tuple[dict[str, tuple[str, str | None]], dict[str, str | None]]:
        """(source id -> (kind, title or None), notes source id -> its path): what names the
        clusters and folders (the graph's exports use them too). A pass over every source."""
        return self._labels(), self._paths()

    def view(self) -> dict[str, Any]:
        """`GET /api/graph`: a pure read (never writes)."""
        return derive_view(
            self.graph.nodes(), self.graph.chains(), self.graph.positions(), self._labels(), self._paths()
        )

    def view_json(self) -> bytes:
        """The view as JSON bytes, derived again only when the graph files or a label changed.

        A pure read: kept in memory, else served from the snapshot the last settle wrote when it
        was derived from the files as they stand with these labels (a cold start then folds no
        ledger), else derived here. On the caller's thread: the route uses `read_json`."""
        labels, paths = self._labels(), self._paths()
        key = view_key(self.graph.rows_signature(), labels, paths)
        if self._view_cache is None or self._view_cache[0] != key:
            self._view_state(key, labels, paths)
        assert self._view_cache is not None
        return self._view_cache[1]

    def compact_json(self, since: str | None = None) -> bytes:
        """`GET /api/graph?format=compact[&since=<version>]` (issue 17 item 5): the compact view
        (`core.library.view_compact.compact_bytes`) with its version, or with `since` a version this
        process served, only what changed since (`compact_delta`; never much larger than the whole
        view). A `since` this process cannot diff from (another process's, forgotten, or from
        before a full derivation) gets the full compact view (`"full": true`); the reader tells
        them apart by `full`. A pure read, served from memory, else from the snapshot the last
        settle wrote, else derived (patching the last derived rows). On the caller's thread."""
        labels, paths = self._labels(), self._paths()
        key = view_key(self.graph.rows_signature(), labels, paths)
        state = self._compact
        if state is None or state.key != key:
            state = self._compact_state(key, labels, paths)
        return compact_answer(state, since)

    async def read_json(self, compact: bool = False, since: str | None = None) -> bytes:
        """`GET /api/graph`'s body: `compact_json(since)` when `compact`, else `view_json()`. What
        is kept in memory is served on the event loop (sub-millisecond); reading the snapshot and
        a derivation (after a drag or a deletion, or a start whose snapshot does not match the
        files) run in a worker thread, one read at a time (a second read waits, then is served
        from memory): a patched derivation costs ~200 ms of CPU at 100k propositions, and no read
        may hold the loop for more than 100 ms (issue 17, bad input). The ledgers are folded on
        the loop, as the settle does, and only when the snapshot does not serve."""
        async with self._read_lock:
            labels, paths = self._labels(), self._paths()
            key = view_key(self.graph.rows_signature(), labels, paths)
            if compact:
                state = self._compact
                if state is None or state.key != key:
                    state = await run_background(self._compact_from_snapshot, key)
                    if state is None:
                        nodes, chains = self.graph.nodes(), self.graph.chains()
                        derived: Compact = await run_background(
                            _then_trim, len(nodes), self._derive_compact, key, labels, paths, nodes, chains
                        )
                        state = derived
                return compact_answer(state, since)
            cached = self._view_cache
            if cached is not None and cached[0] == key:
                return cached[1]
            body: bytes | None = await run_background(self.graph.view_snapshot, key)
            if body is None:
                nodes, chains = self.graph.nodes(), self.graph.chains()
                fresh: bytes = await run_background(
                    _then_trim, len(nodes), self._derive, nodes, chains, labels, paths
                )
                body = fresh
            self._keep_full(key, body)
            return body

    def _keep_full(self, key: bytes, body: bytes) -> None:
        """Keep the full view's body for `key` when it is small (`FULL_KEPT_BYTES`), else forget
        it and its row memo: the next full read derives again (or reads the snapshot)."""
        if len(body) < FULL_KEPT_BYTES:
            self._view_cache = (key, body)
        else:
            self._view_cache, self._rows = None, None

    def _view_state(
        self,
        key: bytes,
        labels: dict[str, tuple[str, str | None]],
        paths: dict[str, str | None],
    ) -> bytes:
        """The full view for `key`: its snapshot when it matches, else derived; kept in memory."""
        body = self.graph.view_snapshot(key)
        if body is None:
            body = self._derive(self.graph.nodes(), self.graph.chains(), labels, paths)
        self._keep_full(key, body)
        return body

    def _compact_state(
        self,
        key: bytes,
        labels: dict[str, tuple[str, str | None]],
        paths: dict[str, str | None],
    ) -> Compact:
        """The compact view for `key`: its snapshot when it matches, else derived (patched)."""
        return self._compact_from_snapshot(key) or self._derive_compact(key, labels, paths)

    def _compact_from_snapshot(self, key: bytes) -> Compact | None:
        state = from_snapshot(key, self.graph.view_snapshot(key, "view-compact"))
        if state is not None:
            self._compact = state
        return state

    def _derive_compact(
        self,
        key: bytes,
        labels: dict[str, tuple[str, str | None]],
        paths: dict[str, str | None] | None,
        nodes: Any = None,
        chains: Any = None,
    ) -> Compact:
        """Derive the compact view (patching the last derived rows) under a new version, and keep
        it with the versions before it."""
        was = self._compact
        version = f"{self._epoch}-{next(self._versions)}"
        previous = was.rows if was is not None else None
        body, rows = compact_bytes(
            self.graph.nodes() if nodes is None else nodes,
            self.graph.chains() if chains is None else chains,
            self.graph.positions(),
            labels,
            version,
            previous,
            paths,
        )
        state = patched(was, key, body, version, rows)
        self._compact = state
        return state

    def _derive(
        self,
        nodes: Any,
        chains: Any,
        labels: dict[str, tuple[str, str | None]],
        paths: dict[str, str | None] | None = None,
    ) -> bytes:
        """The view's JSON bytes, patching the last derived rows (`view_bytes`); the rows are kept
        for the next patch only below `FULL_KEPT_BELOW` propositions."""
        body, rows = view_bytes(nodes, chains, self.graph.positions(), labels, self._rows, paths)
        self._rows = rows if len(nodes) < FULL_KEPT_BELOW else None
        return body

    def _snapshot(
        self,
        nodes: Any,
        chains: Any,
        labels: dict[str, tuple[str, str | None]],
        paths: dict[str, str | None] | None = None,
    ) -> None:
        """Derive the view from the graph as it stands and save it as the snapshot (worker thread,
        after a settle): the next read, or the first after a restart, is served from it. The full
        form only below `FULL_KEPT_BELOW` propositions; the compact form always. The key
        is taken before the positions are read, so a drag landing meanwhile makes it stale, never
        wrong. A failed write is logged: the snapshot is derived data."""
        key = view_key(self.graph.rows_signature(), labels, paths)
        body = None
        if len(nodes) < FULL_KEPT_BELOW:  # above it the full form is derived only when read
            body = self._derive(nodes, chains, labels, paths)
            self._view_cache = (key, body)
        else:
            self._view_cache, self._rows = None, None
        compact = self._derive_compact(key, labels, paths, nodes, chains)
        try:
            if body is not None:
                self.graph.save_view_snapshot(key, body)
            self.graph.save_view_snapshot(key, compact.body, "view-compact")
        except OSError:
            log.warning("the view snapshot could not be written; reads derive the view", exc_info=True)

    def clusters(self) -> list[dict[str, Any]]:
        return clusters(self.graph.nodes(), self._labels(), self._paths())

    async def settle_layout(self) -> int:
        """Give every node without a position one (existing nodes keep theirs; seed §6), each
        proposition inside its birth session's region (`core.layout.settle`). Returns how many
        were placed. Called after each merge, inside the merge section; contained by the caller.
        Then derives the view and saves its snapshot (`_snapshot`), so the first read after a
        merge, and after a restart, is served without deriving.

        The ledgers are read on the loop (folds the store caches); the cluster labels and paths
        (a pass over every source; the sources ledger and the chat store are thread-safe), the
        settle's inputs (lists over every node and chain, issue 16), the settle and the positions
        file's read and write run in a worker thread, so the loop stays free however large the
        graph. A drag committed meanwhile is kept: the save merges into the file as it stands,
        under the lock `put_positions` takes too."""
        nodes, chains = self.graph.nodes(), self.graph.chains()

        def settle_then_snapshot() -> int:
            labels, paths = self._labels(), self._paths()  # a pass over every source (issue 16)
            live = live_chains(nodes, chains)
            ids = [*nodes, *(c.id for c in live)]
            links = [(p, c.id) for c in live for p in c.premises] + [(c.id, c.conclusion) for c in live]
            groups = {nid: node.sources[0] if node.sources else "" for nid, node in nodes.items()}
            folders, _ = folder_tree(paths)
            placed = self._settle_and_save(ids, links, groups, folders)
            self._snapshot(nodes, chains, labels, paths)
            heap.survivors_settled()  # the folds and view memos are long-lived: freeze them
            return placed

        return await run_background(settle_then_snapshot)  # behind the event loop (issue 16)

    def _settle_and_save(
        self,
        ids: list[str],
        links: list[tuple[str, str]],
        groups: dict[str, str],
        folders: dict[str, str] | None = None,
    ) -> int:
        """The worker-thread half of `settle_layout`: how many nodes were placed (files of one
        folder together, `folders`: session -> folder key)."""
        current = self.graph.positions()
        settled = settle(current, ids, links, groups=groups, folders=folders)
        fresh = {k: v for k, v in settled.items() if k not in current or current[k] != v}
        if not fresh:
            return 0
        with self._positions_lock:
            latest = self.graph.positions()
            # a node dragged meanwhile keeps its drag; a non-finite stored pair is replaced
            mine = {
                k: v
                for k, v in fresh.items()
                if not all(math.isfinite(c) for c in latest.get(k, (math.nan,)))
            }
            self.graph.save_positions({**latest, **mine})
        return len(mine)

    def put_positions(self, raw: object) -> int:
        """Commit dragged positions (sanitized: known ids, finite numbers, clamped). Returns how
        many were taken. Raises Refused(invalid) for a payload that is not an object."""
        nodes, chains = self.graph.nodes(), self.graph.chains()
        try:
            clean = sanitize_positions(raw, set(nodes) | set(chains))
        except ValueError as exc:
            raise Refused("invalid", "bad_request", str(exc)) from exc
        if clean:
            with self._positions_lock:
                self.graph.save_positions({**self.graph.positions(), **clean})
        return len(clean)

    def render_settings(self) -> dict[str, Any]:
        return self.graph.render_settings()

    def put_render_settings(self, raw: object) -> dict[str, Any]:
        """Keep only known keys with values of the right type. Raises Refused(invalid)."""
        if not isinstance(raw, dict):
            raise Refused("invalid", "bad_request", "render settings must be an object")
        clean = {}
        for key, value in raw.items():
            kind = RENDER_KEYS.get(key)
            if kind is None:
                raise Refused(
                    "invalid", "bad_request", f"unknown render setting {key!r}; known: {sorted(RENDER_KEYS)}"
                )
            if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                raise Refused("invalid", "bad_request", f"render setting {key!r} has the wrong type")
            clean[key] = value
        merged = {**self.graph.render_settings(), **clean}
        self.graph.save_render_settings(merged)
        return merged

    async def delete(self, ids: list[str]) -> dict[str, Any]:
        """Full death: propositions with every chain referencing them; implication ids with exactly
        their chain. Raises Refused(not_found) when nothing matches, 409 while a source involved is
        being extracted.

        Runs inside the extraction pipeline's audit→merge section, like a merge: no auditor reads
        the graph while it changes, and a merge planned before it has landed (a merge that comes
        after plans against the graph without these ids, and the recorded deletion keeps any late
        line of them from counting)."""
        async with self.gate.section:
            nodes, chains = self.graph.nodes(), self.graph.chains()
            dead_nodes, dead_chains = deletion(nodes, chains, set(ids))
            if not dead_nodes and not dead_chains:
                raise Refused(
                    "not_found", "not_found", "none of these ids is a node of the graph; reload the graph"
                )
            involved = {s for n in dead_nodes for s in nodes[n].sources} | {
                s for c in dead_chains for s in chains[c].sources
            }
            busy = sorted(s for s in involved if self.gate.extracting(s))
            if busy:
                labels = self._labels()
                names = ", ".join(f"“{labels[s][1]}”" if labels.get(s, ("", None))[1] else s for s in busy)
                raise Refused(
                    "conflict",
                    "extraction_running",
                    f"{names} {'is' if len(busy) == 1 else 'are'} being read into the graph; "
                    "nothing was deleted: wait for the reading to finish, then delete",
                )
            self.graph.delete(dead_nodes, dead_chains, self.clock())
        self.events.emit("graph-changed")
        return {"deletedNodes": sorted(dead_nodes), "deletedChains": sorted(dead_chains)}
