"""Reading and amending the transcript's tool parts (seed §5, the turn contract).

A tool part is `{"type": "tool-<name>", "toolCallId", "state", "input", "output"?}` in an
assistant UIMessage. States: input-streaming, input-available (called, no result yet),
output-available, output-error.
"""

from __future__ import annotations

import copy
from typing import Any

from server.core.contracts.chat import text_of
from server.core.contracts.plan import PlanTree
from server.core.contracts.probe import ProbeAssessment
from server.core.contracts.questions import QUESTION_TOOLS

JsonObj = dict[str, Any]
INTERRUPTED = "INTERRUPTED: the learner did not answer this; they continued the conversation instead."


def tool_name(part: JsonObj) -> str | None:
    """`quiz` for a `tool-quiz` part (or a dynamic-tool part's toolName); None for other parts."""
    kind = str(part.get("type", ""))
    if kind == "dynamic-tool":
        return str(part.get("toolName"))
    return kind[len("tool-") :] if kind.startswith("tool-") else None


def is_dangling(part: JsonObj) -> bool:
    return tool_name(part) is not None and part.get("state") in ("input-available", "input-streaming")


def pending_questions(messages: list[JsonObj]) -> list[JsonObj]:
    """Question tool calls awaiting the learner: unanswered quiz/ask parts of the last message,
    when that message is the assistant's (a later learner message interrupts them)."""
    if not messages or messages[-1].get("role") != "assistant":
        return []
    return [p for p in messages[-1].get("parts", []) if tool_name(p) in QUESTION_TOOLS and is_dangling(p)]


def awaits_continuation(messages: list[JsonObj]) -> bool:
    """Whether the learner's answers were saved but the teacher never went on: the last message is
    the assistant's, none of its questions is pending, and nothing follows its last answered
    question (the continuation failed before its first content: a 503, a rate limit). Such a
    lesson is continued by re-posting that message (issue 12, item 2); once the continuation
    wrote anything, it no longer awaits one, so a second retry is refused (exactly once)."""
    if not messages or messages[-1].get("role") != "assistant" or pending_questions(messages):
        return False
    parts = [p for p in messages[-1].get("parts", []) if p.get("type") != "step-start"]
    return (
        bool(parts)
        and tool_name(parts[-1]) in QUESTION_TOOLS
        and parts[-1].get("state") == "output-available"
    )


def for_model(messages: list[JsonObj]) -> list[JsonObj]:
    """The transcript as the model must see it: every dangling tool call gets a synthesized
    INTERRUPTED result (no unanswered call may reach a provider). The record is not changed:
    a message with a dangling call is copied; every other message is the very same object (so
    per-message caches keyed by identity keep working, issue 15)."""
    out = list(messages)
    for index, message in enumerate(out):
        if message.get("role") != "assistant" or not any(is_dangling(p) for p in message.get("parts", [])):
            continue
        message = out[index] = copy.deepcopy(message)
        for part in message.get("parts", []):
            if is_dangling(part):
                part["state"] = "output-available"
                part["output"] = INTERRUPTED
                if part.get("input") is None:
                    part["input"] = {}
    return out


def probe_assessment(messages: list[JsonObj]) -> ProbeAssessment | None:
    """The assessment of the first successful `probe_done` call, or None."""
    for message in messages:
        for part in message.get("parts", []) if message.get("role") == "assistant" else []:
            if tool_name(part) == "probe_done" and part.get("state") == "output-available":
                try:
                    return ProbeAssessment.model_validate(part.get("input"))
                except ValueError:
                    continue
    return None


def has_plan(messages: list[JsonObj]) -> bool:
    for message in messages:
        for part in message.get("parts", []) if message.get("role") == "assistant" else []:
            output = part.get("output")
            if (
                tool_name(part) == "plan_init"
                and part.get("state") == "output-available"
                and isinstance(output, dict)
                and isinstance(output.get("plan"), dict)
            ):
                try:
                    PlanTree.model_validate(output["plan"])
                except ValueError:
                    continue
                return True
    return False


NAMING_INPUT_CHARS = 600
"""Characters of the learner's first message given to the namer, at most."""


def naming_brief(messages: list[JsonObj]) -> str | None:
    """What the naming side channel tells the namer once the goal is known (the prober filed
    `probe_done`): the assessment's topic and goal and the learner's first message; None before.
    """
    assessment = probe_assessment(messages)
    if assessment is None:
        return None
    first = next((text_of(m).strip() for m in messages if m.get("role") == "user" and text_of(m).strip()), "")
    lines = [f"Topic: {assessment.topic}", f"Goal: {assessment.goal}"]
    if first:
        lines.append(f"The learner's first message: {first[:NAMING_INPUT_CHARS]}")
    return "\n".join(lines)
