"""Fakes of the graph ports (cosmicpython style: in memory, recording state).

`FakeGraph` implements every graph role of `server.core.ports.library` (`GraphStore` as a whole):
the ledgers are lists of lines in memory, and a read counts them with the same pure folds the
file adapter uses (`server.core.library.graph`), so it answers what `FileGraphStore` answers
(tests/store/library/test_graph_contract.py runs the same assertions against both).
`FakeGraphReader` is the teacher's read of the graph (`GraphReader`), holding its answers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import Any

from server.core.contracts.graph import (
    Chain,
    ChainLine,
    CoverageLine,
    NodeLine,
    Proposition,
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

_SNAPSHOTS = ("view", "view-compact")


class FakeGraph:
    """In-memory GraphStore. State (read it in tests): `node_lines`, `chain_ledger`, `archived`
    (simplification's take-outs), `coverage_lines`, `run_lines`, `versions`, `deleted_ids`,
    `source_lines` (each source's latest), `usage`, `saved_positions`, `render`, `snapshots`;
    `commits` counts `commit_merge` calls, `writes` every write of any kind."""

    def __init__(self) -> None:
        self.node_lines: list[NodeLine] = []
        self.chain_ledger: list[ChainLine] = []
        self.archived: list[ChainLine] = []
        self.coverage_lines: list[CoverageLine] = []
        self.run_lines: list[RunLine] = []
        self.versions: list[VersionLine] = []
        self.deleted_ids: set[str] = set()
        self.source_lines: dict[str, SourceLine] = {}
        self.usage: list[dict[str, object]] = []
        self.saved_positions: dict[str, tuple[float, float]] = {}
        self.render: dict[str, Any] = {}
        self.snapshots: dict[str, tuple[bytes, bytes]] = {}
        self.commits = 0
        self.writes = 0
        self._rows_version = 0
        self._sources_version = 0

    def _wrote(self, *, rows: bool = True) -> None:
        self.writes += 1
        if rows:
            self._rows_version += 1
        else:
            self._sources_version += 1

    # -- what counts (as FileGraphStore._marks) ----------------------------------------------------
    def _marks(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """(committed jobs, retired jobs, pending jobs)."""
        retired: set[str] = set()
        accepted: set[str] = set()
        for version in self.versions:
            retired.update(version.retired)
            accepted.update(version.accepted)
        committed = frozenset(r.job for r in self.run_lines if not r.pending or r.job in accepted) - retired
        pending = frozenset(r.job for r in self.run_lines if r.pending) - accepted - retired
        return committed, frozenset(retired), pending

    def _live(self, lines: Iterable[Any], also: Collection[str] = ()) -> list[Any]:
        committed, retired, _ = self._marks()
        return [
            line
            for line in live_lines(lines, retired, self.deleted_ids)
            if line.provenance.job in committed or line.provenance.job in also
        ]

    # -- GraphRows ---------------------------------------------------------------------------------
    def nodes(self) -> dict[str, Proposition]:
        return fold_nodes(self._live(self.node_lines))

    def chains(self) -> dict[str, Chain]:
        return without_dangling(self.nodes(), fold_chains(self._live(self.chain_ledger)))

    # -- SourceLedger, SourceRecorder ----------------------------------------------------------------
    def sources(self) -> dict[str, SourceLine]:
        return dict(self.source_lines)

    def coverage(self, source: str) -> list[CoverageLine]:
        committed, retired, pending = self._marks()
        mine = [line for line in self.coverage_lines if line.source == source]
        return [line for line in live_coverage(mine, retired) if line.job in committed or line.job in pending]

    def covered(self, source: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for line in self.coverage(source):
            out[line.message].add(line.fingerprint)
        return dict(out)

    def contributors(self, source: str) -> set[str]:
        committed, _, pending = self._marks()
        return {
            r.job for r in self.run_lines if r.source == source and (r.job in committed or r.job in pending)
        }

    def pending(self) -> frozenset[str]:
        return self._marks()[2]

    def record_source(self, line: SourceLine) -> None:
        self.source_lines[line.id] = line  # an existing source keeps its first place
        self._wrote(rows=False)

    # -- MergeLedger ---------------------------------------------------------------------------------
    def chain_index(self) -> ChainIndex:
        return ChainIndex(self.chains().values())

    def graph_with(self, jobs: Collection[str]) -> tuple[dict[str, Proposition], dict[str, Chain]]:
        extra = set(jobs) & self.pending()
        nodes = fold_nodes(
            (n for n in self._live(self.node_lines, extra) if n.provenance.job in extra), into=self.nodes()
        )
        chains = fold_chains(
            (c for c in self._live(self.chain_ledger, extra) if c.provenance.job in extra),
            into=fold_chains(self._live(self.chain_ledger)),
        )
        return nodes, without_dangling(nodes, chains)

    def contribution(self, jobs: set[str]) -> tuple[dict[str, Proposition], dict[str, Chain]]:
        if not jobs:
            return {}, {}
        nodes, chains = self.graph_with(jobs)
        mine = fold_nodes(n for n in self._live(self.node_lines, jobs) if n.provenance.job in jobs)
        said = {c.id for c in self._live(self.chain_ledger, jobs) if c.provenance.job in jobs}
        return {nid: nodes[nid] for nid in mine if nid in nodes}, {
            cid: chains[cid] for cid in said if cid in chains
        }

    def deleted(self) -> frozenset[str]:
        return frozenset(self.deleted_ids)

    def commit_merge(self, plan: MergePlan, coverage: list[CoverageLine], run: RunLine) -> None:
        self.node_lines.extend(plan.node_lines)
        self.chain_ledger.extend(plan.chain_lines)
        self.coverage_lines.extend(coverage)
        self.run_lines.append(run)
        self._take_out(plan.dropped_chains)
        self.commits += 1
        self._wrote()

    def complete(self, line: VersionLine) -> None:
        self.versions.append(line)
        self._wrote()

    def archived_chains(self) -> dict[str, Chain]:
        return fold_chains(self._live(self.archived))

    def restore_chains(self, chain_ids: set[str]) -> None:
        self.chain_ledger.extend(line for line in self._live(self.archived) if line.id in chain_ids)
        self._wrote()

    def drop_chains(self, chain_ids: set[str]) -> None:
        self._take_out(chain_ids)
        self._wrote()

    def _take_out(self, chain_ids: set[str]) -> None:
        self.archived.extend(line for line in self.chain_ledger if line.id in chain_ids)
        self.chain_ledger = [line for line in self.chain_ledger if line.id not in chain_ids]

    # -- UsageLedger -------------------------------------------------------------------------------
    def record_usage(self, line: dict[str, object]) -> None:
        self.usage.append(dict(line))
        self.writes += 1

    def flush(self, timeout: float | None = None) -> bool:
        """Nothing waits to be made durable in memory."""
        return True

    # -- ViewCache ---------------------------------------------------------------------------------
    def signature(self) -> tuple[tuple[int, int, int], ...]:
        return ((self._rows_version, 0, 0), (self._sources_version, 0, 0))

    def rows_signature(self) -> tuple[tuple[int, int, int], ...]:
        return ((self._rows_version, 0, 0),)

    def view_snapshot(self, key: bytes, name: str = "view") -> bytes | None:
        if name not in _SNAPSHOTS:
            raise ValueError(f"no view snapshot is called {name!r}")
        saved = self.snapshots.get(name)
        return saved[1] or None if saved is not None and saved[0] == key else None

    def save_view_snapshot(self, key: bytes, body: bytes, name: str = "view") -> None:
        if name not in _SNAPSHOTS:
            raise ValueError(f"no view snapshot is called {name!r}")
        if b"\n" in key:
            raise ValueError("a view snapshot key is one line")
        self.snapshots[name] = (key, body)
        self.writes += 1

    # -- LayoutStore -------------------------------------------------------------------------------
    def positions(self) -> dict[str, tuple[float, float]]:
        return dict(self.saved_positions)

    def save_positions(self, positions: dict[str, tuple[float, float]]) -> None:
        self.saved_positions = {k: (float(x), float(y)) for k, (x, y) in positions.items()}
        self._wrote()

    def render_settings(self) -> dict[str, Any]:
        return dict(self.render)

    def save_render_settings(self, settings: dict[str, Any]) -> None:
        self.render = dict(settings)
        self.writes += 1

    # -- GraphDeleter ------------------------------------------------------------------------------
    def delete(self, node_ids: set[str], chain_ids: set[str], at: str = "") -> None:
        gone = node_ids | chain_ids
        self.deleted_ids |= gone
        self.chain_ledger = [line for line in self.chain_ledger if line.id not in chain_ids]
        self.node_lines = [line for line in self.node_lines if line.id not in node_ids]
        self.saved_positions = {k: v for k, v in self.saved_positions.items() if k not in gone}
        self._wrote()


class FakeGraphReader:
    """In-memory GraphReader: `add` a session and the propositions it gave; `reads` records every
    call (`("sessions",)` or `("propositions", session)`)."""

    def __init__(self) -> None:
        self.titles: dict[str, tuple[str | None, str | None]] = {}
        self.given: dict[str, list[dict[str, str]]] = {}
        self.reads: list[tuple[str, ...]] = []

    def add(
        self, session: str, title: str | None, kind: str | None, propositions: Iterable[tuple[str, str, str]]
    ) -> None:
        """A birth session (`title`, `kind`: None when no source line names it) and the
        propositions it gave the graph, as (id, name, statement)."""
        self.titles[session] = (title, kind)
        self.given.setdefault(session, []).extend(
            {"id": pid, "name": name, "statement": statement} for pid, name, statement in propositions
        )

    def sessions(self) -> list[dict[str, Any]]:
        self.reads.append(("sessions",))
        counted = [(sid, len(props)) for sid, props in self.given.items() if props]
        return [
            {"id": sid, "title": self.titles[sid][0], "kind": self.titles[sid][1], "propositions": n}
            for sid, n in sorted(counted, key=lambda kv: -kv[1])
        ]

    def propositions(self, session: str) -> list[dict[str, str]]:
        self.reads.append(("propositions", session))
        return [dict(p) for p in self.given.get(session, [])]
