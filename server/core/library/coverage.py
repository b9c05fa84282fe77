"""Coverage: which teacher prose the extraction pipeline has already committed on (seed §6).

Each assistant message's *view* is its teacher prose: its text parts written after the prober
handed over (the prober's words, learner messages, reasoning, tool calls and results, quizzes
are excluded). A view's fingerprint is the SHA-256 of its text; a message is covered when a
merged run recorded that fingerprint for it, so only a teacher-prose edit re-opens a message.
Uncovered = fingerprint diff. Runs take greedy token-budgeted batches of the oldest uncovered
views. Tokens are estimated as ceil(characters / 4).
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from server.core.tokens import estimate_tokens
from server.core.transcript import tool_name

TOKEN_FLOOR = 500
DEFAULT_CHUNK_TOKENS = 8192


def fitting_chunk_tokens(
    configured: int,
    context_tokens: int | None,
    overhead_tokens: int,
    answer_tokens: int,
    tokens_per_estimate: float = 1.0,
) -> int:
    """The chunk budget a model can read: `configured`, lowered to what its context window holds
    after the request's fixed part and the room its answer needs (seed §6 budgets).

    Args:
        configured: the settings' `graph.extractionChunkTokens` (estimated tokens).
        context_tokens: the model's context window (its own tokens); None when unknown or large
            (keyed models): `configured` then stands, as before.
        overhead_tokens: the extractor's instructions and tool schema (estimated tokens).
        answer_tokens: the answer's room (the request's `max_tokens`, the model's own tokens).
        tokens_per_estimate: the model's tokens per estimated token (`estimate_tokens` counts
            4 characters a token; a small model's tokenizer cuts finer).
    Returns:
        min(configured, (context - answer) / tokens_per_estimate - overhead) in estimated tokens,
        never below the floor (`TOKEN_FLOOR`): a window too small for even that is left to fail
        plainly (`context_exceeded`).
    """
    if context_tokens is None:
        return configured
    fits = int((context_tokens - answer_tokens) / tokens_per_estimate) - overhead_tokens
    return min(configured, max(TOKEN_FLOOR, fits))


@dataclass(frozen=True)
class MessageView:
    """One message's teacher prose.

    Attributes:
        message_id: the assistant message.
        text: its teacher prose (paragraphs joined by blank lines).
        fingerprint: SHA-256 hex of `text`.
        tokens: estimated tokens of `text`.
    """

    message_id: str
    text: str
    fingerprint: str
    tokens: int


@dataclass
class ViewMemo:
    """A lesson's views as last made (the caller keeps one per lesson): `messages` the transcript
    they were made from, `counts[i]` how many views `messages[:i]` gave, `teacher[i]` whether the
    teacher spoke before `messages[i]`. A transcript that starts with the very same message
    objects (records are immutable values, shared by the chat store's cache) reuses that prefix."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    counts: list[int] = field(default_factory=lambda: [0])
    teacher: list[bool] = field(default_factory=lambda: [False])
    views: list[MessageView] = field(default_factory=list)


def message_views(messages: list[dict[str, Any]], memo: ViewMemo | None = None) -> list[MessageView]:
    """The teacher-prose views of a transcript, oldest first (messages without prose omitted).

    With `memo`, only the messages after the longest prefix of unchanged message objects are read,
    so a long lesson's views cost what is new (issue 15)."""
    same = 0
    if memo is not None:
        limit = min(len(memo.messages), len(messages))
        same = limit
        if not all(map(operator.is_, messages, memo.messages)):  # at C speed: usually all the same
            # a turn replaces the last message or two (a reply, an answer): checked at C speed too
            tail = (k for k in (limit - 1, limit - 2) if k >= 0 and _same_prefix(messages, memo.messages, k))
            found = next(tail, None)
            same = (
                found
                if found is not None
                else next(i for i in range(limit) if messages[i] is not memo.messages[i])
            )
    views = memo.views[: memo.counts[same]] if memo is not None else []
    counts = memo.counts[: same + 1] if memo is not None else [0]
    flags = memo.teacher[: same + 1] if memo is not None else [False]
    teacher = flags[-1]
    for message in messages[same:]:
        if message.get("role") == "assistant":
            paragraphs: list[str] = []
            for part in message.get("parts", []):
                if teacher:  # the common case, checked first: a long lesson is mostly teacher prose
                    if part.get("type") == "text" and str(part.get("text", "")).strip():
                        paragraphs.append(str(part["text"]).strip())
                elif tool_name(part) == "probe_done" and part.get("state") == "output-available":
                    teacher = True
            if paragraphs:
                text = "\n\n".join(paragraphs)
                digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
                views.append(MessageView(str(message.get("id")), text, digest, estimate_tokens(text)))
        counts.append(len(views))
        flags.append(teacher)
    if memo is not None:
        memo.messages, memo.counts, memo.teacher, memo.views = list(messages), counts, flags, list(views)
    return views


def _same_prefix(a: list[Any], b: list[Any], k: int) -> bool:
    """Whether the first `k` items of `a` and `b` are the very same objects."""
    return all(map(operator.is_, itertools.islice(a, k), itertools.islice(b, k)))


def uncovered(views: Iterable[MessageView], covered: Mapping[str, set[str]]) -> list[MessageView]:
    """Views whose current fingerprint no run has committed on.

    Args:
        views: the transcript's views.
        covered: message id -> fingerprints recorded in the coverage ledger.
    """
    return [v for v in views if v.fingerprint not in covered.get(v.message_id, set())]


def check_budget(budget_tokens: int) -> int:
    """Raises ValueError when the budget is below the floor (500 tokens)."""
    if budget_tokens < TOKEN_FLOOR:
        raise ValueError(f"graph.extractionChunkTokens is {budget_tokens}; the floor is {TOKEN_FLOOR}")
    return budget_tokens


def batch_uncovered(views: list[MessageView], budget_tokens: int) -> list[list[MessageView]]:
    """Greedy token-budgeted batches of the oldest uncovered teacher prose (seed §6, coverage).

    Args:
        views: uncovered message views, oldest first.
        budget_tokens: per-batch budget in estimated tokens (settings graph.extractionChunkTokens, >= 500).

    Returns:
        Batches in order; a single view larger than the budget forms its own batch.

    Raises:
        ValueError: budget_tokens below the floor.
    """
    check_budget(budget_tokens)
    batches: list[list[MessageView]] = []
    current: list[MessageView] = []
    used = 0
    for view in views:
        if current and used + view.tokens > budget_tokens:
            batches.append(current)
            current, used = [], 0
        current.append(view)
        used += view.tokens
    if current:
        batches.append(current)
    return batches


@dataclass(frozen=True)
class CoverageSummary:
    """How much of a lesson's teacher prose the graph has read (the session header's ring).

    Attributes:
        covered_tokens / uncovered_tokens: estimated tokens of covered / uncovered teacher prose.
        covered_messages / uncovered_messages: teacher-prose messages of each kind.
    """

    covered_tokens: int
    uncovered_tokens: int
    covered_messages: int
    uncovered_messages: int

    @property
    def total_tokens(self) -> int:
        return self.covered_tokens + self.uncovered_tokens

    def view(self) -> dict[str, int]:
        return {
            "coveredTokens": self.covered_tokens,
            "uncoveredTokens": self.uncovered_tokens,
            "coveredMessages": self.covered_messages,
            "uncoveredMessages": self.uncovered_messages,
            "totalTokens": self.total_tokens,
        }


def summarize(views: list[MessageView], covered: Mapping[str, set[str]]) -> CoverageSummary:
    """Covered and uncovered teacher prose of a transcript's views (same diff as `uncovered`)."""
    open_ = {v.message_id for v in uncovered(views, covered)}
    done = [v for v in views if v.message_id not in open_]
    todo = [v for v in views if v.message_id in open_]
    return CoverageSummary(
        covered_tokens=sum(v.tokens for v in done),
        uncovered_tokens=sum(v.tokens for v in todo),
        covered_messages=len(done),
        uncovered_messages=len(todo),
    )
