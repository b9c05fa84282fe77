"""The lesson's title, made by the cheap slot once the goal is known (seed §9, the naming side
channel). Agents are built per call (stateless)."""

from __future__ import annotations

import re

from pydantic_ai import Agent
from pydantic_ai.models import Model

from server.agent.prompts import load_prompt
from server.core.classroom.turns import TITLE_CHARS

_WRAPPERS = "\"'`*“”‘’ "


class BadTitle(ValueError):
    """The model's reply is not a usable title (empty, several lines, or too long)."""


def clean_title(text: str) -> str:
    """The reply as a title: one line, outer quotes/emphasis, a `Title:` label and a trailing
    period dropped, inner whitespace collapsed. Raises BadTitle when nothing usable remains, the
    reply runs over several non-empty lines, or it is longer than TITLE_CHARS characters."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) != 1:
        raise BadTitle(f"the title reply has {len(lines)} lines, expected one")
    title = re.sub(r"^\s*title\s*:\s*", "", lines[0], flags=re.IGNORECASE)
    title = re.sub(r"\s+", " ", title).strip(_WRAPPERS).rstrip(".").strip(_WRAPPERS)
    if not title:
        raise BadTitle("the title reply is empty")
    if len(title) > TITLE_CHARS:
        raise BadTitle(f"the title reply is {len(title)} characters, at most {TITLE_CHARS}")
    return title


async def name_lesson(model: Model, about: str) -> str:
    """A short title for a lesson described by `about` (the learner's goal and first words).

    Raises BadTitle for an unusable reply, and whatever the model raises."""
    agent: Agent[None, str] = Agent(model, instructions=load_prompt("namer"), name="namer")
    async with agent.run_stream(about) as result:
        text = await result.get_output()
    return clean_title(text)
