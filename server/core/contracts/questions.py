"""Client-side question tools: `quiz` and `ask_user_question` (seed §5).

The model calls them; the browser renders them in the question dock, grades a quiz with the same
core as `server/core/classroom/questions.py`, and answers with `addToolOutput`. Inputs are validated when the
model calls (errors go back to the model); outputs are re-validated and re-graded by the server.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from server.core.contracts.limits import Text2000, Text4000

MAX_OPTIONS = 6
QUESTION_TOOLS = ("quiz", "ask_user_question")


def _node_id(value: str) -> str:
    if len(value) > 64:
        raise ValueError("node must be a plan node id (at most 64 characters)")
    return value


class QuizInput(BaseModel):
    """A multiple-choice question with its answer committed before it is posed.

    Attributes:
        question: the question, Markdown with `$...$` math (1-4000 chars).
        options: 2-6 distinct answer options, as authored.
        correct: index into `options` of the right answer (authored order, 0-based).
        explanation: why the right answer is right; shown to the learner after answering.
        node: the plan node this quiz checks (teacher quizzes; drives plan statuses), or null.
    """

    model_config = ConfigDict(extra="forbid")

    question: Text4000
    options: list[str] = Field(min_length=2, max_length=MAX_OPTIONS)
    correct: int = Field(ge=0)
    explanation: Text4000
    node: Annotated[str, AfterValidator(_node_id)] | None = None

    @field_validator("options")
    @classmethod
    def _distinct_options(cls, options: list[str]) -> list[str]:
        cleaned = [o.strip() for o in options]
        if any(not o for o in cleaned):
            raise ValueError("options must not be blank")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("options must be distinct")
        if any(len(o) > 1000 for o in cleaned):
            raise ValueError("each option must be at most 1000 characters")
        return cleaned

    @model_validator(mode="after")
    def _correct_in_range(self) -> QuizInput:
        if self.correct >= len(self.options):
            raise ValueError(
                f"correct is {self.correct} but there are {len(self.options)} options "
                f"(valid indexes 0..{len(self.options) - 1})"
            )
        return self


class AskInput(BaseModel):
    """An open question to the learner (their goal, their background).

    Attributes:
        question: Markdown (1-2000 chars).
        options: 0-6 suggested answers the learner can pick; they may always type their own.
    """

    model_config = ConfigDict(extra="forbid")

    question: Text2000
    options: list[str] = Field(default_factory=list, max_length=MAX_OPTIONS)


class QuizAnswer(BaseModel):
    """What the browser sends for a quiz (the `output` of the tool part)."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["quiz"] = "quiz"
    chosen: int = Field(ge=0, description="authored index of the option the learner picked")


class QuizResult(BaseModel):
    """A graded quiz answer: what the model receives as the tool result."""

    kind: Literal["quiz"] = "quiz"
    chosen: int
    chosen_text: str = Field(alias="chosenText")
    correct: bool
    correct_index: int = Field(alias="correctIndex")
    correct_text: str = Field(alias="correctText")

    model_config = ConfigDict(populate_by_name=True)


class AskAnswer(BaseModel):
    """The learner's answer to `ask_user_question` (the tool part's `output`)."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["answer"] = "answer"
    answer: Text4000
    chosen: int | None = Field(default=None, ge=0)
