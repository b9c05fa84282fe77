"""The running summary of a long lesson (issue 15), made by the cheap slot: previous summary +
the next part of the transcript -> the new summary. Agents are built per call (stateless)."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic_ai import Agent
from pydantic_ai.models import Model

from server.agent.prompts import load_prompt

PART_CHARS = 1_200
"""Characters kept of one part (a long tool input or output is cut, marked with …)."""


def _clip(text: str) -> str:
    return text if len(text) <= PART_CHARS else text[: PART_CHARS - 1] + "…"


def transcript_text(messages: list[dict[str, Any]]) -> str:
    """A lesson part as plain lines: who said what, and each tool call with its input and result."""
    lines: list[str] = []
    for message in messages:
        who = "Teacher" if message.get("role") == "assistant" else "Learner"
        for part in message.get("parts", []):
            kind = str(part.get("type", ""))
            if kind == "text" and str(part.get("text", "")).strip():
                lines.append(f"{who}: {_clip(str(part['text']))}")
            elif kind.startswith("tool-"):
                args = _clip(orjson.dumps(part.get("input")).decode())
                result = (
                    _clip(orjson.dumps(part.get("output")).decode()) if "output" in part else "(no result)"
                )
                lines.append(f"{who} used {kind[5:]}: {args} -> {result}")
    return "\n".join(lines)


async def summarize(model: Model, previous: str | None, messages: list[dict[str, Any]]) -> tuple[str, Any]:
    """The new running summary and the run's usage. Raises what the model raises (the caller
    keeps the old summary: the lesson's view then shows fewer messages, nothing is lost)."""
    agent: Agent[None, str] = Agent(model, instructions=load_prompt("summarizer"), name="summarizer")
    prompt = (
        f"THE SUMMARY SO FAR:\n{previous or '(none yet)'}\n\n"
        f"THE NEXT PART OF THE LESSON:\n{transcript_text(messages)}"
    )
    result = await agent.run(prompt)
    return result.output.strip(), result.usage
