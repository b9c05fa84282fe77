"""`plan_init` is author-once (seed §5: "the formal plan tree is author-once"; issue 30 item 6):
a second plan is refused back to the model — in the run that authored the first, and in any later
turn of the lesson — and the lesson's plan stays the first one, in the saved record too."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
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
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from server.agent.classroom.lesson import build_teacher
from server.agent.classroom.tools import LessonDeps
from server.core.classroom.plan_tree import plan_of
from tests.flows.conftest import Live, sse_chunks, turn_body
from tests.flows.workbench.test_workbench import teaching_record

FIRST = {"title": "Derivatives", "mermaid": "graph TD\n limits[Limits] --> deriv[Derivative]"}
SECOND = {"title": "Integrals", "mermaid": "graph TD\n area[Area] --> ftc[Fundamental theorem]"}
REFUSAL = "the plan is already authored and cannot change; teach it now"


def plan_twice(plans: list[dict[str, str]]) -> tuple[FunctionModel, list[Any]]:
    """A teacher that calls `plan_init` with each of `plans` in turn, then says "Teaching."; the
    list collects what each call got back (the plan, or the retry prompt's text)."""
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, ToolReturnPart) and part.tool_name == "plan_init":
                    seen.append(part.content)
                if isinstance(part, RetryPromptPart) and part.tool_name == "plan_init":
                    seen.append(part.model_response())
        if len(seen) < len(plans):
            args = json.dumps(plans[len(seen)])
            return ModelResponse(parts=[ToolCallPart("plan_init", args, tool_call_id=f"p{len(seen)}")])
        return ModelResponse(parts=[TextPart("Teaching.")])

    return FunctionModel(model), seen


def test_a_second_plan_in_the_same_run_is_refused_and_the_first_kept() -> None:
    model, seen = plan_twice([FIRST, SECOND])
    deps = LessonDeps(messages=[])
    build_teacher(model, offline=None).run_sync("go", deps=deps)
    assert seen[0]["ok"] is True and seen[0]["plan"]["title"] == "Derivatives"
    assert isinstance(seen[1], str) and REFUSAL in seen[1]
    assert deps.plan_nodes == ["limits", "deriv"]  # plan_teach still reads the first plan


def test_a_plan_in_a_later_turn_is_refused_even_a_valid_one() -> None:
    model, seen = plan_twice([SECOND])
    build_teacher(model, offline=None).run_sync("go", deps=LessonDeps(messages=teaching_record("c")))
    assert len(seen) == 1 and isinstance(seen[0], str) and REFUSAL in seen[0]


def test_over_http_the_saved_lesson_keeps_its_first_plan(live: Live) -> None:
    chat_id = live.new_chat()
    store = live.services.stores.chats
    record = store.get(chat_id)
    assert record is not None
    store.save(record.model_copy(update={"messages": teaching_record(chat_id), "title": "Derivatives"}))
    before = plan_of(live.record(chat_id)["messages"])
    assert before is not None

    refusals: list[str] = []

    async def replan(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if "plan_init" not in {t.name for t in info.function_tools}:
            yield "Derivatives"  # a side channel (the lesson's naming) on the same model
            return
        last = messages[-1]
        answers = [p for p in last.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))]
        if not answers:  # tries to replace the plan with another, valid one
            call = DeltaToolCall(name="plan_init", json_args=json.dumps(SECOND), tool_call_id="call_replan")
            yield {0: call}
            return
        refusals.extend(str(p.content) for p in answers if p.tool_name == "plan_init")
        yield "Let us go on with limits."  # read the refusal, teaches on

    live.script.delegate = replan
    response = live.client.post("/api/chat", json=turn_body(chat_id, "Let us do integrals instead", mid="u1"))
    assert response.status_code == 200, response.text
    assert sse_chunks(response.text)[-1] == "[DONE]"
    messages = live.record(chat_id)["messages"]
    assert plan_of(messages) == before  # the lesson's plan is still the first one
    replans = [p for m in messages for p in m["parts"] if p.get("toolCallId") == "call_replan"]
    assert [(p["state"], p["errorText"]) for p in replans] == [("output-error", REFUSAL)]  # saved refused
    assert refusals == [REFUSAL]  # the model was told why, in the tool's answer
    assert messages[-1]["parts"][-1]["text"] == "Let us go on with limits."
