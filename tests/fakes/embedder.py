"""A deterministic stand-in for the `Embedder` port: a hashed bag of words (each case-folded word
adds a fixed pseudo-random unit direction), so texts sharing words are close and texts sharing
none are near-orthogonal. `synonyms` maps words onto one another, to script a paraphrase the
lexical ranks miss. `fail` makes every call raise EmbedderUnavailable."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

import numpy as np

from server.core.ports import EmbedderUnavailable

DIM = 64


def _direction(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(DIM)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


class FakeEmbedder:
    name = "fake-bag-of-words"

    def __init__(self, synonyms: Mapping[str, str] | None = None, fail: bool = False) -> None:
        self.synonyms = dict(synonyms or {})
        self.fail = fail
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if self.fail:
            raise EmbedderUnavailable("the fake embedder is told to fail")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                out[row] += _direction(self.synonyms.get(word, word))
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out
