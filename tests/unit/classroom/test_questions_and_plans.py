"""Properties of the question core and the plan parser (beyond the fixed vectors)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from server.core.classroom.answers import apply_answers
from server.core.classroom.phases import phase_of
from server.core.classroom.plan_tree import PlanError, parse_plan
from server.core.classroom.questions import display_order, grade_quiz
from server.core.contracts.questions import QuizInput
from server.core.transcript import for_model, pending_questions


@given(st.text(max_size=40), st.integers(min_value=0, max_value=12))
def test_display_order_is_a_deterministic_permutation(call_id: str, count: int) -> None:
    order = display_order(call_id, count)
    assert sorted(order) == list(range(count)) and order == display_order(call_id, count)


@given(st.integers(min_value=2, max_value=6), st.data())
def test_grading_is_right_exactly_for_the_committed_answer(n: int, data: st.DataObject) -> None:
    correct = data.draw(st.integers(min_value=0, max_value=n - 1))
    quiz = QuizInput(question="q", options=[f"o{i}" for i in range(n)], correct=correct, explanation="e")
    for chosen in range(n):
        assert grade_quiz(quiz, chosen).correct is (chosen == correct)


@pytest.mark.parametrize(
    "args, words",
    [
        pytest.param({"options": ["a", "b"], "correct": 2}, "valid indexes 0..1", id="correct-out-of-range"),
        pytest.param({"options": ["a"], "correct": 0}, "at least 2", id="one-option"),
        pytest.param({"options": ["a", "a"], "correct": 0}, "distinct", id="duplicate-options"),
        pytest.param({"options": ["a", " "], "correct": 0}, "blank", id="blank-option"),
    ],
)
def test_bad_quizzes_are_refused_with_a_reason(args: dict, words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        QuizInput(question="q", explanation="e", **args)


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_parser_accepts_exactly_the_acyclic_edge_sets(edges: list[tuple[int, int]]) -> None:
    import networkx as nx

    source = "graph TD\n n0[Start]\n" + "\n".join(f" n{a} --> n{b}" for a, b in edges)
    graph = nx.DiGraph([(a, b) for a, b in edges])
    if any(a == b for a, b in edges) or not nx.is_directed_acyclic_graph(graph):
        with pytest.raises(PlanError):
            parse_plan("t", source)
    else:
        tree = parse_plan("t", source)
        assert set(tree.edges) == {(f"n{a}", f"n{b}") for a, b in edges}


def quiz_message(state: str) -> dict:
    return {
        "id": "a",
        "role": "assistant",
        "parts": [
            {
                "type": "tool-quiz",
                "toolCallId": "c1",
                "state": state,
                "input": {"question": "q", "options": ["a", "b"], "correct": 0, "explanation": "e"},
            }
        ],
    }


def test_pending_questions_only_while_the_assistant_has_the_last_word() -> None:
    assert len(pending_questions([quiz_message("input-available")])) == 1
    user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "skip"}]}
    assert pending_questions([quiz_message("input-available"), user]) == []
    assert pending_questions([quiz_message("output-available")]) == []


def test_for_model_closes_dangling_calls_without_touching_the_record() -> None:
    record = [quiz_message("input-available")]
    closed = for_model(record)
    assert closed[0]["parts"][0]["state"] == "output-available"
    assert closed[0]["parts"][0]["output"].startswith("INTERRUPTED")
    assert record[0]["parts"][0]["state"] == "input-available"


def test_an_answer_copies_only_the_answered_message() -> None:
    """Issue 15: answering does not deep-copy the transcript; the earlier messages are the
    record's own objects (so the store appends the tail) and nothing in the record is mutated."""
    earlier = [{"id": f"m{i}", "role": "user", "parts": [{"type": "text", "text": "x"}]} for i in range(50)]
    record = [*earlier, quiz_message("input-available")]
    answered = {**quiz_message("output-available"), "id": "a"}
    answered["parts"][0]["output"] = {"kind": "quiz", "chosen": 0}
    out = apply_answers(record, answered)
    assert all(a is b for a, b in zip(out[:-1], record[:-1], strict=True))
    assert out[-1] is not record[-1] and out[-1]["parts"][0]["output"]["correct"] is True
    assert record[-1]["parts"][0]["state"] == "input-available" and "output" not in record[-1]["parts"][0]


def test_phases_fold_strictly() -> None:
    probe_done = {
        "type": "tool-probe_done",
        "toolCallId": "p",
        "state": "output-available",
        "output": "ok",
        "input": {"topic": "t", "goal": "g", "floor": "f", "ceiling": "c", "level": "beginner"},
    }
    plan = {
        "type": "tool-plan_init",
        "toolCallId": "i",
        "state": "output-available",
        "input": {},
        "output": {"ok": True, "plan": {"title": "t", "nodes": [{"id": "a", "label": "A"}], "edges": []}},
    }
    msg = lambda *parts: {"id": "m", "role": "assistant", "parts": list(parts)}  # noqa: E731
    assert phase_of([]) == "probe"
    assert phase_of([msg(plan)]) == "probe"  # a plan cannot skip the probe
    assert phase_of([msg(probe_done)]) == "plan"
    assert phase_of([msg(probe_done, plan)]) == "teach"
    bad = {**probe_done, "input": {"topic": "t"}}
    assert phase_of([msg(bad)]) == "probe"


@pytest.mark.parametrize(
    ("line", "label"),
    [
        ("a[Limits & continuity]", "Limits & continuity"),
        ('a["f(x) = x^2"]', "f(x) = x^2"),
        ("a[\"He said 'hi' --> & [so]\"]", "He said 'hi' --> & [so]"),
        ("a[Arrays [0..n] & heaps]", "Arrays [0..n] & heaps"),
        ("a(Rate (of change))", "Rate (of change)"),
        ("a{Is $x \\to 0$?}", "Is $x \\to 0$?"),
        ("a[$\\sum_{i=1}^n i$ %% not a comment]", "$\\sum_{i=1}^n i$ %% not a comment"),
    ],
)
def test_labels_may_hold_operators_quotes_brackets_and_math(line: str, label: str) -> None:
    tree = parse_plan("t", f"graph TD\n {line} --> b[Next] & c[Other]\n")
    assert tree.nodes[0].label == label
    assert tree.edges == [("a", "b"), ("a", "c")]


@given(
    st.text(alphabet="ab &->[](){}$^\\'=%;", min_size=1, max_size=30).filter(
        lambda t: t.strip() and '"]' not in t
    )
)
def test_any_quoted_label_round_trips(label: str) -> None:
    tree = parse_plan("t", f'graph TD\n a["{label}"] --> b[B]')
    assert tree.nodes[0].label == label.strip()


def test_cycle_and_size_errors_name_their_lines() -> None:
    with pytest.raises(PlanError, match=r"^lines 3, 4, 5: the plan has a cycle: a --> b --> c --> a"):
        parse_plan("t", "graph TD\n %% three arrows\n a[A] --> b[B]\n b --> c[C]\n c --> a")
    too_many = "graph TD\n" + "\n".join(f" n{i}[N{i}]" for i in range(41))
    with pytest.raises(PlanError, match=r"^line 42: node 'n40' is node 41"):
        parse_plan("t", too_many)
    with pytest.raises(PlanError, match=r"^line 2: a label opened with \[ is not closed"):
        parse_plan("t", "graph TD\n a[Limits & continuity --> b")
