"""The graph-adjacent files of `data/graph/` that are not ledgers: resting positions
(`positions.json`), render settings (`render.json`) and the derived view snapshots
(`view.snapshot`, `view-compact.snapshot`). A mixin of `FileGraphStore` (the `LayoutStore` role and
the snapshot half of `ViewCache`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import orjson

from server.store.atomic import read_json, write_bytes_atomic, write_json_atomic


class GraphFiles:
    """Positions, render settings and view snapshots under `root`. The class using it sets `root`
    and `_positions` (None) in its constructor."""

    root: Path
    _positions: tuple[tuple[int, int, int], dict[str, tuple[float, float]]] | None

    # -- layout and render settings (the sanctioned graph-adjacent writes) ------------------------
    def positions(self) -> dict[str, tuple[float, float]]:
        """Resting positions by node id (`positions.json`); empty when absent or unreadable. A
        fresh dict each call (the caller may change it); the file is parsed again only when its
        signature (inode, size, mtime) changed. An entry that is not two finite numbers within
        ±1e6 (the drag limit) is dropped alone, and the layout places that node again: a file
        with `NaN` or `Infinity` in it (not JSON, but what a hand edit or another tool writes) is
        read leniently instead of losing every position (issue 17, bad input)."""
        path = self.root / "positions.json"
        try:
            stat = path.stat()
            signature = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            kept = self._positions
            if kept is not None and kept[0] == signature:
                return dict(kept[1])
            data = _read_lenient_json(path)
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        out = {
            sys.intern(k): (float(v[0]), float(v[1]))  # the folds' ids: one string each (issue 28)
            for k, v in data.items()
            if isinstance(v, list) and len(v) == 2 and all(_placeable(c) for c in v)
        }
        self._positions = (signature, out)
        return dict(out)

    def save_positions(self, positions: dict[str, tuple[float, float]]) -> None:
        write_json_atomic(self.root / "positions.json", {k: [x, y] for k, (x, y) in positions.items()})

    # -- the derived view snapshot (what a cold start serves without folding the ledgers) ---------
    def view_snapshot(self, key: bytes, name: str = "view") -> bytes | None:
        """The view bytes saved under `key` (`<name>.snapshot`: the key line, then the body), or
        None when there is none, it is unreadable, or it was saved under another key. `name`:
        "view" (the full JSON) or "view-compact" (the compact form, issue 17 item 5)."""
        try:
            with (self.root / f"{_snapshot_name(name)}.snapshot").open("rb") as f:
                if f.readline() != key + b"\n":  # a stale snapshot's body is never read
                    return None
                body = f.read()
        except OSError:
            return None
        return body or None

    def save_view_snapshot(self, key: bytes, body: bytes, name: str = "view") -> None:
        """Replace `<name>.snapshot` atomically (not fsynced: it is derived, and a lost or stale
        one is only derived again). `key` is one line (no newline). Raises OSError, ValueError."""
        if b"\n" in key:
            raise ValueError("a view snapshot key is one line")
        path = self.root / f"{_snapshot_name(name)}.snapshot"
        write_bytes_atomic(path, key + b"\n" + body, durable=False)

    def render_settings(self) -> dict[str, Any]:
        try:
            data = read_json(self.root / "render.json")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_render_settings(self, settings: dict[str, Any]) -> None:
        write_json_atomic(self.root / "render.json", settings)


def _snapshot_name(name: str) -> str:
    """A view snapshot's file stem: one of the two the service writes (never a path)."""
    if name not in ("view", "view-compact"):
        raise ValueError(f"no view snapshot is called {name!r}")
    return name


def _read_lenient_json(path: Path) -> Any:
    """Parse `path` as JSON, or, when it is not JSON, with the stdlib parser, which also accepts
    NaN and ±Infinity (what a hand edit or another tool writes). Raises OSError, or ValueError
    when neither parses it."""
    raw = path.read_bytes()
    try:
        return orjson.loads(raw)
    except ValueError:
        return json.loads(raw)


def _placeable(value: object) -> bool:
    """A coordinate `positions()` keeps: a finite int or float (not a bool) within ±1e6."""
    # NaN and ±inf compare False; an int beyond the double range compares without overflow
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= POSITION_LIMIT


POSITION_LIMIT = 1e6
"""The largest coordinate kept (the drag route clamps to it; the canvas reads beyond it as none)."""
