"""A practice set as Markdown (issue 31, item 3): `core/practice/set_markdown.py`."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from server.core.contracts.practice import ProblemSet
from server.core.practice.set_markdown import set_markdown


def problem_set(problems: list[dict[str, Any]], **extra: Any) -> ProblemSet:
    return ProblemSet.model_validate(
        {
            "id": "set_1",
            "title": "Limits: practice",
            "note": "Keep it short.\nNo proofs.",
            "status": "ready",
            "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-02T00:00:00Z",
            "params": {"rung": 3, "cue": 0, "presentation": "application"},
            "nodeIds": ["n_a", "n_b", "n_c"],
            "propositions": [
                {"id": "n_a", "name": "Limit", "statement": "$\\lim_{x\\to a} f(x) = L$ means ..."},
                {"id": "n_b", "name": "Continuity", "statement": "f is continuous at a when ..."},
                {"id": "n_c", "name": "IVT", "statement": "A continuous f takes every value between."},
            ],
            "chains": [
                {"id": "arg_1", "premises": ["n_a", "n_b"], "conclusion": "n_c"},
                {"id": "single_n_a", "premises": [], "conclusion": "n_a"},
            ],
            "problems": problems,
            **extra,
        }
    )


GRADED = {
    "id": "p1",
    "index": 0,
    "title": "A root exists",
    "chainIds": ["arg_1"],
    "status": "ready",
    "statement": "Show $x^3 - x - 1$ has a root in $[1, 2]$.",
    "solution": "By the IVT: $f(1) = -1 < 0 < 5 = f(2)$.",
    "rubric": "- names the IVT\n- checks the signs",
    "answer": "f(1) < 0 and f(2) > 0, so by IVT there is a root.",
    "answeredAt": "2026-01-01T01:00:00Z",
    "grade": {"score": 8, "comment": "Right theorem; continuity not stated."},
    "gradeStatus": "graded",
}
UNANSWERED = {
    "id": "p2",
    "index": 1,
    "title": "Limit at a point",
    "chainIds": ["single_n_a"],
    "status": "ready",
    "statement": "Compute $\\lim_{x\\to 2} x^2$.",
    "solution": "SECRET SOLUTION",
    "rubric": "SECRET RUBRIC",
}
INTERRUPTED = {
    **GRADED,
    "id": "p3",
    "index": 2,
    "title": "Again",
    "grade": None,
    "gradeStatus": "interrupted",
    "answer": "```\nunclosed",
}
FAILED = {
    "id": "p4",
    "index": 3,
    "title": "Broken",
    "chainIds": [],
    "status": "error",
    "error": "the model gave up",
}


def export(value: ProblemSet) -> str:
    return "".join(set_markdown(value))


def headings(document: str) -> list[str]:
    body = document.split("\n---\n", 1)[1]
    tokens = MarkdownIt("commonmark").parse(body)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_front_matter_levels_note_and_summary() -> None:
    document = export(problem_set([GRADED, UNANSWERED, INTERRUPTED, FAILED]))
    meta = yaml.safe_load(document[4 : document.index("\n---\n", 4)])
    assert meta == {
        "title": "Limits: practice",
        "set": "set_1",
        "created": "2026-01-01T00:00:00Z",
        "updated": "2026-01-02T00:00:00Z",
        "rung": "Composition",
        "cue": "Lesson context",
        "presentation": "Application",
        "status": "ready",
    }
    assert "*Composition · Lesson context · Application*" in document
    assert "> Keep it short.\n> No proofs." in document
    assert "4 problems · 2 answered · 1 graded · mean score 8.0/10" in document


def test_each_problem_with_its_answer_grade_and_model_solution() -> None:
    document = export(problem_set([GRADED, UNANSWERED, INTERRUPTED, FAILED]))
    assert headings(document) == [
        "Limits: practice",
        "Problem 1: A root exists",
        "Your answer",
        "Grade",
        "Model solution",
        "Rubric",
        "Problem 2: Limit at a point",
        "Your answer",
        "Problem 3: Again",
        "Your answer",
        "Grade",
        "Model solution",
        "Rubric",
        "Problem 4: Broken",
        "Propositions",
    ]
    first = document.split("## Problem 1", 1)[1].split("## Problem 2", 1)[0]
    assert "Exercises: Limit ∧ Continuity ⟹ IVT" in first
    assert "Show $x^3 - x - 1$ has a root in $[1, 2]$." in first
    assert "f(1) < 0 and f(2) > 0, so by IVT there is a root." in first
    assert "**8/10**: Right theorem; continuity not stated." in first
    assert "By the IVT: $f(1) = -1 < 0 < 5 = f(2)$." in first
    assert "- names the IVT\n- checks the signs" in first
    assert "*The grading was interrupted; the answer stands.*" in document
    assert "*This problem could not be written: the model gave up*" in document
    assert "- **IVT**: A continuous f takes every value between." in document


def test_an_unanswered_problem_keeps_its_solution_hidden() -> None:
    document = export(problem_set([UNANSWERED]))
    assert "Compute $\\lim_{x\\to 2} x^2$." in document
    assert "Exercises: Limit" in document
    assert "*Not answered yet (the model solution shows once you answer).*" in document
    assert "SECRET" not in document


def test_a_failed_set_and_a_set_without_problems() -> None:
    document = export(problem_set([], status="error", error="the partitioner failed"))
    assert "*This set failed: the partitioner failed*" in document
    assert "0 problems · 0 answered · 0 graded" in document
    assert headings(document) == ["Limits: practice", "Propositions"]


@settings(max_examples=60, deadline=None)
@given(
    answer=st.text(min_size=1, max_size=80) | st.sampled_from(["```", "~~~~\n# x", "<div>", "---"]),
    comment=st.text(min_size=1, max_size=80),
)
def test_whatever_the_learner_wrote_the_next_sections_stay_headings(answer: str, comment: str) -> None:
    graded = {**GRADED, "answer": answer, "grade": {"score": 3, "comment": comment}}
    found = headings(export(problem_set([graded, UNANSWERED])))
    assert found[-3:] == ["Problem 2: Limit at a point", "Your answer", "Propositions"]
