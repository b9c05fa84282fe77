"""Role prompts as package data (read with importlib.resources)."""

from __future__ import annotations

from importlib import resources


def load_prompt(name: str) -> str:
    """The text of `server/agent/prompts/<name>.md`. Raises FileNotFoundError for an unknown role."""
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")
