"""The real embedder lets its model go when unused (issue 28, item 3: memory given back after an
import): the onnxruntime session held ~90 MB of the server's RSS after the first audit. After
`idle_release_s` without an `embed` it is dropped (and `released` called: the server trims the
heap there); the next `embed` loads it again and answers the same vectors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from server.agent.library.embedder import OnnxEmbedder
from server.services.library.memory import release_memory

TEXTS = ["A group has an identity.", "Every finite group of prime order is cyclic."]


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_an_unused_model_is_let_go_and_loaded_again_on_the_next_embed() -> None:
    let_go = threading.Event()
    embedder = OnnxEmbedder(idle_release_s=0.5, released=let_go.set)
    first = embedder.embed(TEXTS)
    assert embedder.loaded() and embedder.loads == 1
    release_memory()
    loaded = _rss_mb()
    assert let_go.wait(60), "the model was not let go"
    assert not embedder.loaded()
    release_memory()
    assert loaded - _rss_mb() > 30  # measured ~90 MB: the session's weights and buffers
    again = embedder.embed(TEXTS)
    assert embedder.loaded() and embedder.loads == 2
    assert np.array_equal(first, again)


def test_a_model_in_use_is_kept() -> None:
    let_go = threading.Event()
    embedder = OnnxEmbedder(idle_release_s=1.0, released=let_go.set)
    until = time.monotonic() + 2.5
    while time.monotonic() < until:  # used every 0.1 s: never 1 s unused
        embedder.embed(TEXTS[:1])
        time.sleep(0.1)
    assert embedder.loaded() and embedder.loads == 1 and not let_go.is_set()
    assert let_go.wait(60) and not embedder.loaded()


def test_without_an_idle_release_the_model_stays() -> None:
    embedder = OnnxEmbedder()
    embedder.embed(TEXTS[:1])
    time.sleep(0.3)
    assert embedder.loaded() and embedder._timer is None
