"""A scripted lesson model: plays the prober and the teacher by reading the history it is given.

Prober: quiz -> (answer) -> ask the goal -> (answer) -> probe_done.
Teacher: a cyclic plan first (refused), then a good plan -> a tagged teaching quiz -> (answer) ->
"Well done." Each step is chosen from what the history already holds, like a real model would.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

PROBE_QUIZ = {
    "question": "What is $2+2$?",
    "options": ["3", "4", "5"],
    "correct": 1,
    "explanation": "Two and two make four.",
}
GOAL = {"question": "What do you want to learn?", "options": ["Derivatives", "Integrals"]}
ASSESSMENT = {
    "topic": "derivatives",
    "goal": "understand derivatives",
    "floor": "arithmetic",
    "ceiling": "limits",
    "level": "beginner",
}
BAD_PLAN = {"title": "Derivatives", "mermaid": "graph TD\n a[Limits] --> b[Derivative]\n b --> a"}
GOOD_PLAN = {
    "title": "Derivatives",
    "mermaid": "graph TD\n limits[Limits] --> deriv[Derivative]\n deriv --> power[Power rule]",
}
TEACH_QUIZ = {
    "question": "The derivative of $x^2$?",
    "options": ["$x$", "$2x$", "$x^2$"],
    "correct": 1,
    "explanation": "Power rule: $2x$.",
    "node": "deriv",
}
LESSON_TITLE = "Derivatives from limits"
"""What the scripted model answers the naming side channel (server/agent/prompts/namer.md)."""
NAMER_MARK = "You name lessons"


def returns(messages: list[ModelMessage]) -> dict[str, object]:
    """tool name -> its latest return content, across the history."""
    out: dict[str, object] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and part.outcome == "success":
                    out[part.tool_name] = part.content
    return out


def retried(messages: list[ModelMessage], tool: str) -> bool:
    return any(
        isinstance(p, ToolReturnPart) and p.outcome == "retried" and p.tool_name == tool
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
    )


def call(name: str, args: dict, call_id: str) -> dict[int, DeltaToolCall]:
    return {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}


async def lesson_model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict]:
    if info.instructions and NAMER_MARK in info.instructions:  # the naming side channel
        yield LESSON_TITLE
        return
    done = returns(messages)
    if any(t.name == "probe_done" for t in info.output_tools):  # the prober
        if "quiz" not in done:
            yield "Let's see where you stand. "
            yield call("quiz", PROBE_QUIZ, "call_probe_quiz")
        elif "ask_user_question" not in done:
            yield call("ask_user_question", GOAL, "call_goal")
        else:
            yield call("probe_done", ASSESSMENT, "call_probe_done")
        return
    # the teacher
    if "plan_init" not in done:
        plan = GOOD_PLAN if retried(messages, "plan_init") else BAD_PLAN
        yield call("plan_init", plan, f"call_plan_{'good' if plan is GOOD_PLAN else 'bad'}")
    elif "quiz" not in done or done.get("quiz") == "" or _answered_quizzes(messages) < 2:
        yield "The derivative measures change. "
        yield call("quiz", TEACH_QUIZ, "call_teach_quiz")
    else:
        yield "Well done."


def _answered_quizzes(messages: list[ModelMessage]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.tool_name == "quiz" and p.outcome == "success"
    )
