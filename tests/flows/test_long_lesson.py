"""A 10,000-message lesson over real HTTP (issue 15): the browser posts only the new message, the
model's request stays within the context budget, and the record on disk keeps every message."""

from __future__ import annotations

import json

from pydantic_ai.messages import ModelMessage, TextPart, ToolReturnPart, UserPromptPart

from server.core.context import DEFAULT_CONTEXT_TOKENS
from server.core.coverage import estimate_tokens
from tests.flows.conftest import Live, turn_body
from tests.unit.test_context import lesson


def request_tokens(messages: list[ModelMessage]) -> int:
    """The estimated tokens of a model request's history (instructions excluded)."""
    text = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart | ToolReturnPart):
                text.append(str(part.content))
            elif isinstance(part, TextPart):
                text.append(part.content)
    return estimate_tokens("".join(text))


def test_a_10000_message_lesson_turns_within_the_budget_and_loses_nothing(live: Live) -> None:
    chat_id = live.new_chat()
    path = live.data / "chats" / f"{chat_id}.json"
    record = json.loads(path.read_text())
    record["messages"] = lesson(10_000)
    path.write_text(json.dumps(record))
    body = turn_body(chat_id, "And the derivative of x cubed?", "m-new")
    assert len(json.dumps(body)) < 1_000  # the browser sends only what is new
    response = live.client.post("/api/chat", json=body)
    assert response.status_code == 200, response.text
    [seen] = live.script.seen
    assert request_tokens(seen) <= DEFAULT_CONTEXT_TOKENS
    first = seen[0].parts
    context = next(p.content for p in first if isinstance(p, UserPromptPart))
    assert "graph TD" in str(context) and "not shown" in str(context)  # the plan kept, the gap said
    assert "And the derivative of x cubed?" in str(seen[-1].parts[-1].content)  # type: ignore[union-attr]
    saved = live.record(chat_id)["messages"]  # the snapshot and its log (decision 0015)
    assert len(saved) == 10_002 and saved[-2]["id"] == "m-new"
    assert saved[:10_000] == lesson(10_000)  # the record is still the whole truth
