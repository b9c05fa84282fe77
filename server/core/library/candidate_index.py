"""Incremental indexes of the graph's nodes for the auditor's candidates (issue 28, item 2).

Kept up to date as the graph changes instead of scanning every node per finding (issue 16's
`_fuzzy` scored every node with `token_set_ratio` for every finding: ~76 % of a vault import's
server CPU at 5,500 nodes). Three structures, each a pure function of the set of indexed nodes
(the answer never depends on the order of adds and removes; `tests/unit/library/
test_candidate_index.py` checks it against an index built from scratch):

- `LexicalIndex`: BM25 (Robertson/Sparck Jones idf ``log(1 + (N - df + 0.5) / (df + 0.5))``,
  ``k1 = 1.2``, ``b = 0.75``) over case-folded words, in an inverted index whose postings are kept
  sorted by the term's weight in the document (tf / length, then id). A query reads at most
  `CHAMPIONS` postings of each of its terms (champion lists, Manning, Raghavan & Schütze,
  *Introduction to Information Retrieval* §7.1.3): its cost is bounded by its own length, not by
  the graph's size; a common word's postings beyond the first `CHAMPIONS` are skipped (a rare
  word, which decides a match, has fewer). The best documents of that union are then scored
  exactly. Adds and removes are O(terms × log N) (`sortedcontainers.SortedList`).
- `VectorIndex`: unit rows in one float16 matrix with add / remove (a freed row is reused); a
  search multiplies it, converted `SEARCH_ROWS` rows at a time, by a job's query rows (float32
  BLAS), O(N × F × d) flops in (F × `SEARCH_ROWS`) blocks, and
  takes each query's top rows with `argpartition`. Exact, not approximate (no ANN library is a
  dependency): at 50,000 nodes and 480 findings a pack's search is ~10 GFLOP, well under its
  embedding's cost.
- `CandidateIndex`: the nodes' statement keys (exact links), names and aliases (case-folded), and
  the lexical index, brought up to date by `sync` with the graph as the caller reads it: a pass
  of identity checks over the mapping (a node object the fold did not replace is unchanged), and
  real work only for the nodes added, changed (their aliases grew) or gone. Merges, version swaps,
  deletions and lesson extraction all change the graph through the store's folds, so one `sync`
  before each job's ranking sees every kind of change, whatever wrote it.

Pure: no I/O. Not thread-safe: the merge section serialises its users.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
import sys
import unicodedata
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from sortedcontainers import SortedList

from server.core.contracts.graph import Proposition

CHAMPIONS = 64
"""Postings read per query term (the highest weighted first)."""
RESCORE = 4
"""A query's union of champion postings is scored exactly for its best `RESCORE * n` documents
(by the partial score the champion postings gave)."""
BM25_K1 = 1.2
BM25_B = 0.75

_WORD = re.compile(r"\w+")
_intern = sys.intern
SEARCH_ROWS = 8_192
"""`VectorIndex.search` converts this many float16 rows to float32 at a time (3 MB at d = 384)."""
_TRAILING = ".!;:。！；：…"


def words(text: str) -> list[str]:
    """The lexical index's tokens: NFKC, case-folded runs of word characters (letters, digits,
    underscore, any script). Case is folded here (a ranking), never in `statement_key` (an
    identity)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def statement_key(text: str) -> str:
    """The deterministic identity of a statement: NFKC, whitespace collapsed, trailing sentence
    punctuation and spaces dropped; case is kept (in mathematics and code case is meaning:
    `F(x)` is not `f(x)`, issue 28 item 8). "" for a statement of punctuation alone (never
    linked)."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).rstrip(_TRAILING + " ")


def name_key(name: str) -> str:
    """A name's key for name matches (candidates, never links): case-folded, whitespace collapsed."""
    return " ".join(name.casefold().split())


def lexical_text(name: str, statement: str) -> str:
    """What is embedded, indexed and fuzzy-matched for a proposition: "name. statement"."""
    return f"{name}. {statement}"


class LexicalIndex:
    """BM25 over documents given as token lists, with add / remove (see the module docstring)."""

    def __init__(self) -> None:
        self._docs: dict[str, dict[str, int]] = {}
        """doc id -> term -> count."""
        self._length: dict[str, int] = {}
        self._postings: dict[str, SortedList] = {}
        """term -> SortedList of (-tf / length, doc id): the highest weighted first."""
        self._total = 0

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc: object) -> bool:
        return doc in self._docs

    def add(self, doc: str, tokens: Sequence[str]) -> None:
        """Index `doc` (replacing what it held)."""
        if doc in self._docs:
            self.remove(doc)
        counts: dict[str, int] = {}
        for token in tokens:
            token = _intern(token)  # one string per term, not one per document
            counts[token] = counts.get(token, 0) + 1
        length = max(1, len(tokens))
        self._docs[doc] = counts
        self._length[doc] = length
        self._total += length
        for term, tf in counts.items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = SortedList()
            posting.add((-tf / length, doc))

    def remove(self, doc: str) -> None:
        """Forget `doc`; a doc not indexed is ignored."""
        counts = self._docs.pop(doc, None)
        if counts is None:
            return
        length = self._length.pop(doc)
        self._total -= length
        for term, tf in counts.items():
            posting = self._postings[term]
            posting.remove((-tf / length, doc))
            if not posting:
                del self._postings[term]

    def query(self, tokens: Sequence[str], n: int) -> list[tuple[str, float]]:
        """The `n` best (doc id, BM25 score), best first, ties by id; only documents sharing a
        term. Reads at most `CHAMPIONS` postings per distinct query term."""
        docs = len(self._docs)
        if not docs or n <= 0:
            return []
        terms = [t for t in dict.fromkeys(tokens) if t in self._postings]
        if not terms:
            return []
        avg = self._total / docs
        idf = {}
        partial: dict[str, float] = {}
        for term in terms:
            posting = self._postings[term]
            df = len(posting)
            idf[term] = math.log(1.0 + (docs - df + 0.5) / (df + 0.5))
            for _, doc in posting.islice(0, CHAMPIONS):
                partial[doc] = partial.get(doc, 0.0) + self._weight(doc, term, idf[term], avg)
        best = heapq.nsmallest(RESCORE * n, partial, key=lambda d: (-partial[d], d))
        exact = {doc: sum(self._weight(doc, term, idf[term], avg) for term in terms) for doc in best}
        ranked = heapq.nsmallest(n, exact, key=lambda d: (-exact[d], d))
        return [(doc, exact[doc]) for doc in ranked]

    def _weight(self, doc: str, term: str, idf: float, avg: float) -> float:
        tf = self._docs[doc].get(term, 0)
        if not tf:
            return 0.0
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self._length[doc] / avg)
        return idf * tf * (BM25_K1 + 1.0) / (tf + norm)


class VectorIndex:
    """Unit vectors by id in one float16 matrix, with add / remove / search (module docstring).

    Args:
        dim: the vectors' length; taken from the first vector added when None.
    """

    def __init__(self, dim: int | None = None) -> None:
        self.dim = dim
        self._matrix = np.zeros((0, dim or 0), dtype=np.float16)
        self._ids: list[str | None] = []
        self._slot: dict[str, int] = {}
        self._free: list[int] = []

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: object) -> bool:
        return key in self._slot

    def add(self, key: str, vector: np.ndarray) -> None:
        """Store `vector` (shape (dim,)) under `key`, replacing what it held.

        Raises:
            ValueError: a vector of another length than the index's.
        """
        row = np.asarray(vector, dtype=np.float32).reshape(-1)
        if self.dim is None:
            self.dim = row.shape[0]
            self._matrix = np.zeros((0, self.dim), dtype=np.float16)
        if row.shape[0] != self.dim:
            raise ValueError(f"vector of length {row.shape[0]}; this index holds length {self.dim}")
        slot = self._slot.get(key)
        if slot is None:
            if self._free:
                slot = heapq.heappop(self._free)
            else:
                slot = len(self._ids)
                self._ids.append(None)
                if slot >= self._matrix.shape[0]:
                    grown = np.zeros((max(16, 2 * self._matrix.shape[0]), self.dim), dtype=np.float16)
                    grown[: self._matrix.shape[0]] = self._matrix
                    self._matrix = grown
            self._slot[key] = slot
            self._ids[slot] = key
        self._matrix[slot] = row

    def remove(self, key: str) -> None:
        """Forget `key`; an id not held is ignored."""
        slot = self._slot.pop(key, None)
        if slot is None:
            return
        self._ids[slot] = None
        self._matrix[slot] = 0.0
        heapq.heappush(self._free, slot)

    def search(self, queries: np.ndarray, n: int, floor: float) -> list[list[str]]:
        """For each query row (shape (F, dim)), the ids of the at most `n` rows of highest dot
        product >= `floor`, best first, ties by id."""
        q = np.asarray(queries, dtype=np.float32)
        if not len(self._slot) or q.shape[0] == 0 or n <= 0:
            return [[] for _ in range(q.shape[0])]
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries of shape {q.shape}; this index holds length {self.dim}")
        used = len(self._ids)
        k = min(n, len(self._slot))
        free = np.asarray(sorted(self._free), dtype=np.intp)
        found: list[list[tuple[float, str]]] = [[] for _ in range(q.shape[0])]
        for at in range(0, used, SEARCH_ROWS):  # bounded memory: (F x SEARCH_ROWS) at a time
            end = min(used, at + SEARCH_ROWS)
            block = q @ self._matrix[at:end].astype(np.float32).T  # BLAS wants float32 rows
            gone = free[(free >= at) & (free < end)] - at
            if len(gone):
                block[:, gone] = -np.inf
            rows = end - at
            floor_ = np.full(q.shape[0], floor, dtype=np.float32)
            if k < rows:  # each query's k best of this block, and every row tied with the k-th
                floor_ = np.maximum(np.partition(block, rows - k, axis=1)[:, rows - k], floor_)
            hits, cols = np.nonzero(block >= floor_[:, None])
            for r, c in zip(hits.tolist(), cols.tolist(), strict=True):
                found[r].append((-float(block[r, c]), self._ids[at + c] or ""))
        # the k best overall are among each block's k best: best first, ties by id
        return [[key for _, key in sorted(pairs)[:k]] for pairs in found]


def _digest(node: Proposition) -> bytes:
    """What a node is indexed by (name, statement, aliases, creation time), in 16 bytes."""
    said = repr((node.name, node.statement, tuple(node.aliases), node.created_at))
    return hashlib.blake2b(said.encode("utf-8"), digest_size=16).digest()


class CandidateIndex:
    """The graph's nodes indexed for exact links, name matches and lexical ranking.

    Holds no node: weak references to the objects last synced (an unchanged node is one whose
    object is still the same), a digest of what was indexed, and the keys to remove it by. So a
    fold the store replaced is freed, not kept alive by the index between jobs; the texts a query
    reads come from the mapping the caller passes (`exact`, `texts`).
    """

    def __init__(self, nodes: Mapping[str, Proposition] | None = None) -> None:
        self._refs: dict[str, weakref.ref[Proposition]] = {}
        self._digests: dict[str, bytes] = {}
        self._keys: dict[str, tuple[int | None, tuple[str, ...]]] = {}
        """node id -> (hash of its statement key or None, its name keys): what `remove` undoes."""
        self._statements: dict[int, dict[str, str]] = {}
        """hash of a statement key -> node id -> created_at (a hash, not a second copy of every
        statement; `exact` checks the key itself)."""
        self._names: dict[str, dict[str, str]] = {}
        """name key -> node id -> created_at."""
        self.lexical = LexicalIndex()
        if nodes:
            self.sync(nodes)

    def __len__(self) -> int:
        return len(self._digests)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._digests

    def __iter__(self) -> Iterator[str]:
        return iter(self._digests)

    def sync(self, nodes: Mapping[str, Proposition]) -> tuple[list[str], list[str]]:
        """Bring the index to exactly `nodes`. Returns (ids added or changed, ids removed).

        A pass of identity checks over `nodes` (and over the indexed ids): a node object that is
        the one last synced is taken as unchanged (the graph's folds copy a proposition they
        touch, never mutate a shared one); another object with the same digest (name, statement,
        aliases, creation time) only replaces the reference."""
        gone = [node_id for node_id in self._digests if node_id not in nodes]
        for node_id in gone:
            self.remove(node_id)
        changed: list[str] = []
        refs = self._refs
        for node_id, node in nodes.items():
            ref = refs.get(node_id)
            if ref is not None and ref() is node:
                continue
            if ref is not None and self._digests[node_id] == _digest(node):
                refs[node_id] = weakref.ref(node)
                continue
            self.add(node)
            changed.append(node_id)
        return changed, gone

    def add(self, node: Proposition) -> None:
        """Index `node` (replacing what its id held)."""
        if node.id in self._digests:
            self.remove(node.id)
        self._refs[node.id] = weakref.ref(node)
        self._digests[node.id] = _digest(node)
        key = statement_key(node.statement)
        hashed = hash(key) if key else None
        if hashed is not None:
            self._statements.setdefault(hashed, {})[node.id] = node.created_at
        names = tuple(dict.fromkeys(name_key(n) for n in [node.name, *node.aliases]))
        for name in names:
            self._names.setdefault(name, {})[node.id] = node.created_at
        self._keys[node.id] = (hashed, names)
        self.lexical.add(node.id, words(lexical_text(node.name, node.statement)))

    def remove(self, node_id: str) -> None:
        """Forget a node; an id not indexed is ignored."""
        if self._digests.pop(node_id, None) is None:
            return
        del self._refs[node_id]
        hashed, names = self._keys.pop(node_id)
        tables: tuple[tuple[dict[Any, dict[str, str]], tuple[Any, ...]], ...] = (
            (self._statements, (hashed,) if hashed is not None else ()),
            (self._names, names),
        )
        for table, keys in tables:
            for key in keys:
                held = table.get(key)
                if held is not None:
                    held.pop(node_id, None)
                    if not held:
                        del table[key]
        self.lexical.remove(node_id)

    def exact(self, key: str, nodes: Mapping[str, Proposition]) -> str | None:
        """The oldest node (by creation time, then id) whose statement key is `key`, or None.
        `nodes`: the mapping last synced (its statements are checked: the index holds hashes)."""
        held = self._statements.get(hash(key)) if key else None
        if not held:
            return None
        equal = [(at, i) for i, at in held.items() if statement_key(nodes[i].statement) == key]
        return min(equal)[1] if equal else None

    def named(self, names: Iterable[str]) -> list[str]:
        """Nodes whose name or an alias equals one of `names` (case-folded), oldest first per name,
        in the order of `names`, each once."""
        out: dict[str, None] = {}
        for name in names:
            held = self._names.get(name_key(name), {})
            for node_id in sorted(held, key=lambda i: (held[i], i)):
                out.setdefault(node_id, None)
        return list(out)
