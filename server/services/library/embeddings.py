"""Vectors for the auditor's candidates (issue 16): the `Embedder` port behind an index of the
graph's node vectors kept across jobs (issue 28), so one job embeds its own findings and only the
nodes not seen before. A job's findings are embedded before it enters the merge section
(`embed_findings`, issue 28 item 2): jobs overlap there, and only the node index's sync runs inside."""

from __future__ import annotations

import hashlib
import logging
import threading
import weakref
from collections.abc import Mapping

import numpy as np

from server.core.contracts.graph import FindingProposition, Proposition
from server.core.library.candidate_index import VectorIndex
from server.core.library.candidates import text_of
from server.core.ports import Embedder, EmbedderUnavailable

log = logging.getLogger("lh.services.embeddings")


FindingVectors = dict[str, np.ndarray]
"""A finding's embedded text (`text_of`) -> its float32 unit row, from `CandidateVectors.embed_findings`."""


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()


class CandidateVectors:
    """Embeds findings, and keeps the graph's node vectors in a `VectorIndex` for
    `server.core.library.candidates.audit_candidates` (issue 28, item 2: no matrix of every node
    is assembled per job).

    Each call syncs the index with the nodes it is given: a node object seen before is taken as
    unchanged (identity check through a weak reference); another object is embedded again only
    when the digest of its embedded text changed; ids no longer in the graph are removed.
    Float16 rows: 0.77 KB a node (38 MB at 50,000 nodes of all-MiniLM-L6-v2's 384 dimensions).
    An embedder that fails is not asked again: every later call returns None and candidates stay
    lexical (logged once).
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.index = VectorIndex()
        self._held: dict[str, tuple[weakref.ref[Proposition], bytes]] = {}
        """node id -> (a weak reference to the object last synced, the digest of its embedded
        text): a fold the store replaced is freed, not kept alive here between jobs."""
        self._recent: dict[bytes, np.ndarray] = {}
        """The last call's findings' vectors by the digest of their text: the nodes they become
        ("name. statement" alike) are indexed from them, not embedded a second time (issue 28:
        the embedding is most of a note's server CPU)."""
        self._lock = threading.Lock()
        self.failure: str | None = None

    def embed_findings(self, findings: list[FindingProposition]) -> FindingVectors | None:
        """The findings' vectors by their embedded text (one embedder call over the distinct
        texts), or None when the embedder is unavailable. Touches no index: safe beside a
        `vectors` call in another thread, so a job runs it before it takes the merge section and
        passes the result to `vectors` as `prepared` (issue 28 item 2: the embedding was most of
        the section's time, and jobs queued behind it). Blocking CPU work: off the event loop."""
        if self.failure is not None:
            return None
        texts = list(dict.fromkeys(text_of(f) for f in findings))
        try:
            rows = self.embedder.embed(texts)
        except EmbedderUnavailable as exc:
            self._failed(exc)
            return None
        return {text: np.asarray(rows[i], dtype=np.float32) for i, text in enumerate(texts)}

    def vectors(
        self,
        findings: list[FindingProposition],
        nodes: Mapping[str, Proposition],
        prepared: FindingVectors | None = None,
    ) -> tuple[np.ndarray, VectorIndex] | None:
        """(finding vectors, float32 unit rows; the node index, synced to exactly `nodes`), or None
        when the embedder is unavailable. `prepared`: the findings' vectors from `embed_findings`
        (used as they are; a finding missing from it is embedded here). Blocking CPU work: run it
        off the event loop, one call at a time per index (the merge section serialises them)."""
        if self.failure is not None:
            return None
        try:
            with self._lock:
                return self._vectors(findings, nodes, prepared or {})
        except EmbedderUnavailable as exc:
            self._failed(exc)
            return None

    def _failed(self, exc: EmbedderUnavailable) -> None:
        if self.failure is None:
            log.warning("candidates stay lexical: %s", exc)
        self.failure = str(exc)

    def _vectors(
        self, findings: list[FindingProposition], nodes: Mapping[str, Proposition], prepared: FindingVectors
    ) -> tuple[np.ndarray, VectorIndex]:
        held = self._held
        for gone in [k for k in held if k not in nodes]:
            del held[gone]
            self.index.remove(gone)
        recent = self._recent
        stale: list[tuple[str, Proposition, bytes, str]] = []
        for node_id, node in nodes.items():
            was = held.get(node_id)
            if was is not None and was[0]() is node:
                continue
            text = text_of(node)
            digest = _digest(text)
            if was is not None and was[1] == digest:
                held[node_id] = (weakref.ref(node), digest)
                continue
            if digest in recent:  # a node the last job's finding became: its vector is known
                self.index.add(node_id, recent[digest])
                held[node_id] = (weakref.ref(node), digest)
                continue
            stale.append((node_id, node, digest, text))
        texts = [text_of(f) for f in findings]
        missing = [t for t in dict.fromkeys(texts) if t not in prepared]
        fresh = self.embedder.embed(missing + [t for _, _, _, t in stale]) if missing or stale else None
        known = dict(prepared)
        if fresh is not None:
            known.update((text, fresh[row]) for row, text in enumerate(missing))
            for row, (node_id, node, digest, _) in enumerate(stale, start=len(missing)):
                self.index.add(node_id, fresh[row])
                held[node_id] = (weakref.ref(node), digest)
        self._recent = {_digest(text): known[text] for text in texts}
        if not texts:
            return np.zeros((0, self.index.dim or 0), dtype=np.float32), self.index
        return np.asarray([known[text] for text in texts], dtype=np.float32), self.index
