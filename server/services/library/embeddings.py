"""Vectors for the auditor's candidates (issue 16): the `Embedder` port behind a cache of the
graph's node vectors, so one job embeds its own findings and only the nodes not seen before."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping

import numpy as np

from server.core.contracts.graph import FindingProposition, Proposition
from server.core.library.candidates import text_of
from server.core.ports import Embedder, EmbedderUnavailable

log = logging.getLogger("lh.services.embeddings")


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()


class CandidateVectors:
    """Embeds findings and nodes for `server.core.library.candidates.audit_candidates`.

    Node vectors are kept as float16 by node id with the digest of the embedded text (a node whose
    name or statement changed is embedded again; ids no longer in the graph are dropped on the
    next call): about 0.8 KB a node. An embedder that fails is not asked again: every later call
    returns None and candidates stay lexical (logged once).
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: dict[str, tuple[bytes, np.ndarray]] = {}
        self._lock = threading.Lock()
        self.failure: str | None = None

    def vectors(
        self, findings: list[FindingProposition], nodes: Mapping[str, Proposition]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """(finding vectors, node vectors in `nodes`' order), float32 unit rows, or None when the
        embedder is unavailable. Blocking CPU work: run it off the event loop."""
        if self.failure is not None:
            return None
        try:
            with self._lock:
                return self._vectors(findings, nodes)
        except EmbedderUnavailable as exc:
            self.failure = str(exc)
            log.warning("candidates stay lexical: %s", exc)
            return None

    def _vectors(
        self, findings: list[FindingProposition], nodes: Mapping[str, Proposition]
    ) -> tuple[np.ndarray, np.ndarray]:
        texts = {node_id: text_of(node) for node_id, node in nodes.items()}
        digests = {node_id: _digest(text) for node_id, text in texts.items()}
        for gone in [k for k in self._cache if k not in nodes]:
            del self._cache[gone]
        stale = [k for k in nodes if k not in self._cache or self._cache[k][0] != digests[k]]
        fresh = self.embedder.embed([text_of(f) for f in findings] + [texts[k] for k in stale])
        for row, node_id in enumerate(stale, start=len(findings)):
            self._cache[node_id] = (digests[node_id], fresh[row].astype(np.float16))
        dim = fresh.shape[1]
        node_matrix = np.empty((len(nodes), dim), dtype=np.float32)
        for row, node_id in enumerate(nodes):
            node_matrix[row] = self._cache[node_id][1]
        return fresh[: len(findings)].astype(np.float32), node_matrix
