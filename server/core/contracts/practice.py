"""Practice contracts (seed §7): problem sets frozen at creation, one attempt per problem, grades
that never touch the graph. The JSON of `data/practice/<id>.json` and of `/api/practice/*`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt, field_validator

from server.core.contracts.models import Camel

SetStatus = Literal["partitioning", "generating", "ready", "error"]
ProblemStatus = Literal["pending", "generating", "ready", "error"]
GradeStatus = Literal["none", "grading", "graded", "interrupted", "error"]
Presentation = Literal["theory", "application"]

MAX_NOTE = 2_000
"""Characters of the learner's note to the generators (trimmed first)."""
MAX_ANSWER = 20_000
"""Characters of one answer."""
MAX_TITLE = 200


class PracticeParams(Camel):
    """The three named levels (seed §7): never a number to interpolate. A float or an unknown
    level is refused (400)."""

    rung: StrictInt = Field(default=2, ge=0, le=4, description="ladder rung 0-4 (core/practice/levels.py)")
    cue: StrictInt = Field(default=1, ge=0, le=2, description="cue distance 0-2")
    presentation: Presentation = "theory"


class PracticeProposition(Camel):
    """A proposition as the set froze it."""

    id: str
    name: str
    statement: str


class PracticeChain(Camel):
    """A chain of the set: a stored argument (its `arg_` id) or a singleton (`premises` empty, the
    id is `single_<node id>`)."""

    id: str
    premises: list[str] = Field(default_factory=list)
    conclusion: str


class Grade(Camel):
    """The grader's verdict: an integer 0-10 and one or two sentences."""

    score: StrictInt = Field(ge=0, le=10)
    comment: str = Field(min_length=1, max_length=1_000)


class Problem(Camel):
    """One problem: its target chains, then (generation) statement, solution and rubric arriving in
    one submit (commit before pose), then (one attempt) the answer, then the grade."""

    id: str
    index: int
    title: str = ""
    chain_ids: list[str]
    status: ProblemStatus = "pending"
    error: str | None = None
    statement: str | None = None
    solution: str | None = None
    rubric: str | None = None
    answer: str | None = None
    answered_at: str | None = None
    grade: Grade | None = None
    grade_status: GradeStatus = "none"
    grade_error: str | None = None


class ProblemSet(Camel):
    """`data/practice/<id>.json`: the set's whole world (seed §7, self-contained sets)."""

    id: str
    title: str
    note: str = ""
    status: SetStatus = "partitioning"
    error: str | None = None
    created_at: str
    updated_at: str
    """The heartbeat: every write of the pipeline refreshes it (the boot sweep reads it)."""
    params: PracticeParams
    node_ids: list[str]
    propositions: list[PracticeProposition]
    chains: list[PracticeChain]
    problems: list[Problem] = Field(default_factory=list)

    def view(self, reveal_all: bool = False) -> dict[str, object]:
        """The API's JSON: a problem's solution and rubric only once it is answered."""
        data = self.model_dump(by_alias=True, mode="json")
        for problem, raw in zip(self.problems, data["problems"], strict=True):
            if problem.answer is None and not reveal_all:
                raw["solution"] = None
                raw["rubric"] = None
        return data


def cap_note(note: str) -> str:
    """The learner's note as a set keeps it (seed §7: "trimmed, capped at 2000 characters"):
    surrounding whitespace dropped, then at most `MAX_NOTE` characters (code points) kept, and the
    whitespace the cut leaves at the end dropped. Never raises."""
    return note.strip()[:MAX_NOTE].rstrip()


class CreateSet(Camel):
    """`POST /api/practice/sets` body."""

    node_ids: list[str] = Field(min_length=1, max_length=2_000)
    params: PracticeParams = Field(default_factory=PracticeParams)
    title: str | None = Field(default=None, max_length=MAX_TITLE)
    note: str | None = Field(
        default=None,
        description=f"the learner's note: trimmed, then cut to its first {MAX_NOTE} characters "
        "(a longer note is capped, never refused; seed §7)",
    )

    @field_validator("note")
    @classmethod
    def _note(cls, value: str | None) -> str | None:
        return None if value is None else cap_note(value)


class AnswerBody(Camel):
    """`POST /api/practice/sets/{id}/answers` body."""

    problem_id: str = Field(min_length=1, max_length=64)
    # not blank: checked by `_answer` (its plain sentence), published as a pattern
    answer: str = Field(max_length=MAX_ANSWER, json_schema_extra={"pattern": r"\S"})

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_size(cls, value: object) -> object:
        """An answer over MAX_ANSWER characters is refused naming its size and the limit (400);
        nothing is saved, so the one attempt is still the learner's."""
        if isinstance(value, str) and len(value) > MAX_ANSWER:
            raise ValueError(
                f"the answer is {len(value):,} characters; the limit is {MAX_ANSWER:,}. Shorten it and "
                "submit again (nothing was saved; the attempt is still yours)"
            )
        return value

    @field_validator("answer")
    @classmethod
    def _answer(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the answer is empty; write your reasoning, then submit")
        return value
