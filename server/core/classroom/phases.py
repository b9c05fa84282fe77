"""Lesson phases, folded from the transcript: probe -> plan -> teach, strictly (seed §5)."""

from __future__ import annotations

from typing import Any, Literal

from server.core.transcript import has_plan, probe_assessment

Phase = Literal["probe", "plan", "teach"]
Role = Literal["prober", "teacher"]


def phase_of(messages: list[dict[str, Any]]) -> Phase:
    """`probe` until a `probe_done` succeeded; then `plan` until a `plan_init` succeeded; then
    `teach`. A plan authored before the probe finished does not skip the probe."""
    if probe_assessment(messages) is None:
        return "probe"
    return "teach" if has_plan(messages) else "plan"


def role_for(phase: Phase) -> Role:
    """The prober runs the probe phase; the teacher every later one."""
    return "prober" if phase == "probe" else "teacher"
