"""Candidate existing nodes for each extracted proposition, for the auditor to judge (seed §6).

Three signals, fused (issue 16), read from indexes kept up to date as the graph changes (issue
28, item 2: `server.core.library.candidate_index`; no scan of every node per finding):

- exact: a finding whose *normalized statement* (`statement_key`: Unicode NFKC, whitespace
  collapsed, trailing sentence punctuation dropped; case kept, issue 28 item 8) equals an
  existing node's, or an earlier finding's of the same batch, is linked deterministically,
  without the model. Numbers, signs, case, words and word order all survive the normalization,
  so a changed number, direction, qualifier or letter case never links (a case-only twin is a
  candidate, for the auditor to judge).
- lexical: exact and alias name matches first (case-insensitive), then the BM25 index's best
  `LEXICAL_POOL` documents re-ranked by rapidfuzz's token_set_ratio over name + statement,
  case-folded, punctuation dropped (>= `CANDIDATE_CUTOFF`).
- semantic: cosine similarity of sentence embeddings (rows L2-normalised, computed by the
  `Embedder` port's adapter; this module only receives the vectors), >= `EMBED_FLOOR`.

The name matches lead; the fuzzy and the embedding ranks are then merged by reciprocal rank
fusion (`RRF_K`), at most `limit` candidates per finding. Findings of one batch are candidates
for each other too (`batch`): a later finding may be the same proposition as an earlier one;
the batch's own lexical index grows finding by finding (no finding is compared with every
earlier one). Without vectors the ranking is the lexical one alone.

Cost of one job of F findings over N nodes: `CandidateIndex.sync` (identity checks over the
mapping, O(N) pointer comparisons, real work only for changed nodes), then per finding a bounded
number of postings (`candidate_index.CHAMPIONS` per query word) and one re-rank of
`LEXICAL_POOL` texts; the semantic search is one (N x d) @ (d x F) product.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import fuzz, process, utils

from server.core.contracts.graph import FindingProposition, Proposition
from server.core.library.candidate_index import (
    CandidateIndex,
    LexicalIndex,
    VectorIndex,
    lexical_text,
    name_key,
    statement_key,
    words,
)

__all__ = [
    "AuditCandidates",
    "CandidateIndex",
    "VectorIndex",
    "audit_candidates",
    "candidates",
    "fuse",
    "search",
    "statement_key",
    "text_of",
]

FUZZY_CUTOFF = 60.0
"""`search`'s floor (halved there), on WRatio."""
CANDIDATE_CUTOFF = 50.0
"""The candidates' fuzzy floor, on token_set_ratio over case-folded words without punctuation
(WRatio on raw text ties at 85.5 for most pairs of sentences: a shared short word saturates its
partial match; see docs/benchmarks.md)."""
EMBED_FLOOR = 0.5
"""Cosine below this is not a candidate (all-MiniLM-L6-v2: unrelated sentences score < 0.3)."""
BATCH_FUZZY_CUTOFF = 80.0
BATCH_EMBED_FLOOR = 0.7
"""Stricter floors among one batch's findings: they come from one source, on one topic, so the
loose ones would make every finding a candidate for every other (and cost an auditor call)."""
RRF_K = 60
"""Reciprocal rank fusion's constant: a rank r in one list scores 1 / (RRF_K + r)."""
LEXICAL_POOL = 32
"""How many of BM25's best documents the token_set_ratio re-rank reads per finding."""


def text_of(prop: FindingProposition | Proposition) -> str:
    """What is embedded and fuzzy-matched for a proposition: "name. statement"."""
    return lexical_text(prop.name, prop.statement)


@dataclass
class AuditCandidates:
    """What the auditor is asked, and what was decided without it.

    Attributes:
        existing: finding id -> existing node ids, best first (at most `limit`).
        batch: finding id -> ids of *earlier* findings of the same batch, best first (same names,
            then fused with the stricter `BATCH_FUZZY_CUTOFF` and `BATCH_EMBED_FLOOR`).
        exact: finding id -> an existing node id or an earlier finding's id: linked without the
            model (equal `statement_key`). A finding here has no entry in `existing` or `batch`.
    """

    existing: dict[str, list[str]] = field(default_factory=dict)
    batch: dict[str, list[str]] = field(default_factory=dict)
    exact: dict[str, str] = field(default_factory=dict)

    def undecided(self) -> bool:
        """True when some finding not linked exactly has a candidate (the auditor has work)."""
        return any(self.existing.values()) or any(self.batch.values())


def _as_matrix(vectors: np.ndarray | None, rows: int, what: str) -> np.ndarray | None:
    if vectors is None:
        return None
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != rows:
        raise ValueError(f"{what}: expected {rows} rows of vectors, got shape {matrix.shape}")
    return matrix


def fuse(*rankings: Sequence[str], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion: ids by the sum of 1 / (k + rank) over the rankings they appear in
    (rank from 1), best first; ties by first appearance, so the result is deterministic."""
    score: dict[str, float] = {}
    order: dict[str, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
            order.setdefault(item, len(order))
    return sorted(score, key=lambda item: (-score[item], order[item]))


def _fuzzy(
    query: str,
    lexical: LexicalIndex,
    text: Mapping[str, str],
    n: int,
    cutoff: float,
) -> list[str]:
    """BM25's best `LEXICAL_POOL` documents for `query`, re-ranked by token_set_ratio (>= cutoff),
    at most `n`; ties keep BM25's order."""
    pool = lexical.query(words(query), LEXICAL_POOL)
    if not pool:
        return []
    choices = {doc: text[doc] for doc, _ in pool}
    hits = process.extract(
        query, choices, scorer=fuzz.token_set_ratio, processor=utils.default_process, limit=n
    )
    return [key for _, score, key in hits if score >= cutoff]


class _Texts(Mapping[str, str]):
    """The nodes' "name. statement", computed when read (only for a query's pool)."""

    def __init__(self, nodes: Mapping[str, Proposition]) -> None:
        self.nodes = nodes

    def __getitem__(self, key: str) -> str:
        return text_of(self.nodes[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


def _node_vectors(
    node_vectors: np.ndarray | None, ids: list[str], vectors: VectorIndex | None
) -> VectorIndex | None:
    if vectors is not None:
        return vectors
    matrix = _as_matrix(node_vectors, len(ids), "node vectors")
    if matrix is None:
        return None
    index = VectorIndex(matrix.shape[1])
    for row, node_id in enumerate(ids):
        index.add(node_id, matrix[row])
    return index


def _batch_semantic(fv: np.ndarray | None, open_rows: list[int], i: int, n: int) -> list[int]:
    """Rows among `open_rows` (earlier, undecided findings) most similar to finding `i`, >= the
    batch floor, best first, ties by row."""
    if fv is None or not open_rows:
        return []
    rows = np.asarray(open_rows, dtype=np.intp)
    sims = fv[rows] @ fv[i]
    picked = sorted((-float(sims[k]), int(rows[k])) for k in np.nonzero(sims >= BATCH_EMBED_FLOOR)[0])
    return [row for _, row in picked[:n]]


def audit_candidates(
    findings: list[FindingProposition],
    nodes: Mapping[str, Proposition],
    limit: int = 5,
    finding_vectors: np.ndarray | None = None,
    node_vectors: np.ndarray | None = None,
    *,
    index: CandidateIndex | None = None,
    vectors: VectorIndex | None = None,
) -> AuditCandidates:
    """Exact links, then fused candidates among the graph's nodes and the batch's earlier findings.

    Args:
        findings: one extraction job's propositions, in submit order.
        nodes: the merged graph's nodes.
        limit: at most this many candidates per finding, for each of `existing` and `batch`.
        finding_vectors: shape (len(findings), d), L2-normalised rows, or None (lexical only).
        node_vectors: shape (len(nodes), d), rows in `nodes`' iteration order, or None; ignored
            when `vectors` is given.
        index: an index kept across jobs: synced to `nodes` here (only what changed is indexed
            again). None: one is built for this call.
        vectors: the nodes' vectors kept across jobs, holding every id of `nodes`.

    Raises:
        ValueError: vectors whose row count or length does not match.
    """
    fv = _as_matrix(finding_vectors, len(findings), "finding vectors")
    nv = _node_vectors(node_vectors, list(nodes), vectors) if fv is not None else None
    if fv is None or nv is None:
        fv, nv = None, None
    if index is None:
        index = CandidateIndex(nodes)
    else:
        index.sync(nodes)
    texts = _Texts(nodes)
    semantic = nv.search(fv, limit * 2, EMBED_FLOOR) if nv is not None and fv is not None else None
    out = AuditCandidates()
    seen_statements: dict[str, str] = {}  # statement key -> the batch's first finding with it
    batch_lexical = LexicalIndex()
    batch_text: dict[str, str] = {}
    batch_names: dict[str, list[str]] = {}
    open_rows: list[int] = []  # rows of earlier findings not linked exactly
    for i, finding in enumerate(findings):
        key = statement_key(finding.statement)
        target = index.exact(key, nodes) if key else None
        if target is None and key:
            target = seen_statements.get(key)
        if target is not None:
            out.exact[finding.id] = target
            continue
        if key:
            seen_statements[key] = finding.id
        query = text_of(finding)
        names = list(dict.fromkeys([finding.name, *finding.aliases]))
        found = index.named(names)[:limit]
        if len(found) < limit and len(index):
            lexical = _fuzzy(query, index.lexical, texts, limit * 2, CANDIDATE_CUTOFF)
            fused = fuse(lexical, semantic[i] if semantic is not None else [])
            found += [n for n in fused if n not in found][: limit - len(found)]
        out.existing[finding.id] = found
        if open_rows:
            named_b: dict[str, None] = {}
            for name in names:
                for fid in batch_names.get(name_key(name), []):
                    named_b.setdefault(fid, None)
            fused_b = fuse(
                _fuzzy(query, batch_lexical, batch_text, limit * 2, BATCH_FUZZY_CUTOFF),
                [findings[r].id for r in _batch_semantic(fv, open_rows, i, limit * 2)],
            )
            out.batch[finding.id] = ([*named_b] + [b for b in fused_b if b not in named_b])[:limit]
        else:
            out.batch[finding.id] = []
        open_rows.append(i)
        batch_text[finding.id] = query
        batch_lexical.add(finding.id, words(query))
        for name in names:
            held = batch_names.setdefault(name_key(name), [])
            if finding.id not in held:
                held.append(finding.id)
    return out


def candidates(
    findings: list[FindingProposition],
    nodes: Mapping[str, Proposition],
    limit: int = 5,
    finding_vectors: np.ndarray | None = None,
    node_vectors: np.ndarray | None = None,
) -> dict[str, list[str]]:
    """finding id -> existing node ids, best first: a finding linked exactly to a node lists that
    node alone, one linked to an earlier finding lists nothing (see `audit_candidates`)."""
    found = audit_candidates(findings, nodes, limit, finding_vectors, node_vectors)
    out = dict(found.existing)
    for finding_id, target in found.exact.items():
        out[finding_id] = [target] if target in nodes else []
    return {f.id: out.get(f.id, []) for f in findings}


def search(query: str, nodes: Mapping[str, Proposition], limit: int = 8) -> list[str]:
    """Node ids whose name, aliases or statement fuzzily match `query`, best first."""
    choices = {n.id: " ".join([n.name, *n.aliases, n.statement]) for n in nodes.values()}
    if not choices or not query.strip():
        return []
    hits = process.extract(query, choices, scorer=fuzz.WRatio, limit=limit)
    return [node_id for _, score, node_id in hits if score >= FUZZY_CUTOFF / 2]
