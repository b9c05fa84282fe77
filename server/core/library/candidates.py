"""Candidate existing nodes for each extracted proposition, for the auditor to judge (seed §6).

Three signals, fused (issue 16):

- exact: a finding whose *normalized statement* (`statement_key`: Unicode NFKC, case-folded,
  whitespace collapsed, trailing sentence punctuation dropped) equals an existing node's, or an
  earlier finding's of the same batch, is linked deterministically, without the model. Numbers,
  signs, words and word order all survive the normalization, so a changed number, direction or
  qualifier never links.
- lexical: exact and alias name matches first (case-insensitive), then rapidfuzz's
  token_set_ratio over name + statement, case-folded, punctuation dropped (>= `CANDIDATE_CUTOFF`).
- semantic: cosine similarity of sentence embeddings (rows L2-normalised, computed by the
  `Embedder` port's adapter; this module only receives the vectors), >= `EMBED_FLOOR`.

The name matches lead; the fuzzy and the embedding ranks are then merged by reciprocal rank
fusion (`RRF_K`), at most `limit` candidates per finding. Findings of one batch are candidates
for each other too (`batch`): a later finding may be the same proposition as an earlier one.
Without vectors the ranking is the lexical one alone.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import fuzz, process, utils

from server.core.contracts.graph import FindingProposition, Proposition

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

_TRAILING = ".!;:。！；：…"


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def statement_key(text: str) -> str:
    """The deterministic identity of a statement: NFKC, case-folded, whitespace collapsed, trailing
    sentence punctuation and spaces dropped. "" for a statement of punctuation alone (never linked)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(_TRAILING + " ")


def text_of(prop: FindingProposition | Proposition) -> str:
    """What is embedded and fuzzy-matched for a proposition: "name. statement"."""
    return f"{prop.name}. {prop.statement}"


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


def _semantic(
    query: np.ndarray | None,
    matrix: np.ndarray | None,
    ids: Sequence[str],
    n: int,
    floor: float = EMBED_FLOOR,
) -> list[str]:
    if query is None or matrix is None or not len(ids):
        return []
    sims = matrix @ query
    top = np.argsort(-sims, kind="stable")[:n]
    return [ids[i] for i in top if sims[i] >= floor]


def _fuzzy(query: str, choices: Mapping[str, str], n: int, cutoff: float = CANDIDATE_CUTOFF) -> list[str]:
    if not choices:
        return []
    hits = process.extract(
        query, choices, scorer=fuzz.token_set_ratio, processor=utils.default_process, limit=n
    )
    return [key for _, score, key in hits if score >= cutoff]


def audit_candidates(
    findings: list[FindingProposition],
    nodes: Mapping[str, Proposition],
    limit: int = 5,
    finding_vectors: np.ndarray | None = None,
    node_vectors: np.ndarray | None = None,
) -> AuditCandidates:
    """Exact links, then fused candidates among the graph's nodes and the batch's earlier findings.

    Args:
        findings: one extraction job's propositions, in submit order.
        nodes: the merged graph's nodes.
        limit: at most this many candidates per finding, for each of `existing` and `batch`.
        finding_vectors: shape (len(findings), d), L2-normalised rows, or None (lexical only).
        node_vectors: shape (len(nodes), d), rows in `nodes`' iteration order, or None.

    Raises:
        ValueError: vectors whose row count does not match.
    """
    node_ids = list(nodes)
    fv = _as_matrix(finding_vectors, len(findings), "finding vectors")
    nv = _as_matrix(node_vectors, len(node_ids), "node vectors")
    if fv is None or nv is None:
        fv = nv = None
    by_statement: dict[str, str] = {}
    for node in sorted(nodes.values(), key=lambda n: (n.created_at, n.id)):  # the oldest wins
        by_statement.setdefault(statement_key(node.statement), node.id)
    by_statement.pop("", None)
    by_name: dict[str, list[str]] = {}
    for node in nodes.values():
        for name in [node.name, *node.aliases]:
            by_name.setdefault(_key(name), []).append(node.id)
    choices = {node.id: text_of(node) for node in nodes.values()}
    out = AuditCandidates()
    seen_statements: dict[str, str] = {}  # statement key -> the batch's first finding with it
    for i, finding in enumerate(findings):
        key = statement_key(finding.statement)
        if key and key in by_statement:
            out.exact[finding.id] = by_statement[key]
            continue
        if key and key in seen_statements:
            out.exact[finding.id] = seen_statements[key]
            continue
        if key:
            seen_statements[key] = finding.id
        query = text_of(finding)
        qv = fv[i] if fv is not None else None
        named: list[str] = []
        for name in [finding.name, *finding.aliases]:
            for node_id in by_name.get(_key(name), []):
                if node_id not in named:
                    named.append(node_id)
        found = list(named[:limit])
        if len(found) < limit and nodes:
            fused = fuse(_fuzzy(query, choices, limit * 2), _semantic(qv, nv, node_ids, limit * 2))
            found += [n for n in fused if n not in found][: limit - len(found)]
        out.existing[finding.id] = found
        earlier = [f for f in findings[:i] if f.id not in out.exact]
        if earlier:
            idx = [j for j, f in enumerate(findings[:i]) if f.id not in out.exact]
            batch_ids = [findings[j].id for j in idx]
            bm = fv[idx] if fv is not None else None
            names = {_key(n) for n in [finding.name, *finding.aliases]}
            named_b = [f.id for f in earlier if names & {_key(n) for n in [f.name, *f.aliases]}]
            fused_b = fuse(
                _fuzzy(query, {f.id: text_of(f) for f in earlier}, limit * 2, BATCH_FUZZY_CUTOFF),
                _semantic(qv, bm, batch_ids, limit * 2, BATCH_EMBED_FLOOR),
            )
            out.batch[finding.id] = (named_b + [b for b in fused_b if b not in named_b])[:limit]
        else:
            out.batch[finding.id] = []
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
