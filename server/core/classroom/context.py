"""What the model sees of a long lesson (issue 15; docs/decisions/0014-bounded-model-context.md).

The record stays the whole truth; the model's view of it is bounded by the role's context budget:
the most recent messages verbatim (whole messages, so a question and its answer, which live in
one assistant message's tool part, are never split), and before them a context message holding
the lesson plan and a running summary of the older messages. The summary is a derived, cached
artifact keyed by the messages it covers (`SummaryCover`), made by the cheap slot; when it is
missing or stale, the view still fits: the older messages are simply not shown, and the context
message says so (nothing is lost: the record keeps them).

Tokens are estimated as ceil(characters / 4) (`core.tokens.estimate_tokens`) over the compact
JSON of a message's parts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from server.core.tokens import estimate_tokens

JsonObj = dict[str, Any]

DEFAULT_CONTEXT_TOKENS = 24_000
"""The model's view of a lesson, in estimated tokens, when settings name no budget (small enough
for every hosted model in use and for 32k-context local models, leaving room for the reply)."""
SUMMARY_SHARE = 0.2
"""The share of the budget the context message (plan + summary) may take."""
SUMMARY_CHUNK_TOKENS = 4_000
"""How far the unsummarized, unshown part may grow before the summary is extended."""
RECENT_TURNS = 20
"""The learner turns a long lesson shows verbatim (a turn opens with a learner's message; steers
do not count): the summary covers the rest. The window may reach back to where the summary ends
while that is at most `2 * RECENT_TURNS` turns back and within the token budget."""
SUMMARY_STEP_TURNS = RECENT_TURNS // 2
"""How many learner turns the summary may fall behind the recent window before it is extended."""
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
        recent: where the window of the last `RECENT_TURNS` turns (within the token budget)
            begins, the point a new summary extends to; `start` is earlier when the window
            reaches back to the summary's end; 0 for a lesson shown whole.
    """

    messages: list[JsonObj]
    start: int
    summarized: int
    hidden: int
    tokens: int
    recent: int = 0


FILE_PART_TOKENS = 1_600
"""What one file part (a learner's image) costs a model, in tokens: a fixed estimate, not its
base64 length (a 1 MB image would count as ~330,000 tokens and push its message, and the
learner's words with it, out of the bounded view at once). 1,600 is about what a provider charges
for a ~1-megapixel image (Anthropic: width x height / 750; OpenAI high detail: 85 + 170 per
512-pixel tile); the offline model reads a one-line placeholder instead (issue 26)."""


def message_tokens(message: JsonObj) -> int:
    """A message's estimated tokens: its parts as compact JSON, each file part counted as
    FILE_PART_TOKENS instead of its bytes."""
    parts = message.get("parts", [])
    files = sum(1 for p in parts if isinstance(p, dict) and p.get("type") == "file")
    if not files:
        return estimate_tokens(orjson.dumps(parts).decode())
    rest = [p for p in parts if not (isinstance(p, dict) and p.get("type") == "file")]
    return estimate_tokens(orjson.dumps(rest).decode()) + files * FILE_PART_TOKENS


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


def is_turn(message: JsonObj) -> bool:
    """Whether `message` opens a learner's turn: a user message that is not a steer (a finished
    job's result, `metadata.steer`)."""
    if message.get("role") != "user":
        return False
    metadata = message.get("metadata")
    return not (isinstance(metadata, dict) and metadata.get("steer"))


def recent_start(
    messages: list[JsonObj], budget: int, sizes: list[int] | None = None, turns: int | None = RECENT_TURNS
) -> int:
    """Where the verbatim window begins: the earliest index whose suffix fits `budget` tokens and
    holds at most `turns` learner turns (None: no turn bound), moved forward to a learner's
    message when one is inside the window (a window opens with the learner speaking); the last
    message is always shown, whatever its size. Reads only the window's messages (and their
    `sizes`, computed here when not given)."""
    if not messages:
        return 0
    total = 0
    opened = 0
    start = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        size = sizes[index] if sizes is not None else message_tokens(message)
        if total + size > budget and start < len(messages):
            break
        if turns is not None and is_turn(message):
            if opened == turns:
                break
            opened += 1
        total += size
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
    turns: int = RECENT_TURNS,
) -> ModelView:
    """The bounded view of a transcript for one model request history.

    A lesson of at most `turns` learner turns within `budget` is shown whole. A longer one shows
    its last `turns` turns within the verbatim share of the budget, or, when a usable summary
    ends earlier but no more than `2 * turns` turns back and the window from there still fits,
    everything after the summary (so nothing is hidden while the summary catches up).

    Args:
        messages: the record's messages, oldest first (as the model must see them).
        budget: estimated tokens the whole view may take (`DEFAULT_CONTEXT_TOKENS`).
        plan: the lesson plan as text (kept in view when its message is left out).
        summary: the cached summary, used only while `messages[count - 1]` still has its `last_id`.
        sizes: `message_tokens` of each message, when the caller caches them (only the window's
            are read).
        turns: the learner turns shown verbatim (`RECENT_TURNS`).
    """
    if recent_start(messages, budget, sizes, turns) == 0:
        whole = sizes if sizes is not None else [message_tokens(m) for m in messages]
        return ModelView(list(messages), 0, 0, 0, sum(whole))
    context_budget = int(budget * SUMMARY_SHARE)
    verbatim = budget - context_budget
    recent = recent_start(messages, verbatim, sizes, turns)
    if recent == 0:  # fits the verbatim share but not beside a context message: shown whole
        whole = sizes if sizes is not None else [message_tokens(m) for m in messages]
        return ModelView(list(messages), 0, 0, 0, sum(whole))
    usable = (
        summary is not None
        and 0 < summary.count <= len(messages)
        and messages[summary.count - 1].get("id") == summary.last_id
    )
    count = summary.count if usable and summary is not None else 0
    start = recent
    if 0 < count < recent and recent_start(messages, verbatim, sizes, 2 * turns) <= count:
        start = count  # the window reaches back to the summary's end: nothing hidden
    summarized = count if count <= start else 0
    text = summary.text if summarized and summary is not None else None
    if text is not None and estimate_tokens(text) > context_budget:
        text = text[: context_budget * 4]  # a summary longer than its share is cut, never the window
    context = context_message(plan, text, summarized, start - summarized)
    shown = [context, *messages[start:]]
    window = sum(sizes[start:]) if sizes is not None else sum(message_tokens(m) for m in messages[start:])
    return ModelView(shown, start, summarized, start - summarized, message_tokens(context) + window, recent)


def summary_due(
    messages: list[JsonObj], view: ModelView, summary: SummaryCover | None, *, matches: bool = False
) -> int | None:
    """How many leading messages a new summary should cover (`view.recent`), or None when the
    cached one will do: due when the lesson is longer than its recent window and no summary
    exists, when the cached summary no longer matches the messages it covered (one was edited),
    or when it ends before the recent window by `SUMMARY_STEP_TURNS` learner turns or
    `SUMMARY_CHUNK_TOKENS` tokens. `matches`: the caller knows the summary matches
    `messages[:summary.count]` (its fingerprint, O(n), is not computed again)."""
    if view.recent == 0:
        return None
    stale = (
        summary is not None
        and not matches
        and (summary.count > len(messages) or summary.fingerprint != fingerprint(messages[: summary.count]))
    )
    if summary is None or stale or summary.count == 0:
        return view.recent
    if summary.count >= view.recent:
        return None
    behind = messages[summary.count : view.recent]
    turns = sum(1 for m in behind if is_turn(m))
    if turns >= SUMMARY_STEP_TURNS or sum(message_tokens(m) for m in behind) >= SUMMARY_CHUNK_TOKENS:
        return view.recent
    return None
