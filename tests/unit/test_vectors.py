"""The Python question and plan cores reproduce the shared vectors (`tests/vectors/`), and the
vectors are current. The TypeScript cores pass the same files (`frontend/src/core/**/*.test.ts`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.core.classroom.plan_tree import PlanError, derive_statuses, parse_plan
from server.core.classroom.questions import AnswerRejected, display_order, fnv1a32, mulberry32, settle_answer
from server.core.classroom.questions import _next_unit as next_unit
from server.core.contracts.plan import PlanTree
from tests.vectors.generate import build, render

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
QUESTIONS = json.loads((VECTORS / "questions.json").read_text())
PLAN = json.loads((VECTORS / "plan.json").read_text())


def test_vector_files_are_current() -> None:
    for name, data in build().items():
        assert (VECTORS / name).read_text() == render(data), f"run: python -m tests.vectors.generate ({name})"


def test_external_anchors() -> None:
    for text, value in QUESTIONS["anchors"]["fnv1a32"].items():
        assert fnv1a32(text) == value
    state = mulberry32(1)
    assert [next_unit(state), next_unit(state)] == QUESTIONS["anchors"]["mulberry32_seed1"]


@pytest.mark.parametrize("case", QUESTIONS["shuffles"], ids=lambda c: f"{c['toolCallId'][:12]}-{c['count']}")
def test_shuffles(case: dict) -> None:
    order = display_order(case["toolCallId"], case["count"])
    assert order == case["order"] and sorted(order) == list(range(case["count"]))


@pytest.mark.parametrize("case", QUESTIONS["answers"], ids=lambda c: c["name"])
def test_answers(case: dict) -> None:
    if case.get("error"):
        with pytest.raises(AnswerRejected):
            settle_answer(case["tool"], case["input"], case["output"])
    else:
        assert settle_answer(case["tool"], case["input"], case["output"]) == case["result"]


@pytest.mark.parametrize("case", PLAN["plans"], ids=lambda c: c["name"])
def test_plans(case: dict) -> None:
    if "error" in case:
        with pytest.raises(PlanError) as info:
            parse_plan("Plan", case["source"])
        assert str(info.value) == case["error"]
    else:
        assert parse_plan("Plan", case["source"]).model_dump(mode="json") == case["plan"]


@pytest.mark.parametrize("case", PLAN["statuses"], ids=lambda c: c["name"])
def test_statuses(case: dict) -> None:
    plan = PlanTree.model_validate(PLAN["statusPlan"])
    assert derive_statuses(plan, case["messages"]) == case["statuses"]


PRACTICE = json.loads((VECTORS / "practice.json").read_text())


@pytest.mark.parametrize("case", PRACTICE["selections"], ids=lambda c: c["name"])
def test_practice_selections(case: dict) -> None:
    from server.core.contracts.graph import Chain
    from server.core.practice.chains import chains_for_selection

    chains = [Chain(sources=["s"], createdAt="t", **c) for c in PRACTICE["chains"]]
    made = chains_for_selection(case["selection"], chains)
    assert [c.id for c in made if c.premises] == case["arguments"]
    assert [c.conclusion for c in made if not c.premises] == case["singletons"]


@pytest.mark.parametrize("case", PRACTICE["coverages"], ids=lambda c: c["name"])
def test_practice_coverages(case: dict) -> None:
    from server.core.practice.chains import chain_coverage

    found = chain_coverage(case["chains"], case["partition"])
    assert (sorted(found.missing), sorted(found.duplicated)) == (case["missing"], case["duplicated"])
    assert found.ok == (not case["missing"] and not case["duplicated"])


def test_the_levels_vector_is_the_servers_levels_view() -> None:
    """tests/vectors/levels.json is `GET /api/practice/levels`; the frontend's FALLBACK_LEVELS is
    checked against the same file (frontend/src/core/practice/practiceVectors.test.ts)."""
    from server.core.practice.levels import levels_view

    assert json.loads((VECTORS / "levels.json").read_text()) == levels_view()
