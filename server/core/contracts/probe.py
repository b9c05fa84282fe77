"""The probe assessment filed by `probe_done` (seed §5: the prober hands over to the teacher)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from server.core.contracts.limits import Text300, Text1000, Text2000

Level = Literal["none", "beginner", "intermediate", "advanced", "expert"]


class ProbeAssessment(BaseModel):
    """What the prober found.

    Attributes:
        topic: what the learner wants to learn (1-300 chars).
        goal: the learner's goal in their own terms (1-1000 chars).
        floor: what they reliably know, the highest rung they answered correctly.
        ceiling: where they break down, the first rung they missed.
        level: an overall placement.
        notes: anything else the teacher should know (misconceptions seen, preferences).
    """

    model_config = ConfigDict(extra="forbid")

    topic: Text300
    goal: Text1000
    floor: Text1000
    ceiling: Text1000
    level: Level
    notes: Text2000 = ""
