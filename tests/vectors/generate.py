"""Regenerate the shared test vectors from the Python cores: `python -m tests.vectors.generate`.

The vectors pin behaviour both languages must reproduce: `tests/unit/test_vectors.py` checks the
Python core against them (and that they are current), `frontend/src/core/**/*.test.ts` checks the
TypeScript core. Anchors that do not come from our code (FNV-1a and mulberry32 reference values)
are written by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

from server.core.classroom.plan_tree import PlanError, derive_statuses, parse_plan
from server.core.classroom.questions import AnswerRejected, display_order, fnv1a32, settle_answer
from server.core.contracts.graph import Chain
from server.core.contracts.plan import PlanTree
from server.core.practice.chains import chain_coverage, chains_for_selection
from server.core.practice.levels import levels_view

HERE = Path(__file__).resolve().parent

ANCHORS = {
    # FNV-1a 32-bit reference values (offset basis for "", and the published "a" and "foobar").
    "fnv1a32": {"": 0x811C9DC5, "a": 0xE40C292C, "foobar": 0xBF9CF968},
    # The canonical JavaScript mulberry32 seeded with 1: its first two draws.
    "mulberry32_seed1": [0.6270739405881613, 0.002735721180215478],
}

CALL_IDS = ["call_abc", "toolu_01A2B3C4D5", "c", "", "ünïcødé-ü", "call_0123456789abcdef", "x" * 40]

QUIZ = {
    "question": "Which is prime?",
    "options": ["4", "6", "7", "9"],
    "correct": 2,
    "explanation": "7 has no divisors but 1 and itself.",
    "node": "primes",
}
ASK = {"question": "What is your goal?", "options": ["Pass an exam", "Curiosity"]}

ANSWERS = [
    ("right", "quiz", QUIZ, {"kind": "quiz", "chosen": 2}),
    ("wrong", "quiz", QUIZ, {"kind": "quiz", "chosen": 0}),
    ("client-verdict-ignored", "quiz", QUIZ, {"kind": "quiz", "chosen": 1, "correct": True}),
    ("out-of-range", "quiz", QUIZ, {"kind": "quiz", "chosen": 4}),
    ("negative", "quiz", QUIZ, {"kind": "quiz", "chosen": -1}),
    ("missing-choice", "quiz", QUIZ, {"kind": "quiz"}),
    ("bad-question", "quiz", {**QUIZ, "correct": 9}, {"kind": "quiz", "chosen": 0}),
    ("ask-free-text", "ask_user_question", ASK, {"kind": "answer", "answer": "  Learn calculus  "}),
    ("ask-suggestion", "ask_user_question", ASK, {"kind": "answer", "answer": "Curiosity", "chosen": 1}),
    ("ask-blank", "ask_user_question", ASK, {"kind": "answer", "answer": "   "}),
    ("ask-bad-suggestion", "ask_user_question", ASK, {"kind": "answer", "answer": "x", "chosen": 5}),
]

PLANS = [
    ("basic", "graph TD\n  limits[Limits] --> deriv[Derivative]\n  deriv --> power[Power rule]\n"),
    ("quoted-and-shapes", 'flowchart LR\n a["A, quoted"] --> b(Round)\n b --> c((Circle))\n c --> d{Choice}'),
    ("chain-and-fanout", "graph TD\n a[A] --> b[B] --> c[C]\n a & b --> d[D]\n d --> e[E] & f[F]"),
    ("comments-and-blank", "%% plan\ngraph TD\n\n  a[Start] %% first\n  a --> b[Next];\n"),
    ("no-header", "a[A] --> b[B]"),
    ("empty", "   \n"),
    ("header-only", "graph TD"),
    ("bad-line", "graph TD\n a[A] --> b[B]\n this is prose"),
    ("dangling-arrow", "graph TD\n a[A] -->"),
    ("other-arrow", "graph TD\n a[A] -> b[B]"),
    ("self-loop", "graph TD\n a[A] --> a"),
    ("cycle", "graph TD\n a[A] --> b[B]\n b --> c[C]\n c --> a"),
    ("relabel", "graph TD\n a[A] --> b[B]\n a[Other] --> c[C]"),
    ("empty-label", "graph TD\n a[ ] --> b[B]"),
    ("too-many", "graph TD\n" + "\n".join(f" n{i}[N{i}] --> n{i + 1}[N{i + 1}]" for i in range(40))),
    (
        "labels-with-operators",
        'graph TD\n a[Limits & continuity] --> b["f(x) = x^2"]\n b --> c(Rate (of change)) %% note\n'
        " c & d{Is $x \\to 0$?} --> e[[Arrays] --> heaps]",
    ),
    ("unclosed-label", "graph TD\n a[Limits & continuity --> b"),
]


def quiz_part(call_id: str, node: str | None, answered: bool) -> dict:
    return {
        "type": "tool-quiz",
        "toolCallId": call_id,
        "state": "output-available" if answered else "input-available",
        "input": {**QUIZ, "node": node},
    }


def teach_part(call_id: str, node: str, ok: bool) -> dict:
    """A `plan_teach` call: `ok` a successful one, else refused (a retry prompt, output-error)."""
    if ok:
        return {
            "type": "tool-plan_teach",
            "toolCallId": call_id,
            "state": "output-available",
            "input": {"node": node},
            "output": {"ok": True, "node": node},
        }
    return {
        "type": "tool-plan_teach",
        "toolCallId": call_id,
        "state": "output-error",
        "input": {"node": node},
        "errorText": "refused",
    }


STATUS_CASES = [
    ("no-quizzes", []),
    ("one-current", [quiz_part("q1", "deriv", False)]),
    (
        "moves-on",
        [quiz_part("q1", "limits", True), quiz_part("q2", "deriv", True), quiz_part("q3", "power", False)],
    ),
    (
        "back-to-earlier",
        [quiz_part("q1", "limits", True), quiz_part("q2", "deriv", True), quiz_part("q3", "limits", False)],
    ),
    ("untagged-and-unknown", [quiz_part("q1", None, True), quiz_part("q2", "nope", True)]),
    (
        "taught-without-quiz",
        [teach_part("t1", "limits", True), quiz_part("q1", "limits", True), teach_part("t2", "deriv", True)],
    ),
    ("teach-refused-or-unknown", [teach_part("t1", "power", False), teach_part("t2", "nope", True)]),
]


PRACTICE_CHAINS = [
    {"id": "arg_ab_c", "premises": ["a", "b"], "conclusion": "c"},
    {"id": "arg_c_d", "premises": ["c"], "conclusion": "d"},
    {"id": "arg_e_d", "premises": ["e"], "conclusion": "d"},
    {"id": "arg_d_f", "premises": ["d"], "conclusion": "f"},
]
SELECTIONS = [
    ("all", ["a", "b", "c", "d", "e", "f"]),
    ("a-premise-missing", ["a", "c", "d"]),
    ("two-arguments-one-conclusion", ["c", "e", "d"]),
    ("lonely-nodes", ["a", "f", "x"]),
    ("premise-only-and-conclusion", ["d", "f", "b"]),
    ("empty", []),
]
COVERAGES = [
    ("true-partition", ["x", "y", "z"], [["x"], ["y", "z"]]),
    ("gap", ["x", "y", "z"], [["x"], ["z"]]),
    ("duplicate", ["x", "y", "z"], [["x", "y"], ["y", "z"]]),
    ("both", ["x", "y", "z"], [["x"], ["x"]]),
]


def practice_vectors() -> dict[str, object]:
    """The chain model of practice (core/practice/chains.py), for frontend/src/core/practice/practice.ts."""
    chains = [Chain(sources=["s"], createdAt="t", **c) for c in PRACTICE_CHAINS]
    selections = []
    for name, selection in SELECTIONS:
        made = chains_for_selection(selection, chains)
        selections.append(
            {
                "name": name,
                "selection": selection,
                "arguments": [c.id for c in made if c.premises],
                "singletons": [c.conclusion for c in made if not c.premises],
            }
        )
    coverages = []
    for name, ids, partition in COVERAGES:
        found = chain_coverage(ids, partition)
        coverages.append(
            {
                "name": name,
                "chains": ids,
                "partition": partition,
                "missing": sorted(found.missing),
                "duplicated": sorted(found.duplicated),
            }
        )
    return {"chains": PRACTICE_CHAINS, "selections": selections, "coverages": coverages}


def build() -> dict[str, dict]:
    shuffles = [
        {"toolCallId": cid, "count": n, "order": display_order(cid, n)}
        for cid in CALL_IDS
        for n in (0, 1, 2, 3, 4, 6)
    ]
    answers = []
    for name, tool, question, output in ANSWERS:
        try:
            answers.append(
                {
                    "name": name,
                    "tool": tool,
                    "input": question,
                    "output": output,
                    "result": settle_answer(tool, question, output),
                }
            )
        except AnswerRejected:
            answers.append({"name": name, "tool": tool, "input": question, "output": output, "error": True})
    questions = {
        "anchors": ANCHORS,
        "fnv1a32": {cid: fnv1a32(cid) for cid in CALL_IDS},
        "shuffles": shuffles,
        "answers": answers,
    }

    plans = []
    for name, source in PLANS:
        try:
            plans.append(
                {"name": name, "source": source, "plan": parse_plan("Plan", source).model_dump(mode="json")}
            )
        except PlanError as exc:
            plans.append({"name": name, "source": source, "error": str(exc)})
    tree = parse_plan("Derivatives", PLANS[0][1])
    statuses = []
    for name, parts in STATUS_CASES:
        messages = [{"id": "a", "role": "assistant", "parts": parts}] if parts else []
        statuses.append(
            {
                "name": name,
                "messages": messages,
                "statuses": derive_statuses(PlanTree.model_validate(tree), messages),
            }
        )
    return {
        "questions.json": questions,
        "plan.json": {"plans": plans, "statusPlan": tree.model_dump(mode="json"), "statuses": statuses},
        "practice.json": practice_vectors(),
        # the named levels, defined once (core/practice/levels.py); FALLBACK_LEVELS in
        # frontend/src/core/practice/practice.ts must equal them (practiceVectors.test.ts)
        "levels.json": levels_view(),
    }


def render(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    for file_name, data in build().items():
        (HERE / file_name).write_text(render(data), encoding="utf-8")
        print("wrote", HERE / file_name)
