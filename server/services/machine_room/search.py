"""Search the learner's lessons, propositions and practice sets (issue 31 item 5; decision 0044).

The index is derived from the records and brought up to date before each query by a cheap look
at what changed, read through the stores' read ports (never another system's services):

- lessons: the session list's rows (`ChatStore.summaries`, an index the store keeps); a lesson
  whose `updatedAt`, message count or title differs from what was indexed is read and its rows
  replaced; a lesson gone (deleted, moved to the trash) loses its rows;
- propositions: the graph ledgers' file signature (`ViewCache.rows_signature`); when it moved,
  the folded propositions are compared with what was indexed, proposition by proposition (a
  merge, a rename, a deletion rewrite only their rows);
- practice sets: the practice folder's listing (`data/practice/ps_*.json`, name, mtime, size).

So a new message, a merge or a deletion is found by the next query, with no hook in any writer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from server.core.machine_room.search import (
    Entry,
    changed,
    fts_query,
    href,
    lesson_entries,
    practice_entries,
    proposition_entry,
    proposition_stamp,
    snippet_parts,
)
from server.core.ports import ChatStore, GraphRows, PracticeStore, SearchIndex, StoreCorrupt, ViewCache

log = logging.getLogger(__name__)

BUSY_WAIT_S = 1.0
"""How long a query waits for a catch-up another caller runs before answering without it."""
_BATCH_ROWS = 5_000
"""Rows written per transaction while filling (a query waits at most one batch's write; FTS5
merges fewer, larger segments)."""


class SearchGraph(GraphRows, ViewCache, Protocol):
    """What search reads of the graph: its folded propositions and its files' signature."""


@dataclass
class SearchService:
    """Ranked full-text search over lessons (titles, messages), propositions (name, aliases,
    statement) and practice sets (title, note, problems).

    Args:
        index: the derived index.
        chats: the session records (read only).
        graph: the graph (read only).
        practice: the problem sets (read only).
    """

    index: SearchIndex
    chats: ChatStore
    graph: SearchGraph
    practice: PracticeStore
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _listing: object = None
    """The session list last indexed (the store answers the very same list while nothing changed)."""
    _known: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per owner kind, the stamps indexed (read from the index once, then kept in step)."""
    _graph: str | None = None
    """The graph signature last indexed."""
    filling: bool = False
    """A catch-up from an empty index (absent, removed, made anew) is running."""
    last_refresh_ms: float = 0.0
    """How long the last query's catch-up took (milliseconds)."""

    def search(self, text: str, limit: int = 20) -> dict[str, Any]:
        """`{query, complete, results: [{kind, id, target, label, href, snippet: [{text, match}]}]}`, best
        first (bm25, a title or name match weighing 8 body matches); `kind` is lesson, message,
        proposition, practice or problem; `href` is the page's address of the result (a lesson at
        its message `?m=`, home focused on a proposition `?node=`, a set at its problem
        `?problem=`). The text is words, never query syntax; no word, no results. Raises
        sqlite3.Error only if the index cannot be written or read even after being made anew.
        `complete` is False when the index is being filled from empty (the first start without
        one, or after it was removed) for longer than `BUSY_WAIT_S`: the answer is what is
        indexed so far. Otherwise a query waits for a catch-up another caller runs."""
        complete = self.refresh(wait_s=BUSY_WAIT_S if self.filling else -1)
        match = fts_query(text)
        if match is None:
            return {"query": text, "complete": complete, "results": []}
        hits = self.index.query(match, limit)
        return {
            "query": text,
            "complete": complete,
            "results": [
                {
                    "kind": kind,
                    "id": owner,
                    "target": target,
                    "label": label,
                    "href": href(kind, owner, target),  # type: ignore[arg-type]
                    "snippet": snippet_parts(snippet),
                }
                for kind, owner, target, label, snippet, _rank in hits
            ],
        }

    def refresh(self, wait_s: float = -1) -> bool:
        """Bring the index up to date with the records (see the module's docstring); one caller at
        a time. Waits for another caller at most `wait_s` seconds (-1: as long as it takes);
        False when it did not get its turn in time (nothing done)."""
        if not self._lock.acquire(timeout=wait_s):
            return False
        try:
            start = time.perf_counter()
            if self.index.rebuilt or not self.index.present():  # made anew: nothing known holds
                self._listing, self._graph = None, None
                self._known.clear()
                self.filling = True
            self._lessons()
            self._propositions()
            self._practice()
            self.index.rebuilt = False  # what the rebuild asked for is done
            self.last_refresh_ms = (time.perf_counter() - start) * 1000
        finally:
            self.filling = False
            self._lock.release()
        return True

    def warm(self) -> threading.Thread:
        """Catch the index up in a background thread (at start: a data dir with no index is
        indexed before the first search, which meanwhile answers with what is indexed so far)."""

        def run() -> None:
            try:
                self.refresh()
            except Exception:  # the next query tries again
                log.exception("search: filling the index failed")

        thread = threading.Thread(target=run, name="search-index", daemon=True)
        thread.start()
        return thread

    def _stamps(self, group: Any) -> dict[str, str]:
        if group not in self._known:
            self._known[group] = self.index.stamps(group)
        return self._known[group]

    def _lessons(self) -> None:
        listing = self.chats.summaries()
        if listing is self._listing:
            return
        current = {s.id: f"{s.updated_at}|{s.message_count}|{s.title}" for s in listing}
        write, drop = changed(self._stamps("lesson"), current)

        def entries(chat_id: str) -> list[Entry] | None:
            record = self.chats.get(chat_id)
            return None if record is None else list(lesson_entries(record.id, record.title, record.messages))

        self._write("lesson", write, drop, current, entries)
        self._listing = listing

    def _propositions(self) -> None:
        signature = repr(self.graph.rows_signature())
        if self._graph is None:
            self._graph = self.index.meta("graph")
        if self._graph == signature:
            return
        nodes = self.graph.nodes()
        current = {node_id: proposition_stamp(node) for node_id, node in nodes.items()}
        write, drop = changed(self._stamps("proposition"), current)
        self._write("proposition", write, drop, current, lambda i: [proposition_entry(nodes[i])])
        self.index.replace("proposition", {}, meta={"graph": signature})
        self._graph = signature

    def _practice(self) -> None:
        current = self.index.file_stamps("practice", "ps_")
        write, drop = changed(self._stamps("practice"), current)

        def entries(set_id: str) -> list[Entry] | None:
            problem_set = self.practice.get(set_id)
            return None if problem_set is None else list(practice_entries(problem_set))

        self._write("practice", write, drop, current, entries)

    def _write(
        self,
        group: Any,
        write: list[str],
        drop: list[str],
        current: dict[str, str],
        entries: Callable[[str], list[Entry] | None],
    ) -> None:
        """Replace `write`'s rows and remove `drop`'s, about `_BATCH_ROWS` rows per transaction; a
        record that cannot be read now is left for a later query (its stamp is not written)."""
        known = self._stamps(group)
        if drop:
            self.index.replace(group, {}, drop=drop)
            for owner in drop:
                known.pop(owner, None)
        batch: dict[str, tuple[str, list[Entry]]] = {}
        gone: list[str] = []
        rows_in_batch = 0

        def commit() -> None:
            self.index.replace(group, batch, drop=gone)
            for owner in gone:
                known.pop(owner, None)
            known.update({owner: stamp_rows[0] for owner, stamp_rows in batch.items()})
            batch.clear()
            gone.clear()

        for owner in write:
            try:
                rows = entries(owner)
            except (StoreCorrupt, OSError, ValueError):
                log.warning("search: %s %s unreadable; left for a later query", group, owner)
                continue
            if rows is None:
                gone.append(owner)
            else:
                batch[owner] = (current[owner], rows)
                rows_in_batch += len(rows)
            if rows_in_batch >= _BATCH_ROWS:
                commit()
                rows_in_batch = 0
        if batch or gone:
            commit()
