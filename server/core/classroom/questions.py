"""Question core: seeded option shuffling and quiz grading (seed §5, client-side questions).

Mirrored by `frontend/src/core/classroom/questions.ts`; both pass `tests/vectors/questions.json`, so the
dock's option order and verdict are the same in the browser and on the server.

The shuffle is Fisher-Yates driven by mulberry32, seeded with the 32-bit FNV-1a hash of the tool
call id's UTF-8 bytes. All arithmetic is unsigned 32-bit, so TypeScript (`Math.imul`, `>>> 0`)
and Python agree bit for bit.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from server.core.contracts.questions import AskAnswer, AskInput, QuizAnswer, QuizInput, QuizResult

_MASK = 0xFFFFFFFF


def fnv1a32(text: str) -> int:
    """32-bit FNV-1a of the UTF-8 bytes of `text`."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value ^= byte
        value = (value * 0x01000193) & _MASK
    return value


def _imul(a: int, b: int) -> int:
    return (a * b) & _MASK


def mulberry32(seed: int) -> list[int]:
    """A mulberry32 generator state (one unsigned 32-bit word in a list, advanced in place)."""
    return [seed & _MASK]


def _next_unit(state: list[int]) -> float:
    """mulberry32 step: a float in [0, 1) (same bits as the TypeScript version)."""
    state[0] = (state[0] + 0x6D2B79F5) & _MASK
    t = state[0]
    t = _imul(t ^ (t >> 15), t | 1)
    t ^= (t + _imul(t ^ (t >> 7), t | 61)) & _MASK
    t &= _MASK
    return ((t ^ (t >> 14)) & _MASK) / 4294967296


def display_order(tool_call_id: str, count: int) -> list[int]:
    """The order the dock shows `count` options in: a permutation of authored indexes.

    Args:
        tool_call_id: the quiz call's id (the seed).
        count: number of options (>= 0).

    Returns:
        `order` where `order[i]` is the authored index shown at position i.
    """
    order = list(range(count))
    state = mulberry32(fnv1a32(tool_call_id))
    for i in range(count - 1, 0, -1):
        j = int(_next_unit(state) * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def grade_quiz(quiz: QuizInput, chosen: int) -> QuizResult:
    """Grade an answer given as an authored index.

    Raises:
        ValueError: `chosen` is not an index of `quiz.options`.
    """
    if not 0 <= chosen < len(quiz.options):
        raise ValueError(f"chosen option {chosen} does not exist (0..{len(quiz.options) - 1})")
    return QuizResult(
        chosen=chosen,
        chosenText=quiz.options[chosen],
        correct=chosen == quiz.correct,
        correctIndex=quiz.correct,
        correctText=quiz.options[quiz.correct],
    )


class AnswerRejected(ValueError):
    """A question answer that does not fit its question; the message says why."""


def settle_answer(tool_name: str, question_input: Any, output: Any) -> dict[str, Any]:
    """Validate a learner's answer against its question and return the canonical tool output.

    A quiz is re-graded here (the browser's verdict is never trusted); an ask answer is trimmed.

    Raises:
        AnswerRejected: unknown tool, malformed question, or an answer that does not fit it.
    """
    try:
        if tool_name == "quiz":
            quiz = QuizInput.model_validate(question_input)
            answer = QuizAnswer.model_validate(output)
            return grade_quiz(quiz, answer.chosen).model_dump(by_alias=True)
        if tool_name == "ask_user_question":
            ask = AskInput.model_validate(question_input)
            reply = AskAnswer.model_validate(output)
            if reply.chosen is not None and reply.chosen >= len(ask.options):
                raise AnswerRejected(f"chosen suggestion {reply.chosen} does not exist")
            text = reply.answer.strip()
            if not text:
                raise AnswerRejected("the answer is empty")
            return {"kind": "answer", "answer": text, "chosen": reply.chosen}
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise AnswerRejected(f"{tool_name} answer: {where}: {first['msg']}") from exc
    except ValueError as exc:
        if isinstance(exc, AnswerRejected):
            raise
        raise AnswerRejected(str(exc)) from exc
    raise AnswerRejected(f"{tool_name} is not a question tool")
