"""What Practice's model stages submit (seed §7): each stage ends through one validated `submit`
tool whose arguments are one of these camelCase models; a refused submit goes back to the model
with the reasons, at most `TURNS` turns in all."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictInt
from pydantic.alias_generators import to_camel
from pydantic_ai.settings import ModelSettings

TURNS = 4
"""A stage's model turns in all: its first submit and at most 3 retries after refusals."""


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Group(_Wire):
    """One problem's share of the partition: its chain ids and a title."""

    chain_ids: list[str] = Field(min_length=1, description="chain ids, copied exactly")
    title: str = Field(min_length=1, max_length=120, description="a few words, giving nothing away")


class Partition(_Wire):
    """The partitioner's submit."""

    groups: list[Group] = Field(min_length=1, max_length=40)


class Generated(_Wire):
    """A generator's submit: commit before pose (statement, solution and rubric together)."""

    chain_ids: list[str] = Field(min_length=1, description="exactly the ids of YOUR TARGET")
    title: str = Field(min_length=1, max_length=120)
    statement: str = Field(min_length=20, max_length=20_000)
    solution: str = Field(min_length=20, max_length=30_000)
    rubric: str = Field(min_length=10, max_length=10_000)


class Graded(_Wire):
    """The grader's submit: an integer 0-10 and one or two sentences."""

    score: StrictInt = Field(ge=0, le=10, description="an integer from 0 to 10")
    comment: str = Field(min_length=1, max_length=1_000)


def stage_settings(max_tokens: int | None) -> ModelSettings | None:
    """The stage's model settings: its output-token cap when one is set (offline models)."""
    return ModelSettings(max_tokens=max_tokens) if max_tokens else None
