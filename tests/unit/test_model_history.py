"""ModelHistory (issue 15): each UIMessage converted once per lesson; every turn gets message
objects and part lists of its own, equal to a fresh conversion, so a run never changes the cache."""

from __future__ import annotations

from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from pydantic_ai.ui.vercel_ai.request_types import UIMessage

from server.agent.classroom.lesson import ModelHistory
from tests.unit.test_context import lesson


def shape(messages: list) -> list:
    """What the model reads (timestamps aside: each conversion stamps its own)."""
    return [
        (type(m).__name__, [(type(p).__name__, str(getattr(p, "content", p))) for p in m.parts])
        for m in messages
    ]


def test_a_conversion_is_cached_by_identity_and_each_turn_gets_its_own_copies() -> None:
    messages = lesson(40)
    fresh = shape([c for m in messages for c in VercelAIAdapter.load_messages([UIMessage.model_validate(m)])])
    history = ModelHistory()
    first = history.convert(messages)
    assert shape(first) == fresh
    first[-1].parts.append(first[0].parts[0])  # a run appends to what it was given
    first[-2].parts.clear()
    second = history.convert(messages)
    assert shape(second) == fresh
    assert all(a is not b and a.parts is not b.parts for a, b in zip(first, second, strict=True))
    edited = [*messages[:-1], {**messages[-1], "parts": [{"type": "text", "text": "edited"}]}]
    third = history.convert(edited)
    assert shape(third)[:-1] == fresh[:-1] and "edited" in str(third[-1].parts)
