"""The scripted lesson spoken over the OpenAI chat-completions wire (for the stub server).

Prober: quiz -> (answer) -> ask the goal -> (answer) -> probe_done. Teacher: a cyclic plan
(refused), a good plan, a tagged teaching quiz, then "Well done." Each step is chosen from the
tool results the request's history already holds, like a model would.
"""

from __future__ import annotations

import json
from typing import Any

from tests.flows.lesson_script import (
    ASSESSMENT,
    BAD_PLAN,
    GOAL,
    GOOD_PLAN,
    LESSON_TITLE,
    NAMER_MARK,
    PROBE_QUIZ,
    TEACH_QUIZ,
)
from tests.stub_openai import Reply


def _history(body: dict[str, Any]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(tool_call_id -> tool name, [(tool name, result text)] in order)."""
    names: dict[str, str] = {}
    results: list[tuple[str, str]] = []
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
        if message.get("role") == "tool":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            results.append((names.get(message.get("tool_call_id", ""), "?"), text))
    return names, results


def lesson_reply(body: dict[str, Any]) -> Reply:
    system = " ".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system")
    if NAMER_MARK in system:  # the naming side channel
        return Reply(LESSON_TITLE)
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    _, results = _history(body)
    answered = [name for name, text in results if "INTERRUPTED" not in text and "failed" not in text]
    if "probe_done" in tools:  # the prober
        if "quiz" not in answered:
            return Reply("Let's see where you stand.", ("quiz", PROBE_QUIZ, "call_probe_quiz"))
        if "ask_user_question" not in answered:
            return Reply("", ("ask_user_question", GOAL, "call_goal"))
        return Reply("", ("probe_done", ASSESSMENT, "call_probe_done"))
    if "plan_init" not in answered:
        if any(name == "plan_init" for name, _ in results):
            return Reply("", ("plan_init", GOOD_PLAN, "call_plan_good"))
        return Reply("", ("plan_init", BAD_PLAN, "call_plan_bad"))
    teaching_answers = answered.count("quiz") - 1
    if teaching_answers < 1:
        return Reply(
            "The derivative measures how fast a function changes.", ("quiz", TEACH_QUIZ, "call_teach_quiz")
        )
    return Reply("Well done. Next: the power rule.")
