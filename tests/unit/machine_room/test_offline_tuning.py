"""The lesson agents fitted to the offline model (issue 9): a forced tool per request and lean
schemas for the offline model only; every other model sees the agents exactly as before."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.agent.classroom.lesson import build_prober, build_teacher
from server.agent.classroom.offline_fit import OfflineTuning, prober_next_tool
from server.agent.classroom.tools import _PLAN_PATTERN, LessonDeps, offline_tool_schema
from server.agent.machine_room.engine import WholeResponseModel
from server.core.classroom.plan_tree import parse_plan
from server.core.contracts.questions import QuizInput

Seen = dict[str, Any]


def recording_model(seen: Seen) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["settings"] = dict(info.model_settings or {})
        seen["tools"] = {t.name: t for t in [*info.function_tools, *info.output_tools]}
        return ModelResponse(parts=[TextPart("hello")])

    return FunctionModel(answer)


def run(agent: Any, messages: list[dict[str, Any]]) -> None:
    asyncio.run(agent.run("go on", deps=LessonDeps(messages=messages)))


def tool_part(name: str, output: Any = "ok") -> dict[str, Any]:
    return {
        "type": f"tool-{name}",
        "toolCallId": name,
        "state": "output-available",
        "input": {},
        "output": output,
    }


def test_hosted_models_see_the_agents_unchanged() -> None:
    seen: Seen = {}
    run(build_prober(recording_model(seen), max_tokens=100), [])
    assert "tool_choice" not in seen["settings"] and seen["settings"]["max_tokens"] == 100
    assert "correct: index into `options`" in json.dumps(seen["tools"]["quiz"].parameters_json_schema)
    seen.clear()
    run(build_teacher(recording_model(seen)), [])
    assert "tool_choice" not in seen["settings"]
    schema = seen["tools"]["plan_init"].parameters_json_schema
    assert "pattern" not in json.dumps(schema) and "lesson plan" in schema["description"]


def test_the_offline_model_is_detected_and_fitted() -> None:
    seen: Seen = {}
    offline: Model = WholeResponseModel(recording_model(seen))
    run(build_prober(offline, max_tokens=100), [])
    assert seen["settings"] == {"max_tokens": 100, "tool_choice": ["ask_user_question"]}
    assert seen["tools"]["quiz"].parameters_json_schema == offline_tool_schema("quiz", [])[1]  # type: ignore[index]
    seen.clear()
    run(build_teacher(offline), [])
    assert seen["settings"]["tool_choice"] == ["plan_init"]


@pytest.mark.parametrize(
    ("tuning", "forced", "lean"),
    [(OfflineTuning(force_tool=False), False, True), (OfflineTuning(short_schemas=False), True, False)],
)
def test_each_half_of_the_tuning_is_separate(tuning: OfflineTuning, forced: bool, lean: bool) -> None:
    seen: Seen = {}
    run(build_prober(recording_model(seen), offline=tuning), [])
    assert ("tool_choice" in seen["settings"]) is forced
    assert (seen["tools"]["quiz"].description.startswith("Ask one multiple-choice")) is lean


def test_the_offline_prober_asks_then_quizzes_then_files() -> None:
    assert prober_next_tool([]) == "ask_user_question"
    asked = [{"id": "a", "role": "assistant", "parts": [tool_part("ask_user_question")]}]
    assert prober_next_tool(asked) == "quiz"
    quizzes = [{"id": "b", "role": "assistant", "parts": [tool_part("quiz", {"kind": "quiz"})] * 2}]
    assert prober_next_tool(asked + quizzes) == "probe_done"


def test_the_teacher_quiz_schema_names_the_plan_nodes() -> None:
    source = "graph TD\n  a[A] --> b[B]"
    plan = {"ok": True, "plan": parse_plan("t", source).model_dump(mode="json")}
    messages = [{"id": "a", "role": "assistant", "parts": [tool_part("plan_init", plan)]}]
    seen: Seen = {}
    run(build_teacher(WholeResponseModel(recording_model(seen))), messages)
    assert seen["settings"]["tool_choice"] == ["quiz"]
    schema = seen["tools"]["quiz"].parameters_json_schema
    assert schema["properties"]["node"] == {"enum": ["a", "b"]} and "node" in schema["required"]


def test_what_the_lean_schemas_allow_passes_the_tools_validation() -> None:
    quiz = {"question": "q", "options": ["x", "y", "z"], "correct": 2, "explanation": "e", "node": "a"}
    assert QuizInput.model_validate(quiz).correct == 2
    written = r"graph TD\n  same[Same denominators] --> common\n  common --> add[Adding, unlike]"
    assert re.fullmatch(_PLAN_PATTERN, written)
    assert len(parse_plan("t", json.loads(f'"{written}"')).nodes) == 3
