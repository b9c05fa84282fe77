"""The graph ledgers in `data/graph/` (implements core.ports.GraphStore).

Files: nodes.jsonl, chains.jsonl, coverage.jsonl, sessions.jsonl (per-run checkpoints),
sources.jsonl, usage.jsonl. Appends are whole lines; reads skip a torn or invalid line.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from server.core.contracts.graph import (
    Chain,
    ChainLine,
    CoverageLine,
    NodeLine,
    Proposition,
    RunLine,
    SourceLine,
)
from server.core.graph import MergePlan, fold_chains, fold_nodes
from server.store.atomic import read_json, write_json_atomic
from server.store.ledger import append_ledger, read_ledger, rewrite_ledger

T = TypeVar("T")


class _UsageLine(BaseModel):
    model_config = ConfigDict(extra="allow")


class FileGraphStore:
    """Ledgers under one directory.

    Args:
        root: the graph directory (`data/graph`), created on first write.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, tuple[tuple[int, int, int], Any]] = {}

    def _path(self, name: str) -> Path:
        return self.root / f"{name}.jsonl"

    def _cached(self, name: str, load: Callable[[], T]) -> T:
        """A fold of a ledger, reused while the file is unchanged (same inode, size, mtime).
        Callers get a shallow copy of the mapping; the folded objects are read-only by contract."""
        signature = self._signature(name)
        hit = self._cache.get(name)
        if hit is None or hit[0] != signature:
            hit = (signature, load())
            self._cache[name] = hit
        return hit[1]

    def signature(self) -> tuple[tuple[int, int, int], ...]:
        """The state of every file a view is derived from (inode, size, mtime): equal signatures
        mean an equal graph."""
        out = []
        for path in (
            self._path("nodes"),
            self._path("chains"),
            self._path("sources"),
            self.root / "positions.json",
        ):
            try:
                stat = path.stat()
                out.append((stat.st_ino, stat.st_size, stat.st_mtime_ns))
            except FileNotFoundError:
                out.append((0, 0, 0))
        return tuple(out)

    def nodes(self) -> dict[str, Proposition]:
        """Merged propositions (cached per file state; a shallow copy)."""
        return dict(self._cached("nodes", lambda: fold_nodes(read_ledger(self._path("nodes"), NodeLine))))

    def chain_lines(self) -> list[ChainLine]:
        return list(read_ledger(self._path("chains"), ChainLine))

    def chains(self) -> dict[str, Chain]:
        """Merged chains (cached per file state; a shallow copy)."""
        return dict(self._cached("chains", lambda: fold_chains(self.chain_lines())))

    def covered(self, source: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for line in read_ledger(self._path("coverage"), CoverageLine):
            if line.source == source:
                out[line.message].add(line.fingerprint)
        return dict(out)

    def sources(self) -> dict[str, SourceLine]:
        return {line.id: line for line in read_ledger(self._path("sources"), SourceLine)}

    def runs(self) -> list[RunLine]:
        return list(read_ledger(self._path("sessions"), RunLine))

    def commit_merge(self, plan: MergePlan, coverage: list[CoverageLine], run: RunLine) -> None:
        nodes_before = self._current("nodes")
        chains_before = self._current("chains")
        append_ledger(self._path("nodes"), plan.node_lines)
        append_ledger(self._path("chains"), plan.chain_lines)
        if plan.dropped_chains:
            rewrite_ledger(
                self._path("chains"),
                [line for line in self.chain_lines() if line.id not in plan.dropped_chains],
            )
        append_ledger(self._path("sessions"), [run])
        append_ledger(self._path("coverage"), coverage)  # last: a crash before it checkpoints nothing
        # This store is the ledgers' only writer: carry its folds forward instead of re-reading.
        if nodes_before is not None:
            folded = fold_nodes(plan.node_lines, into=nodes_before)
            self._cache["nodes"] = (self._signature("nodes"), folded)
        if chains_before is not None:
            folded_chains = fold_chains(plan.chain_lines, into=chains_before)
            for dropped in plan.dropped_chains:
                folded_chains.pop(dropped, None)
            self._cache["chains"] = (self._signature("chains"), folded_chains)

    def _signature(self, name: str) -> tuple[int, int, int]:
        try:
            stat = self._path(name).stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _current(self, name: str) -> Any | None:
        """The cached fold when it matches the file as it stands, else None."""
        hit = self._cache.get(name)
        return hit[1] if hit is not None and hit[0] == self._signature(name) else None

    def record_source(self, line: SourceLine) -> None:
        append_ledger(self._path("sources"), [line])

    def record_usage(self, line: dict[str, Any]) -> None:
        append_ledger(self._path("usage"), [_UsageLine.model_validate(line)])

    # -- layout and render settings (the sanctioned graph-adjacent writes) ------------------------
    def positions(self) -> dict[str, tuple[float, float]]:
        """Resting positions by node id (`positions.json`); empty when absent or unreadable."""
        try:
            data = read_json(self.root / "positions.json")
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            k: (float(v[0]), float(v[1]))
            for k, v in data.items()
            if isinstance(v, list) and len(v) == 2 and all(isinstance(c, (int, float)) for c in v)
        }

    def save_positions(self, positions: dict[str, tuple[float, float]]) -> None:
        write_json_atomic(self.root / "positions.json", {k: [x, y] for k, (x, y) in positions.items()})

    def render_settings(self) -> dict[str, Any]:
        try:
            data = read_json(self.root / "render.json")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_render_settings(self, settings: dict[str, Any]) -> None:
        write_json_atomic(self.root / "render.json", settings)

    # -- deletion (full death) --------------------------------------------------------------------
    def delete(self, node_ids: set[str], chain_ids: set[str]) -> None:
        """Rewrite the ledgers without these propositions and chains, and prune their positions.
        Chains first: a crash in between leaves dangling chains, which the view drops."""
        if chain_ids:
            rewrite_ledger(self._path("chains"), [c for c in self.chain_lines() if c.id not in chain_ids])
        if node_ids:
            rewrite_ledger(
                self._path("nodes"),
                [n for n in read_ledger(self._path("nodes"), NodeLine) if n.id not in node_ids],
            )
        gone = node_ids | chain_ids
        positions = self.positions()
        if any(k in gone for k in positions):
            self.save_positions({k: v for k, v in positions.items() if k not in gone})
