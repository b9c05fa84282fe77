"""The compact view's cache (issue 17 item 5): what a derived view depends on (`view_key`), the
compact view as last served with the versions it was patched through (`Compact`), and the answer
cut from it for a reader's `since` (`compact_answer`: the delta, or the whole body when the walk
back through the versions does not reach `since`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from server.core.library.view_compact import CompactRows, compact_delta

HISTORY = 64
"""How many compact view versions the service remembers the changes of (older `since`: full)."""
_VERSION = re.compile(rb'\{"format":"[^"]*","version":"([0-9a-f]+-[0-9]+)"')


def view_key(
    signature: object, labels: dict[str, tuple[str, str | None]], paths: dict[str, str | None] | None = None
) -> bytes:
    """What a derived view depends on, as one line of bytes: the files its rows derive from, the
    cluster labels and the notes paths (folder clusters)."""
    return orjson.dumps([signature, sorted(labels.items()), sorted((paths or {}).items())])


@dataclass(frozen=True)
class Compact:
    """The compact view as last served (one object, swapped whole: a read on the loop and the
    settle's worker thread never see half of it).

    Attributes:
        key: `view_key` of what `body` was derived from.
        body: the compact view's JSON.
        version: the version `body` carries.
        rows: its rows (None when `body` came from the snapshot: no delta can be cut from it).
        history: version -> (the version it was patched from or None, the ids changed since);
            at most `HISTORY` entries, oldest first.
    """

    key: bytes
    body: bytes
    version: str
    rows: CompactRows | None
    history: dict[str, tuple[str | None, frozenset[str]]]


def from_snapshot(key: bytes, body: bytes | None) -> Compact | None:
    """The state a compact snapshot's `body` (saved for `key`) serves, None when there is none or
    it carries no version."""
    found = _VERSION.match(body[:200]) if body else None
    if body is None or found is None:
        return None
    version = found.group(1).decode()
    return Compact(key, body, version, None, {version: (None, frozenset())})


def patched(was: Compact | None, key: bytes, body: bytes, version: str, rows: CompactRows) -> Compact:
    """The state after a derivation under `version` that patched `was`'s rows (or derived them
    all when `was` has none): its history carries `was`'s, at most `HISTORY` versions."""
    previous = was is not None and was.rows is not None
    history = dict(was.history) if was is not None and previous else {}
    base = was.version if was is not None and previous else None
    history[version] = (base, rows.changed if rows.changed is not None else frozenset())
    while len(history) > HISTORY:
        del history[next(iter(history))]
    return Compact(key, body, version, rows, history)


def compact_answer(state: Compact, since: str | None) -> bytes:
    """The whole compact body, or the delta since `since` when this state can cut one."""
    if since is None or state.rows is None:
        return state.body
    changed = _changes(state.history, state.version, since)
    if changed is None:
        return state.body
    return compact_delta(state.rows, changed, state.version, since)


def _changes(
    history: dict[str, tuple[str | None, frozenset[str]]], version: str, since: str
) -> set[str] | None:
    """The ids changed between `since` and `version`, walking back the versions each was patched
    from; None when the walk does not reach `since` (unknown, forgotten, or another process's)."""
    changed: set[str] = set()
    at: str | None = version
    while at != since:
        if at is None or at not in history:
            return None
        base, ids = history[at]
        changed |= ids
        at = base
    return changed
