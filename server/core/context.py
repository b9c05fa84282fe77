"""What the model sees of a long lesson (issue 15; docs/decisions/0014-bounded-model-context.md).

The record stays the whole truth; the model's view of it is bounded by the role's context budget:
the most recent messages verbatim (whole messages, so a question and its answer, which live in
one assistant message's tool part, are never split), and before them a context message holding
the lesson plan and a running summary of the older messages. The summary is a derived, cached
artifact keyed by the messages it covers (`SummaryCover`), made by the cheap slot; when it is
missing or stale, the view still fits: the older messages are simply not shown, and the context
message says so (nothing is lost: the record keeps them).

Tokens are estimated as ceil(characters / 4) (`core.coverage.estimate_tokens`) over the compact
JSON of a message's parts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from server.core.coverage import estimate_tokens

JsonObj = dict[str, Any]

DEFAULT_CONTEXT_TOKENS = 24_000
"""The model's view of a lesson, in estimated tokens, when settings name no budget (small enough
for every hosted model in use and for 32k-context local models, leaving room for the reply)."""
SUMMARY_SHARE = 0.2
"""The share of the budget the context message (plan + summary) may take."""
SUMMARY_CHUNK_TOKENS = 4_000
"""How far the unsummarized, unshown part may grow before the summary is extended."""
CONTEXT_MESSAGE_ID = "context_summary"


@dataclass(frozen=True)
class SummaryCover:
    """A cached summary of `messages[:count]`: `fingerprint` is theirs when it was made, `last_id`
    the id of `messages[count - 1]` (the turn's cheap check; the full one runs in the background)."""

    count: int
    fingerprint: str
    last_id: str
    text: str


@dataclass(frozen=True)
class ModelView:
    """The messages a turn's model reads.

    Attributes:
        messages: the context message (when anything older is left out), then the recent ones.
        start: index in the record of the first message shown verbatim.
        summarized: how many of the older messages the summary covers (0 when none is used).
        hidden: older messages neither shown nor summarized (the summary is missing or stale).
        tokens: the view's estimated size.
    """

    messages: list[JsonObj]
    start: int
    summarized: int
    hidden: int
    tokens: int


def message_tokens(message: JsonObj) -> int:
    """A message's estimated tokens (its parts as compact JSON)."""
    return estimate_tokens(orjson.dumps(message.get("parts", [])).decode())


def fingerprint(messages: list[JsonObj]) -> str:
    """SHA-256 over each message's id, part count and text length: a summary of them is stale when
    this changes (a message replaced, removed, or its text edited to another length)."""
    digest = hashlib.sha256()
    for message in messages:
        parts = message.get("parts", [])
        chars = sum(len(str(p.get("text", ""))) for p in parts if isinstance(p, dict))
        digest.update(f"{message.get('id')}:{len(parts)}:{chars}|".encode())
    return digest.hexdigest()


def plan_text(messages: list[JsonObj]) -> str | None:
    """The lesson plan as the teacher authored it (title and mermaid of the first successful
    `plan_init`), or None."""
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for part in message.get("parts", []):
            if part.get("type") == "tool-plan_init" and part.get("state") == "output-available":
                plan = part.get("input") or {}
                output = part.get("output")
                if isinstance(output, dict) and output.get("ok"):
                    return f"{plan.get('title', '')}\n{plan.get('mermaid', '')}".strip()
    return None


def recent_start(messages: list[JsonObj], budget: int, sizes: list[int] | None = None) -> int:
    """Where the verbatim window begins: the earliest index whose suffix fits `budget` tokens,
    moved forward to a learner's message when one is inside the window (a window opens with the
    learner speaking); the last message is always shown, whatever its size."""
    if not messages:
        return 0
    sizes = sizes if sizes is not None else [message_tokens(m) for m in messages]
    total = 0
    start = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        if total + sizes[index] > budget and start < len(messages):
            break
        total += sizes[index]
        start = index
    if start == 0:
        return 0
    for index in range(start, len(messages) - 1):
        if messages[index].get("role") == "user":
            return index
    return start


def context_message(plan: str | None, summary: str | None, summarized: int, hidden: int) -> JsonObj:
    """The user-role message that stands for everything before the verbatim window."""
    lines = ["[lesson context: the earlier part of this lesson, condensed for you]"]
    if plan:
        lines.append("The lesson plan you authored (plan_init):\n" + plan)
    if summary:
        lines.append(f"Summary of the first {summarized} messages:\n{summary}")
    if hidden:
        lines.append(
            f"{hidden} earlier messages are not shown here; nothing is lost (the lesson record keeps "
            "them), but do not claim to remember their details."
        )
    return {"id": CONTEXT_MESSAGE_ID, "role": "user", "parts": [{"type": "text", "text": "\n\n".join(lines)}]}


def model_view(
    messages: list[JsonObj],
    *,
    budget: int = DEFAULT_CONTEXT_TOKENS,
    plan: str | None = None,
    summary: SummaryCover | None = None,
    sizes: list[int] | None = None,
) -> ModelView:
    """The bounded view of a transcript for one model request history.

    Args:
        messages: the record's messages, oldest first (as the model must see them).
        budget: estimated tokens the whole view may take (`DEFAULT_CONTEXT_TOKENS`).
        plan: the lesson plan as text (kept in view when its message is left out).
        summary: the cached summary, used only when its fingerprint matches the messages it covers.
        sizes: `message_tokens` of each message, when the caller caches them.
    """
    sizes = sizes if sizes is not None else [message_tokens(m) for m in messages]
    total = sum(sizes)
    if total <= budget:
        return ModelView(list(messages), 0, 0, 0, total)
    context_budget = int(budget * SUMMARY_SHARE)
    start = recent_start(messages, budget - context_budget, sizes)
    if start == 0:
        return ModelView(list(messages), 0, 0, 0, total)
    usable = (
        summary is not None
        and 0 < summary.count <= start
        and messages[summary.count - 1].get("id") == summary.last_id
    )
    summarized = summary.count if usable and summary is not None else 0
    text = summary.text if usable and summary is not None else None
    if text is not None and estimate_tokens(text) > context_budget:
        text = text[: context_budget * 4]  # a summary longer than its share is cut, never the window
    context = context_message(plan, text, summarized, start - summarized)
    shown = [context, *messages[start:]]
    return ModelView(
        shown, start, summarized, start - summarized, message_tokens(context) + sum(sizes[start:])
    )


def summary_due(messages: list[JsonObj], view: ModelView, summary: SummaryCover | None) -> int | None:
    """How many leading messages a new summary should cover, or None when the cached one will do:
    due when the messages left out of view and not covered reach `SUMMARY_CHUNK_TOKENS`, or when the
    cached summary no longer matches the messages it covered (one was edited)."""
    if view.start == 0:
        return None
    stale = summary is not None and (
        summary.count > len(messages) or summary.fingerprint != fingerprint(messages[: summary.count])
    )
    covered = 0 if summary is None or stale else summary.count
    uncovered = sum(message_tokens(m) for m in messages[covered : view.start])
    if stale or uncovered >= SUMMARY_CHUNK_TOKENS or (covered == 0 and view.start > 0):
        return view.start
    return None
