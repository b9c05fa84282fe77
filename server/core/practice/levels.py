"""The three named levels of a problem set (seed §7), defined once and spoken by everything: the
agents' prompts (`render_params`), `GET /api/practice/levels` (the creation dialog, the exam
header). Discrete: there is no continuum between levels."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from server.core.contracts.practice import PracticeParams


@dataclass(frozen=True)
class Level:
    value: int | str
    name: str
    definition: str


RUNGS: tuple[Level, ...] = (
    Level(0, "Worked example", "A fully solved problem to study, with its reasoning laid out step by step."),
    Level(1, "Completion", "A solution with a decisive step left out, for you to supply and justify."),
    Level(2, "Direct exercise", "A problem the ideas solve directly, once you see which ones apply."),
    Level(3, "Composition", "A problem that needs several ideas combined in the right order."),
    Level(4, "Path-finding", "An open problem where finding the route through the ideas is the work."),
)
"""The ladder rung, the main axis: it names the CLASS of problem the generator builds."""

CUES: tuple[Level, ...] = (
    Level(0, "Lesson context", "The textbook shape, in the teaching's own framing and examples."),
    Level(1, "Adjacent context", "A genuinely new situation built from the teaching's own world."),
    Level(2, "Far context", "The edge of the recognisable: the idea still applies, found only by looking."),
)
"""The cue distance: how far the situation sits from where the propositions were taught."""

PRESENTATIONS: tuple[Level, ...] = (
    Level("theory", "Theory", "Posed in the subject's own terms."),
    Level(
        "application", "Application", "A concrete worldly affair in which the structure appears in the wild."
    ),
)
"""The presentation dresses the situation; it never changes the rung or the cue distance."""

DEFAULTS = PracticeParams()
"""Rung 2 Direct exercise, cue 1 Adjacent context, Theory."""


def level_names(params: PracticeParams) -> tuple[str, str, str]:
    """(rung name, cue name, presentation name)."""
    presentation = next(p for p in PRESENTATIONS if p.value == params.presentation)
    return RUNGS[params.rung].name, CUES[params.cue].name, presentation.name


def render_params(params: PracticeParams) -> str:
    """The levels as the agents read them: each named, with its definition."""
    presentation = next(p for p in PRESENTATIONS if p.value == params.presentation)
    rung, cue = RUNGS[params.rung], CUES[params.cue]
    return (
        f"LADDER RUNG {rung.value} — {rung.name}: {rung.definition}\n"
        f"CUE DISTANCE {cue.value} — {cue.name}: {cue.definition}\n"
        f"PRESENTATION — {presentation.name}: {presentation.definition}"
    )


def levels_view() -> dict[str, object]:
    """`GET /api/practice/levels`."""

    def rows(levels: tuple[Level, ...]) -> list[dict[str, object]]:
        return [{"value": lv.value, "name": lv.name, "definition": lv.definition} for lv in levels]

    return {
        "rungs": rows(RUNGS),
        "cues": rows(CUES),
        "presentations": rows(PRESENTATIONS),
        "defaults": DEFAULTS.model_dump(by_alias=True),
    }


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
"""English month abbreviations, not the locale's (`%b`), so every machine titles alike."""


def default_title(now: datetime) -> str:
    """The title of a set created without one, dated by `now`'s UTC day: "Practice — 1 Dec 2026".

    Built by hand: `strftime("%-d")` raises on Windows and `%b` follows the locale. The frontend's
    `defaultSetTitle` (frontend/src/core/practice/practice.ts) says the same. A naive `now` is taken as UTC.
    """
    day = now.astimezone(UTC) if now.tzinfo else now
    return f"Practice — {day.day} {MONTHS[day.month - 1]} {day.year}"
