"""The agents the Library's model stages build, kept built and shared (issue 16)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models import Model

AGENT_CACHE_SIZE = 8
"""Agents kept built (issue 16): building one costs ≈ 20 ms of schema generation on the event
loop, per job before; an agent holds no run state, so runs share it."""
_agents: dict[tuple[object, ...], tuple[Model, Agent[Any, Any]]] = {}


def cached_agent(
    key: tuple[object, ...], model: Model, build: Callable[[], Agent[Any, Any]]
) -> Agent[Any, Any]:
    """The agent built for (`model`, `key`), built once per model object; at most
    `AGENT_CACHE_SIZE` kept (the oldest goes). The model is held with it, so its id is not reused."""
    full = (id(model), *key)
    hit = _agents.get(full)
    if hit is not None and hit[0] is model:
        return hit[1]
    agent = build()
    if len(_agents) >= AGENT_CACHE_SIZE:
        _agents.pop(next(iter(_agents)))
    _agents[full] = (model, agent)
    return agent
