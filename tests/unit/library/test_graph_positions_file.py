"""`FileGraphStore.positions()` over a hand-edited or foreign `positions.json` (issue 17, bad
input): one bad entry is dropped alone, never every position."""

from __future__ import annotations

from pathlib import Path

from server.store.library.graph import FileGraphStore


def _store(tmp_path: Path, text: str) -> FileGraphStore:
    root = tmp_path / "graph"
    root.mkdir(parents=True)
    (root / "positions.json").write_text(text, encoding="utf-8")
    return FileGraphStore(root)


def test_nan_infinity_and_far_coordinates_drop_only_their_entry(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        '{"a": [1.5, -2], "b": [NaN, 3], "c": [Infinity, 0], "d": [4, -Infinity], '
        '"e": [2e6, 0], "f": [1e6, -1e6], "g": [true, 1], "h": "x", "i": [1, 2, 3], '
        '"j": [1' + "0" * 400 + ", 0]}",
    )
    assert store.positions() == {"a": (1.5, -2.0), "f": (1e6, -1e6)}


def test_valid_json_is_read_as_before_and_garbage_is_empty(tmp_path: Path) -> None:
    assert _store(tmp_path, '{"a": [0, 0], "b": [null, 1]}').positions() == {"a": (0.0, 0.0)}
    assert _store(tmp_path / "x", "{not json").positions() == {}
    assert _store(tmp_path / "y", "[[1, 2]]").positions() == {}
