"""The search index (issue 31 item 5; decision 0044): `data/search/index.sqlite`, SQLite FTS5
through the standard library's sqlite3. Derived: removed, damaged or of another schema version,
it is rebuilt from the records (the caller sees an empty index and refills it).

Tables: `entries` (one row per `Entry`, indexed by owner), `fts` (FTS5, external content over
`entries`' title and body, kept by triggers; bm25 weights title 8, body 1), `stamps` (per owner,
what its rows were made from) and `meta` (the schema version, the graph's signature).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from server.core.machine_room.search import (
    GROUP_OF,
    SCHEMA_VERSION,
    Entry,
    Group,
    Kind,
    kinds_in,
    make_snippet,
    query_terms,
)

PREFIXES = (2, 3, 4, 5, 6)
"""Prefix lengths the index keeps lists for (a prefix this short is one list)."""
RANK_ALL = 4_000
"""A query whose rarest word is in at most this many rows is ranked over all its matches."""
WINDOW = 2_000
"""Otherwise the newest this many matches (and title matches) are ranked."""

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries(
    id INTEGER PRIMARY KEY,
    grp TEXT NOT NULL, kind TEXT NOT NULL, owner TEXT NOT NULL, target TEXT NOT NULL,
    label TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL
);
CREATE INDEX entries_owner ON entries(grp, owner);
CREATE TABLE stamps(grp TEXT NOT NULL, owner TEXT NOT NULL, stamp TEXT NOT NULL, PRIMARY KEY(grp, owner))
    WITHOUT ROWID;
CREATE VIRTUAL TABLE fts USING fts5(
    title, body, content='entries', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2', prefix='{prefixes}'
);
CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO fts(rowid, title, body) VALUES (new.id, new.title, new.body);
END;
CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO fts(fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
END;
"""


IndexHit = tuple[str, str, str, str, str, float]
"""`(kind, owner, target, label, snippet, rank)`; lower rank is better (bm25)."""


class SqliteSearchIndex:
    """The FTS5 index in one SQLite file, used from any thread (one connection behind a lock:
    writes are short, queries are milliseconds).

    Args:
        path: the index file (`data/search/index.sqlite`); its folder is made on first use.
        data_root: the data dir, for `file_stamps` (a cheap look at a record folder's files).
    """

    def __init__(self, path: Path, data_root: Path) -> None:
        self.path = path
        self.data_root = data_root
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self.rebuilt = False
        """True when the last open found no usable index and made an empty one (the caller
        refills it from the records)."""

    # -- opening ---------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        if self._db is not None:
            if self.path.exists():
                return self._db
            self._db.close()  # removed under us: start again
            self._db = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db: sqlite3.Connection | None = None
        existed = self.path.exists()  # connecting creates it: a first start is not a rebuild
        try:
            db = self._connect()
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None or row[0] != str(SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema {row[0] if row else 'none'}, wanted {SCHEMA_VERSION}")
            self.rebuilt = False
        except sqlite3.DatabaseError as exc:  # absent, damaged or older: derived, so made anew
            if existed:
                log.info("search index rebuilt (%s)", exc)
            if db is not None:
                db.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            db = self._connect()
            with db:
                db.executescript(_SCHEMA.format(prefixes=" ".join(map(str, PREFIXES))))
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            self.rebuilt = True
        self._db = db
        return db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def close(self) -> None:
        """Close the connection (the file stays)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def present(self) -> bool:
        """The index file is there and open as this index (a stat)."""
        return self._db is not None and self.path.exists()

    # -- what is indexed -------------------------------------------------------------------------

    def stamps(self, group: Group) -> dict[str, str]:
        """`{owner: stamp}` of the owners of this kind now indexed (empty for a new index)."""
        with self._lock:
            db = self._open()
            return dict(db.execute("SELECT owner, stamp FROM stamps WHERE grp = ?", (group,)).fetchall())

    def meta(self, key: str) -> str | None:
        """A value kept beside the index (e.g. the graph signature it was filled from)."""
        with self._lock:
            row = self._open().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

    def replace(
        self,
        group: Group,
        owners: Mapping[str, tuple[str, Sequence[Entry]]],
        drop: Iterable[str] = (),
        meta: dict[str, str] | None = None,
    ) -> None:
        """In one transaction: each owner's rows replaced by `owners[owner] = (stamp, entries)`,
        the owners in `drop` removed, and `meta` values set. Raises sqlite3.Error (nothing
        changed)."""
        kinds = set(kinds_in([group]))
        with self._lock:
            db = self._open()
            db.execute("BEGIN IMMEDIATE")
            try:
                gone = [*drop, *owners]
                db.executemany("DELETE FROM entries WHERE grp = ? AND owner = ?", [(group, o) for o in gone])
                db.executemany("DELETE FROM stamps WHERE grp = ? AND owner = ?", [(group, o) for o in drop])
                rows = []
                for stamp_entries in owners.values():
                    for e in stamp_entries[1]:
                        if e.kind not in kinds:
                            raise ValueError(f"a {e.kind} row is not a {group}'s")
                        rows.append((group, e.kind, e.owner, e.target, e.label, e.title, e.body))
                db.executemany(
                    "INSERT INTO entries(grp, kind, owner, target, label, title, body)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                db.executemany(
                    "INSERT OR REPLACE INTO stamps VALUES (?, ?, ?)",
                    [(group, owner, se[0]) for owner, se in owners.items()],
                )
                for key, value in (meta or {}).items():
                    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # -- queries ---------------------------------------------------------------------------------

    def query(self, match: str, limit: int) -> list[IndexHit]:
        """The best `limit` rows for an FTS5 query (`core.machine_room.search.fts_query`'s), best
        first: `(kind, owner, target, label, snippet, rank)`; the snippet is up to 16 words around
        the match, matched words between `MARK_START` and `MARK_END` (`make_snippet`). Raises
        sqlite3.Error."""
        with self._lock:
            db = self._open()
            best = self._best(db, match, limit)
            if not best:
                return []
            ids = [r[0] for r in best]
            marks = ",".join("?" * len(ids))
            rows = {
                r[0]: r[1:]
                for r in db.execute(
                    f"SELECT id, kind, owner, target, label, title, body FROM entries WHERE id IN ({marks})",  # noqa: S608
                    ids,
                ).fetchall()
            }
        terms = query_terms(match)
        out: list[IndexHit] = []
        for rowid, rank in best:
            kind, owner, target, label, title, body = rows[rowid]
            out.append((kind, owner, target, label, make_snippet(title, body, terms), float(rank)))
        return out

    def _best(self, db: sqlite3.Connection, match: str, limit: int) -> list[tuple[int, float]]:
        """`[(rowid, rank)]`, best first. bm25 costs microseconds per matching row, so a query
        matching more than `RANK_ALL` rows ranks only its newest `WINDOW` matches (rows are written
        again when their record changes: recent lessons come first) and its newest `WINDOW` title
        matches, title matches first."""
        match = self._narrowed(db, match)
        if not self._more_than(db, match, RANK_ALL):
            return db.execute(
                "SELECT rowid, bm25(fts, 8.0, 1.0) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?",
                (match, limit),
            ).fetchall()
        out: dict[int, float] = {}
        for query in (f"{{title}} : ({match})", match):
            floor = db.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (query, WINDOW - 1),
            ).fetchone()
            for rowid, rank in db.execute(
                "SELECT rowid, bm25(fts, 8.0, 1.0) AS r FROM fts WHERE fts MATCH ? AND rowid >= ?"
                " ORDER BY r LIMIT ?",
                (query, floor[0] if floor else 0, limit),
            ).fetchall():
                out.setdefault(rowid, rank)
        return list(out.items())[:limit]

    @staticmethod
    def _more_than(db: sqlite3.Connection, match: str, n: int) -> bool:
        """The query matches more than `n` rows (its matches walked from the newest, n of them)."""
        return (
            db.execute(
                "SELECT 1 FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?", (match, n)
            ).fetchone()
            is not None
        )

    def _narrowed(self, db: sqlite3.Connection, match: str) -> str:
        """A last word matched as a prefix longer than the index's prefix lists (`"derivative"*`:
        the lists of every word it starts are merged on each query) is asked for as that word
        itself when the word alone matches more than `RANK_ALL` rows (already far more than a
        page of results)."""
        terms = query_terms(match)
        if not terms or not terms[-1][1] or len(terms[-1][0]) <= max(PREFIXES):
            return match
        if not self._more_than(db, f'"{terms[-1][0]}"', RANK_ALL):
            return match
        return " ".join(f'"{w}"' + ("*" if p else "") for w, p in [*terms[:-1], (terms[-1][0], False)])

    def counts(self) -> dict[Kind, int]:
        """Rows per kind (tests and the bench)."""
        with self._lock:
            found = dict(self._open().execute("SELECT kind, count(*) FROM entries GROUP BY kind").fetchall())
        return {k: int(found.get(k, 0)) for k in GROUP_OF}

    def size_bytes(self) -> int:
        """The index's size on disk (the file and its write-ahead log), in bytes."""
        with self._lock:
            if self._db is not None:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(
            Path(str(self.path) + s).stat().st_size for s in ("", "-wal") if Path(str(self.path) + s).exists()
        )

    # -- a cheap look at records' files ----------------------------------------------------------

    def file_stamps(self, folder: str, prefix: str = "", suffix: str = ".json") -> dict[str, str]:
        """`{name without suffix: "mtime_ns:size"}` of `data/<folder>/<prefix>*<suffix>` (a
        directory listing and a stat per file: a cheap "did a record change" look). Empty when
        the folder is absent."""
        out: dict[str, str] = {}
        try:
            with os.scandir(self.data_root / folder) as it:
                for entry in it:
                    if entry.name.startswith(prefix) and entry.name.endswith(suffix):
                        try:
                            st = entry.stat()
                        except FileNotFoundError:
                            continue
                        out[entry.name[: -len(suffix)]] = f"{st.st_mtime_ns}:{st.st_size}"
        except FileNotFoundError:
            pass
        return out
