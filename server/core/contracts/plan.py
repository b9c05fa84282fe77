"""The plan tree: the session's dependency map, authored once with `plan_init` (seed §5)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from server.core.contracts.limits import Text200, Text8000

PlanStatus = Literal["current", "visited", "upcoming"]


class PlanNode(BaseModel):
    """A node: `id` as written in the mermaid source, `label` shown to the learner."""

    id: str
    label: str


class PlanTree(BaseModel):
    """A parsed, validated plan: a DAG whose edges point from prerequisite to dependent.

    Attributes:
        title: the lesson's title.
        nodes: in order of first appearance in the source.
        edges: (from, to) pairs, prerequisite -> dependent, in source order, no duplicates.
    """

    model_config = ConfigDict(extra="forbid")

    title: str
    nodes: list[PlanNode]
    edges: list[tuple[str, str]]


class PlanInitInput(BaseModel):
    """`plan_init` arguments.

    Attributes:
        title: a short title for the lesson plan (1-200 chars).
        mermaid: the plan as a mermaid flowchart subset, e.g.
            "graph TD\\n  limits[Limits] --> deriv[Derivative]\\n  deriv --> power[Power rule]".
    """

    model_config = ConfigDict(extra="forbid")

    title: Text200
    mermaid: Text8000


class PlanTeachInput(BaseModel):
    """`plan_teach` arguments: the plan node the teacher is about to teach.

    Attributes:
        node: the plan node's id (1-64 chars), as authored in `plan_init`.
    """

    model_config = ConfigDict(extra="forbid")

    node: str = Field(min_length=1, max_length=64)
