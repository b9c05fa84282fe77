"""The graph ledgers in `data/graph/` (implements core.ports.GraphStore).

Files: nodes.jsonl, chains.jsonl, coverage.jsonl, sessions.jsonl (per-run checkpoints),
sources.jsonl, usage.jsonl, versions.jsonl (completed versions: accepted and retired jobs),
retired.jsonl (withdrawn jobs, written before versions.jsonl; still read), deleted.jsonl (deleted
ids), simplified.jsonl (chain lines simplification took out of chains.jsonl, kept so a retirement
can restore them); view.snapshot (derived: the home view's JSON under the key of the files it was
derived from, so a cold start serves it without folding the ledgers; view-compact.snapshot the
same for the compact form). Appends are whole lines;
reads skip a torn or invalid line.

What a read counts (docs/decisions/0010-a-changed-source-replaces-its-contribution.md): a node or
chain line counts when its job committed (its run line in sessions.jsonl is written and, for a
pending run line, a version line accepted it), the job is not retired and the id is not deleted;
coverage counts when its job wrote its run line and is not retired (a pending job's coverage
counts, so a failed re-run resumes; a job whose commit a crash cut short before its run line
covers nothing, so it runs again and nothing merges twice); a chain counts only while every
member is a counted proposition.

Over 400 lines for one responsibility: what counts and the folds kept of it (signatures, the
commit's freeze and carry-forward) must change together; the in-memory indexes
(`ledger_index`) and the non-ledger files (`graph_files`) live beside it.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from server.core.contracts.graph import (
    Chain,
    ChainLine,
    CoverageLine,
    DeletionLine,
    NodeLine,
    Proposition,
    RetireLine,
    RunLine,
    SourceLine,
    VersionLine,
)
from server.core.library.graph import (
    MergePlan,
    fold_chains,
    fold_nodes,
    live_coverage,
    live_lines,
    without_dangling,
)
from server.core.library.simplify import ChainIndex
from server.store.atomic import write_bytes_atomic
from server.store.ledger import (
    LedgerSyncer,
    append_ledger,
    read_ledger,
    split_ledger,
)
from server.store.library.graph_files import GraphFiles
from server.store.library.ledger_index import _Followed, _Spans

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class _UsageLine(BaseModel):
    model_config = ConfigDict(extra="allow")


_MARKS = ("marks", "sessions", "retired", "deleted", "versions")
"""The ledgers that decide which lines count (the first name is the marks' cache slot)."""


class FileGraphStore(GraphFiles):
    """Ledgers under one directory.

    Args:
        root: the graph directory (`data/graph`), created on first write.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, tuple[tuple[tuple[int, int, int], ...], Any]] = {}
        self._index: tuple[tuple[tuple[int, int, int], ...], ChainIndex] | None = None
        self._counted: tuple[tuple[tuple[int, int, int], ...], dict[str, Chain]] | None = None
        # The small ledgers in memory, indexed, kept current from each file's new tail; the node
        # and chain lines only as byte spans per job (issue 16: a job reads no whole ledger).
        self._runs = _Followed(self._path("sessions"), RunLine, lambda line: line.source)
        self._coverage = _Followed(
            self._path("coverage"), CoverageLine, lambda line: line.source, ordered=False
        )
        self._sources = _Followed(
            self._path("sources"), SourceLine, lambda line: line.id, ordered=False, last=True
        )
        self._retired = _Followed(self._path("retired"), RetireLine, lambda line: line.job)
        self._versions = _Followed(self._path("versions"), VersionLine, lambda line: line.source)
        self._deletions = _Followed(self._path("deleted"), DeletionLine, lambda line: "")
        self._node_spans = _Spans(self._path("nodes"))
        self._commit_lock = threading.Lock()
        self._frozen: (
            tuple[int, tuple[tuple[int, int, int], ...], tuple[tuple[int, int, int], ...]] | None
        ) = None
        """While a commit runs (in a worker thread): its thread, and the view signatures before it."""
        self._chain_spans = _Spans(self._path("chains"))
        self._positions: tuple[tuple[int, int, int], dict[str, tuple[float, float]]] | None = None
        """positions.json's signature and what it held: a read while it is unchanged parses
        nothing (each view derivation reads it; 20,000 entries are ~1 MB of JSON)."""
        self._syncer = LedgerSyncer()
        """Fsyncs the source and usage appends off the caller's thread (they are made on the loop)."""

    def _path(self, name: str) -> Path:
        return self.root / f"{name}.jsonl"

    def _cached(self, name: str, load: Callable[[], T], *also: str) -> T:
        """A fold of a ledger, reused while the file (and the `also` ledgers it depends on) are
        unchanged (same inode, size, mtime). The folded objects are read-only by contract."""
        hit = self._cache.get(name)
        if self._past():
            return hit[1] if hit is not None else load()
        signature = self._signatures(name, *also)
        if hit is None or hit[0] != signature:
            hit = (signature, load())
            self._cache[name] = hit
        return hit[1]

    def signature(self) -> tuple[tuple[int, int, int], ...]:
        """The state of every file a view is derived from (inode, size, mtime): equal signatures
        mean an equal graph."""
        frozen = self._frozen
        if frozen is not None and frozen[0] != threading.get_ident():
            return frozen[1]  # a commit is being written: the graph read is the one before it
        return self._view_files("sources")

    def _past(self) -> bool:
        """Whether this read answers the graph as it was before the commit another thread is
        writing (its kept folds, its view signatures), never a half-written one."""
        frozen = self._frozen
        return frozen is not None and frozen[0] != threading.get_ident()

    def rows_signature(self) -> tuple[tuple[int, int, int], ...]:
        """`signature` without the sources ledger, which only names clusters: for a key that
        carries the cluster labels themselves (a source line that changes no label, as an import
        appends after its merges, then leaves a derived view current)."""
        frozen = self._frozen
        if frozen is not None and frozen[0] != threading.get_ident():
            return frozen[2]
        return self._view_files()

    def _view_files(self, *extra: str) -> tuple[tuple[int, int, int], ...]:
        out = [self._signature(name) for name in ("nodes", "chains", *extra, *_MARKS)]
        try:
            stat = (self.root / "positions.json").stat()
            out.append((stat.st_ino, stat.st_size, stat.st_mtime_ns))
        except FileNotFoundError:
            out.append((0, 0, 0))
        return tuple(out)

    # -- what counts: committed, not retired, not deleted ------------------------------------------
    def _marks(self) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
        """(committed jobs, retired jobs, deleted ids, pending jobs): a pending job wrote its run
        line but no version line accepted (or retired) it yet."""

        def load() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
            retired = {line.job for line in self._retired.current().lines}
            accepted: set[str] = set()
            for version in self._versions.current().lines:
                retired.update(version.retired)
                accepted.update(version.accepted)
            runs = self.runs()
            committed = frozenset(r.job for r in runs if not r.pending or r.job in accepted) - retired
            pending = frozenset(r.job for r in runs if r.pending) - accepted - retired
            deleted = frozenset(i for line in self._deletions.current().lines for i in line.ids)
            return committed, frozenset(retired), deleted, pending

        return self._cached("marks", load, *_MARKS[1:])

    def _live(self, lines: Iterable[Any], also: Collection[str] = ()) -> list[Any]:
        """The lines that count, plus those of the pending jobs in `also`."""
        return list(self._counting(lines, also))

    def _counting(self, lines: Iterable[T], also: Collection[str] = ()) -> Iterator[T]:
        """`_live` as a stream: a fold of a whole ledger reads it one line at a time, so no list
        of every line's model is held beside the fold (at 100k propositions that list was as
        large as the fold, and what it freed stayed mapped between the fold's objects)."""
        committed, retired, deleted, _ = self._marks()
        for line in live_lines(lines, retired, deleted):  # type: ignore[type-var]
            if line.provenance.job in committed or line.provenance.job in also:  # type: ignore[attr-defined]
                yield line

    def node_lines(self) -> list[NodeLine]:
        """The node lines a read counts, in ledger order."""
        return self._live(list(read_ledger(self._path("nodes"), NodeLine)))

    def nodes(self) -> dict[str, Proposition]:
        """Merged propositions (cached per file state; a shallow copy)."""
        return dict(self._node_fold())

    def _node_fold(self) -> dict[str, Proposition]:
        return self._cached(
            "nodes", lambda: fold_nodes(self._counting(read_ledger(self._path("nodes"), NodeLine))), *_MARKS
        )

    def chain_lines(self) -> list[ChainLine]:
        return list(read_ledger(self._path("chains"), ChainLine))

    def _chain_fold(self) -> dict[str, Chain]:
        return self._cached(
            "chains",
            lambda: fold_chains(self._counting(read_ledger(self._path("chains"), ChainLine))),
            *_MARKS,
        )

    def chains(self) -> dict[str, Chain]:
        """Merged chains whose every member is a proposition (a new mapping; the result is kept
        per file state and carried forward by `commit_merge`, as the folds are)."""
        if self._past():
            hit = self._counted
            return (
                dict(hit[1]) if hit is not None else without_dangling(self._node_fold(), self._chain_fold())
            )
        key = self._signatures("nodes", "chains", *_MARKS)
        if self._counted is None or self._counted[0] != key:
            self._counted = (key, without_dangling(self._node_fold(), self._chain_fold()))
        return dict(self._counted[1])

    def chain_index(self) -> ChainIndex:
        """The `ChainIndex` of exactly `chains()` (what a merge's simplification walks; seed §6).

        Built on first use (one pass over every chain) and kept: `commit_merge`, the single
        writer, carries it forward (adds the chains a merge made count, discards the ones
        simplification dropped) so the next merge does not index the graph again. Any other change
        to the files it derives from (a deletion, a version swap, a restoration, another process)
        changes their signature and the next call builds it again. Read-only for callers: layer
        more chains with `ChainIndex.over`."""
        key = self._signatures("nodes", "chains", *_MARKS)
        if self._index is None or self._index[0] != key:
            self._index = (key, ChainIndex(self.chains().values()))
        return self._index[1]

    def coverage(self, source: str) -> list[CoverageLine]:
        """The source's coverage lines that count: their job's run line is written (the commit
        point: coverage is appended before it) and it is not retired. A pending job's do count,
        so the next run of its version does not read that content again."""
        committed, retired, _, pending = self._marks()
        lines = live_coverage(self._coverage.current().by.get(source, ()), retired)
        return [line for line in lines if line.job in committed or line.job in pending]

    def covered(self, source: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for line in self.coverage(source):
            out[line.message].add(line.fingerprint)
        return dict(out)

    def contributors(self, source: str) -> set[str]:
        """The source's jobs that wrote a run line and are not retired (counted or pending)."""
        committed, _, _, pending = self._marks()
        runs = self._runs.current().by.get(source, ())
        return {r.job for r in runs if r.job in committed or r.job in pending}

    def pending(self) -> frozenset[str]:
        """Jobs whose run line is pending and that no version line accepted or retired yet."""
        return self._marks()[3]

    def graph_with(self, jobs: Collection[str]) -> tuple[dict[str, Proposition], dict[str, Chain]]:
        """The graph as it stands plus what the pending jobs among `jobs` say: what a re-run that
        replaces its source sees (its own merged chunks), and no other reader does. Other jobs
        of `jobs` change nothing (counted ones are in the graph already)."""
        extra = set(jobs) & self.pending()
        if not extra:
            return self.nodes(), self.chains()
        nodes = fold_nodes(
            (
                n
                for n in self._live(self._node_spans.lines(extra, NodeLine), extra)
                if n.provenance.job in extra
            ),
            into=self._node_fold(),
        )
        chains = fold_chains(
            (
                c
                for c in self._live(self._chain_spans.lines(extra, ChainLine), extra)
                if c.provenance.job in extra
            ),
            into=self._chain_fold(),
        )
        return nodes, without_dangling(nodes, chains)

    def contribution(self, jobs: set[str]) -> tuple[dict[str, Proposition], dict[str, Chain]]:
        """What these jobs' lines say (counted ones, and pending ones as `graph_with` shows them),
        restricted to the graph as it stands with them."""
        if not jobs:
            return {}, {}
        nodes, chains = self.graph_with(jobs)
        lines = self._live(self._node_spans.lines(jobs, NodeLine), jobs)
        mine = fold_nodes(line for line in lines if line.provenance.job in jobs)
        own = {nid: nodes[nid] for nid in mine if nid in nodes}
        chain_lines = self._live(self._chain_spans.lines(jobs, ChainLine), jobs)
        said = {line.id for line in chain_lines if line.provenance.job in jobs}
        return own, {cid: chains[cid] for cid in said if cid in chains}

    def deleted(self) -> frozenset[str]:
        return self._marks()[2]

    def complete(self, line: VersionLine) -> None:
        """Append the swap: from this line on its accepted jobs count and its retired ones do not."""
        append_ledger(self._path("versions"), [line])

    def sources(self) -> dict[str, SourceLine]:
        """Each source's last line, in the order sources first appeared (a new mapping)."""
        return {sid: lines[-1] for sid, lines in self._sources.current().by.items()}

    def runs(self) -> list[RunLine]:
        """Every valid run line, in ledger order (a new list)."""
        return list(self._runs.current().lines)

    def commit_merge(self, plan: MergePlan, coverage: list[CoverageLine], run: RunLine) -> None:
        """Nodes, chains, coverage, then the run line (the commit point: the job's lines, its
        coverage included, count from here; a pending job's nodes and chains from the version
        line that accepts it), then the simplification rewrite (a crash before it leaves only
        redundant chains, which the next merge touching them drops). A crash before the run line
        leaves lines no read counts: the job's content is uncovered and runs again, once.

        May run in a worker thread (its appends fsync: issue 16 keeps them off the event loop):
        until it returns, reads on other threads answer the graph as it stood before it (the kept
        folds and chains, the view signatures of then), never a half-written commit. One commit
        at a time."""
        with self._commit_lock:
            self._frozen = (threading.get_ident(), self.signature(), self.rows_signature())
            try:
                self._commit(plan, coverage, run)
            finally:
                self._frozen = None

    def _commit(self, plan: MergePlan, coverage: list[CoverageLine], run: RunLine) -> None:
        nodes_before = self._current("nodes", *_MARKS)
        chains_before = self._current("chains", *_MARKS)
        key = self._signatures("nodes", "chains", *_MARKS)
        index = self._index[1] if self._index is not None and self._index[0] == key else None
        counted = self._counted[1] if self._counted is not None and self._counted[0] == key else None
        # the files change now; carried forward below (a copy: a read on another thread keeps
        # answering the kept one until the commit returns; no reader outside the merge section
        # uses the index, which is updated in place)
        counted = dict(counted) if counted is not None else None
        self._index = None
        append_ledger(self._path("nodes"), plan.node_lines)
        append_ledger(self._path("chains"), plan.chain_lines)
        append_ledger(self._path("coverage"), coverage)
        append_ledger(self._path("sessions"), [run])  # the commit point
        if plan.dropped_chains:
            self._take_out(plan.dropped_chains)
        # This store is the ledgers' only writer: carry its folds forward instead of re-reading.
        _, retired, deleted, _ = self._marks()  # re-read: the run line just landed
        if run.pending:  # a pending job's lines do not count yet: the folds stay as they were
            plan = MergePlan(dropped_chains=plan.dropped_chains)
        if nodes_before is not None:
            folded = fold_nodes(live_lines(plan.node_lines, retired, deleted), into=nodes_before)
            self._cache["nodes"] = (self._signatures("nodes", *_MARKS), folded)
        if chains_before is not None:
            folded_chains = fold_chains(live_lines(plan.chain_lines, retired, deleted), into=chains_before)
            for dropped in plan.dropped_chains:
                folded_chains.pop(dropped, None)
            self._cache["chains"] = (self._signatures("chains", *_MARKS), folded_chains)
            if nodes_before is not None:
                self._carry_counted(plan, folded_chains, index, counted)

    def _carry_counted(
        self,
        plan: MergePlan,
        after: dict[str, Chain],
        index: ChainIndex | None,
        counted: dict[str, Chain] | None,
    ) -> None:
        """Update the kept `chains()` and its index by what this commit changed (the folds were
        just carried forward): the dropped chains leave, the plan's chains that now count join
        (a re-asserted chain's new sources are taken from the fold).

        Exact because a merge only adds propositions and those are either counted already (a
        link) or freshly minted ids no earlier chain line names: no chain outside `chains()`
        starts to count by the nodes a merge adds, and none inside stops to."""
        if counted is None:
            return
        for cid in plan.dropped_chains:
            gone = counted.pop(cid, None)
            if gone is not None and index is not None:
                index.discard(gone)
        nodes = self._node_fold()
        for line in plan.chain_lines:
            chain = after.get(line.id)
            if chain is None or not (chain.conclusion in nodes and all(p in nodes for p in chain.premises)):
                continue
            if line.id not in counted and index is not None:
                index.add(chain)
            counted[line.id] = chain
        key = self._signatures("nodes", "chains", *_MARKS)
        self._counted = (key, counted)
        if index is not None:
            self._index = (key, index)

    def _take_out(self, chain_ids: set[str]) -> None:
        """Simplification's rewrite: archive the dropped chains' lines in simplified.jsonl, then
        rewrite chains.jsonl without them (a crash in between leaves them in both; harmless)."""
        kept, taken = split_ledger(self._path("chains"), chain_ids, ChainLine)  # bytes, not models
        append_ledger(self._path("simplified"), taken)
        write_bytes_atomic(self._path("chains"), kept)

    def drop_chains(self, chain_ids: set[str]) -> None:
        """Take provably redundant chains out (simplification after a restoration)."""
        if chain_ids:
            self._take_out(chain_ids)

    def archived_chains(self) -> dict[str, Chain]:
        """Chains simplification took out whose lines would count (committed, not retired, not
        deleted), folded, by id."""
        return fold_chains(self._live(list(read_ledger(self._path("simplified"), ChainLine))))

    def restore_chains(self, chain_ids: set[str]) -> None:
        """Append the archived lines of these chains back to chains.jsonl (their own provenance
        and time): they count again from here."""
        lines = [
            line
            for line in self._live(list(read_ledger(self._path("simplified"), ChainLine)))
            if line.id in chain_ids
        ]
        append_ledger(self._path("chains"), lines)

    def _signature(self, name: str) -> tuple[int, int, int]:
        try:
            stat = self._path(name).stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _signatures(self, *names: str) -> tuple[tuple[int, int, int], ...]:
        return tuple(self._signature(name) for name in names)

    def _current(self, name: str, *also: str) -> Any | None:
        """The cached fold when it matches the files as they stand, else None."""
        hit = self._cache.get(name)
        return hit[1] if hit is not None and hit[0] == self._signatures(name, *also) else None

    def record_source(self, line: SourceLine) -> None:
        """Append a source line: written at once (readers see it), fsynced by `LedgerSyncer`."""
        self._syncer.append(self._path("sources"), [line])

    def record_usage(self, line: dict[str, Any]) -> None:
        """Append a usage line: written at once, fsynced by `LedgerSyncer`."""
        self._syncer.append(self._path("usage"), [_UsageLine.model_validate(line)])

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the source and usage appends made so far are fsynced (shutdown); False when
        `timeout` (s) ran out."""
        return self._syncer.flush(timeout)

    # -- deletion (full death) --------------------------------------------------------------------
    def delete(self, node_ids: set[str], chain_ids: set[str], at: str = "") -> None:
        """Record the deletion (`deleted.jsonl`: from then on no line of these ids counts, even one
        a merge writes later), then rewrite the ledgers without them and prune their positions.
        Chains first: a crash in between leaves dangling chains, which reads drop."""
        if node_ids or chain_ids:
            append_ledger(self._path("deleted"), [DeletionLine(ids=sorted(node_ids | chain_ids), at=at)])
        for name, ids, model in (("chains", chain_ids, ChainLine), ("nodes", node_ids, NodeLine)):
            if ids:  # on bytes, as simplification's rewrite (`split_ledger`)
                kept, _ = split_ledger(self._path(name), ids, model)
                write_bytes_atomic(self._path(name), kept)
        gone = node_ids | chain_ids
        positions = self.positions()
        if any(k in gone for k in positions):
            self.save_positions({k: v for k, v in positions.items() if k not in gone})
