"""The naming side channel (issue 18, item 7): once the goal is known the cheap slot titles the
lesson; a failure leaves the title alone; the learner's title always wins."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.agent.classroom.namer import BadTitle, clean_title
from server.core.contracts.chat import ChatRecord
from server.core.contracts.models import ModelRef, ResolvedModel
from server.core.events import EventBus
from server.services.classroom.naming import MAX_TRIES, NamingService
from server.store.classroom.chats import FileChatStore
from tests.scripts.classroom import ASSESSMENT

RESOLVED = ResolvedModel(provider="openai-compatible", model="scripted")
LEARNER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Teach me derivatives"}]}
PROBED = {
    "id": "a1",
    "role": "assistant",
    "parts": [
        {"type": "tool-probe_done", "toolCallId": "p", "state": "output-available", "input": ASSESSMENT}
    ],
}


def record(messages: list[dict[str, Any]], **extra: Any) -> ChatRecord:
    fields: dict[str, Any] = {"title": "Teach me derivatives", **extra}
    return ChatRecord(
        id="c_1",
        created_at="2026-12-01T00:00:00Z",
        updated_at="2026-12-01T00:00:00Z",
        model=ModelRef(provider="openai-compatible", model="scripted"),
        messages=messages,
        **fields,
    )


class Harness:
    def __init__(self, tmp_path: Path, reply: Any) -> None:
        self.store = FileChatStore(tmp_path)
        self.events = EventBus()
        self.emitted: list[str] = []
        self.events.subscribe(lambda name, _data: self.emitted.append(name))
        self.prompts: list[str] = []

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            self.prompts.append(str(messages[-1].parts[-1].content))  # type: ignore[union-attr]
            text = reply() if callable(reply) else reply
            yield text

        async def cheap() -> tuple[ResolvedModel, FunctionModel]:
            return RESOLVED, FunctionModel(stream_function=stream)

        self.naming = NamingService(self.store, cheap, self.events)

    async def settle(self, rec: ChatRecord) -> ChatRecord:
        self.store.save(rec)
        self.naming.settled(rec)
        task = self.naming.running.get(rec.id)
        if task is not None:
            await task
        saved = self.store.get(rec.id)
        assert saved is not None
        return saved


def test_the_goal_known_the_lesson_gets_a_generated_title(tmp_path: Path) -> None:
    async def go() -> None:
        h = Harness(tmp_path, '"Derivatives from limits."')
        saved = await h.settle(record([LEARNER]))  # the goal is not known yet: nothing asked
        assert h.prompts == [] and saved.title == "Teach me derivatives"
        saved = await h.settle(record([LEARNER, PROBED]))
        assert (saved.title, saved.title_by) == ("Derivatives from limits", "model")
        assert h.emitted == ["chats-changed"]
        assert "Goal: understand derivatives" in h.prompts[0] and "Teach me derivatives" in h.prompts[0]
        await h.settle(saved)  # named once: never asked again
        assert len(h.prompts) == 1

    asyncio.run(go())


@pytest.mark.parametrize("failure", ["raises", "three lines", "empty"])
def test_a_naming_failure_keeps_the_title_and_says_nothing(tmp_path: Path, failure: str) -> None:
    def reply() -> str:
        if failure == "raises":
            raise RuntimeError("the cheap slot is down")
        return "One\nTwo\nThree" if failure == "three lines" else "  "

    async def go() -> None:
        h = Harness(tmp_path, reply)
        saved = await h.settle(record([LEARNER, PROBED]))
        assert (saved.title, saved.title_by) == ("Teach me derivatives", "auto")
        assert h.emitted == []
        for _ in range(MAX_TRIES + 1):  # later turns retry, up to MAX_TRIES attempts in all
            await h.settle(saved)
        assert len(h.prompts) == MAX_TRIES

    asyncio.run(go())


def test_the_learners_title_wins(tmp_path: Path) -> None:
    async def go() -> None:
        h = Harness(tmp_path, "Derivatives from limits")
        saved = await h.settle(record([LEARNER, PROBED], title="My calculus", title_by="learner"))
        assert h.prompts == [] and saved.title == "My calculus"

        # renamed while the namer was thinking: the rename stays
        def rename_meanwhile() -> str:
            current = h2.store.get("c_1")
            assert current is not None
            h2.store.save(current.model_copy(update={"title": "Mine", "title_by": "learner"}))
            return "Derivatives from limits"

        h2 = Harness(tmp_path / "two", rename_meanwhile)
        saved = await h2.settle(record([LEARNER, PROBED]))
        assert (saved.title, saved.title_by) == ("Mine", "learner") and len(h2.prompts) == 1
        assert h2.emitted == []

    asyncio.run(go())


def test_clean_title() -> None:
    assert clean_title("Title: **Limits and continuity.**") == "Limits and continuity"
    assert clean_title("\n  “Power rule”  \n") == "Power rule"
    with pytest.raises(BadTitle):
        clean_title("x" * 61)
