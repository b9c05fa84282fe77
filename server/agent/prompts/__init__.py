"""Role prompts as package data (read with importlib.resources)."""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def load_prompt(name: str) -> str:
    """The text of `server/agent/prompts/<name>.md`. Raises FileNotFoundError for an unknown role.
    Read once per process (package data does not change under a running server; every extraction
    job asks for its prompts, and a file read on the event loop is a stall under load)."""
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")
