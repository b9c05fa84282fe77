"""`plan_teach`: the teacher names the plan node it teaches, so derived statuses follow teaching,
not only tagged quizzes (issue 18, item 9)."""

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
from server.agent.classroom.tools import LessonDeps, offline_tool_schema
from server.core.classroom.plan_tree import derive_statuses, parse_plan

PLAN = parse_plan(
    "Derivatives", "graph TD\n limits[Limits] --> deriv[Derivative]\n deriv --> power[Power rule]"
)
PLAN_MESSAGE = {
    "id": "m1",
    "role": "assistant",
    "parts": [
        {
            "type": "tool-plan_init",
            "toolCallId": "call_plan",
            "state": "output-available",
            "input": {"title": "Derivatives", "mermaid": "..."},
            "output": {"ok": True, "plan": PLAN.model_dump(mode="json")},
        }
    ],
}


def _scripted(nodes: list[str]) -> tuple[FunctionModel, list[Any]]:
    """A teacher that calls `plan_teach` with each of `nodes` in turn, then says "Done."; the
    second list collects what each call returned (a dict, or the retry prompt's text)."""
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, ToolReturnPart) and part.tool_name == "plan_teach":
                    seen.append(part.content)
                if isinstance(part, RetryPromptPart) and part.tool_name == "plan_teach":
                    seen.append(part.model_response())
        step = len(seen)
        if step < len(nodes):
            args = json.dumps({"node": nodes[step]})
            return ModelResponse(parts=[ToolCallPart("plan_teach", args, tool_call_id=f"t{step}")])
        return ModelResponse(parts=[TextPart("Done.")])

    return FunctionModel(model), seen


def test_plan_teach_accepts_a_plan_node_and_refuses_an_unknown_one() -> None:
    model, seen = _scripted(["limits", "nope"])
    agent = build_teacher(model, offline=None)
    agent.run_sync("go", deps=LessonDeps(messages=[PLAN_MESSAGE]))
    assert seen[0] == {"ok": True, "node": "limits"}
    assert isinstance(seen[1], str) and "no plan node 'nope'" in seen[1] and "limits, deriv, power" in seen[1]


def test_plan_teach_before_any_plan_is_refused() -> None:
    model, seen = _scripted(["limits"])
    build_teacher(model, offline=None).run_sync("go", deps=LessonDeps(messages=[]))
    assert isinstance(seen[0], str) and "no plan yet" in seen[0]


def _teach(call_id: str, node: str, state: str = "output-available") -> dict[str, Any]:
    return {"type": "tool-plan_teach", "toolCallId": call_id, "state": state, "input": {"node": node}}


def test_nodes_taught_without_a_quiz_are_visited_at_the_end() -> None:
    """The issue's end of lesson: every node taught, only one quizzed; none reads upcoming."""
    quiz = {
        "type": "tool-quiz",
        "toolCallId": "q1",
        "state": "output-available",
        "input": {"question": "?", "options": ["a", "b"], "correct": 0, "explanation": ".", "node": "deriv"},
    }
    teaching = {
        "id": "m2",
        "role": "assistant",
        "parts": [_teach("t1", "limits"), _teach("t2", "deriv"), quiz, _teach("t3", "power")],
    }
    assert derive_statuses(PLAN, [PLAN_MESSAGE, teaching]) == {
        "limits": "visited",
        "deriv": "visited",
        "power": "current",
    }
    refused = {"id": "m2", "role": "assistant", "parts": [_teach("t1", "power", "output-error")]}
    assert derive_statuses(PLAN, [PLAN_MESSAGE, refused])["power"] == "upcoming"


def test_the_offline_schema_pins_plan_teach_to_the_plan_ids() -> None:
    assert offline_tool_schema("plan_teach", []) is None
    _, schema = offline_tool_schema("plan_teach", ["limits", "deriv"]) or ("", {})
    assert schema["properties"]["node"] == {"enum": ["limits", "deriv"]}
