"""The teacher's graph tools (`list_sessions`, `list_propositions`) read the learner's graph
through the `GraphReader` port (seed §6: the teacher probes, nothing is injected); here over its
fake (tests/fakes/graph.py, held to the real reader by tests/unit/library/
test_graph_reader_contract.py)."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.agent.classroom.lesson import build_teacher
from server.agent.classroom.tools import LessonDeps
from tests.fakes.graph import FakeGraphReader


def _scripted(calls: list[tuple[str, dict[str, Any]]]) -> tuple[FunctionModel, list[Any]]:
    """A teacher that makes `calls` (tool, args) in turn, then says "Done."; the second list
    collects what each returned (its content, or the retry prompt's text)."""
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, ToolReturnPart):
                    seen.append(part.content)
                if isinstance(part, RetryPromptPart):
                    seen.append(part.model_response())
        if len(seen) < len(calls):
            name, args = calls[len(seen)]
            return ModelResponse(parts=[ToolCallPart(name, json.dumps(args), tool_call_id=f"g{len(seen)}")])
        return ModelResponse(parts=[TextPart("Done.")])

    return FunctionModel(model), seen


def test_the_teacher_reads_sessions_and_their_propositions() -> None:
    graph = FakeGraphReader()
    graph.add("src_heap", "heap.md", "notes", [("n_1", "Heap", "A heap is a tree."), ("n_2", "Root", "Min.")])
    graph.add("c_1", "Sorting", "chat", [("n_3", "Heapsort", "Sorts by a heap.")])
    model, seen = _scripted([("list_sessions", {}), ("list_propositions", {"session": "src_heap"})])
    build_teacher(model, graph_tools=True, offline=None).run_sync(
        "what do I know?", deps=LessonDeps(graph=graph)
    )
    assert seen[0] == [
        {"id": "src_heap", "title": "heap.md", "kind": "notes", "propositions": 2},
        {"id": "c_1", "title": "Sorting", "kind": "chat", "propositions": 1},
    ]
    assert [p["name"] for p in seen[1]] == ["Heap", "Root"]
    assert graph.reads == [("sessions",), ("propositions", "src_heap")]


def test_switched_off_graph_tools_read_nothing() -> None:
    graph = FakeGraphReader()
    model, seen = _scripted([("list_sessions", {})])
    build_teacher(model, graph_tools=True, offline=None).run_sync("go", deps=LessonDeps(graph=None))
    assert isinstance(seen[0], str) and "switched off" in seen[0]
    assert graph.reads == []
