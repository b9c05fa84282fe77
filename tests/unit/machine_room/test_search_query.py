"""The learner's search text is words, never FTS5 syntax (issue 31 item 5; decision 0044)."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.contracts.practice import PracticeParams, Problem, ProblemSet
from server.core.machine_room.search import (
    MAX_TERMS,
    fts_query,
    href,
    lesson_entries,
    practice_entries,
    snippet_parts,
)


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize='unicode61 remove_diacritics 2')")
    db.execute("INSERT INTO t VALUES ('Chain rule', 'the derivative of f(g(x)) AND \"quoted\" near* text')")
    return db


DB = _db()


def test_syntax_is_text_and_the_last_word_is_a_prefix() -> None:
    assert fts_query("deriv") == '"deriv"*'
    assert fts_query("chain rule ") == '"chain" "rule"'
    assert fts_query('"quoted" AND near*') == '"quoted" "AND" "near"*'
    assert fts_query("  *** \"' ") is None
    assert fts_query("a_b") == '"a" "b"*'
    assert fts_query(" ".join(["w"] * 40)) == " ".join(['"w"'] * (MAX_TERMS - 1) + ['"w"*'])
    matched = DB.execute("SELECT title FROM t WHERE t MATCH ?", (fts_query('AND "quoted'),)).fetchall()
    assert matched == [("Chain rule",)]  # AND is a word the text holds, not an operator


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=220))
def test_any_text_is_a_valid_query(text: str) -> None:
    query = fts_query(text)
    if query is not None:
        DB.execute("SELECT * FROM t WHERE t MATCH ?", (query,)).fetchall()  # never an FTS5 syntax error


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(['"', "*", "AND", "OR", "NOT", "NEAR", "(", ")", ":", "^", "-", "+", "{", "}", "x"])
    )
)
def test_query_operators_in_any_order_are_valid(tokens: list[str]) -> None:
    query = fts_query(" ".join(tokens))
    if query is not None:
        DB.execute("SELECT * FROM t WHERE t MATCH ?", (query,)).fetchall()


def test_entries_of_a_lesson_and_a_set() -> None:
    messages: list[dict[str, Any]] = [
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "hidden"}]},
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is $x^2$?"}]},
        {
            "id": "a1",
            "role": "assistant",
            "parts": [{"type": "tool-x", "input": {}}, {"type": "text", "text": "A"}],
        },
        {"id": "a2", "role": "assistant", "parts": [{"type": "tool-x"}]},
    ]
    rows = list(lesson_entries("c1", "Squares", messages))
    assert [(e.kind, e.target, e.body) for e in rows] == [
        ("lesson", "", ""),
        ("message", "u1", "What is $x^2$?"),
        ("message", "a1", "A"),
    ]
    problem_set = ProblemSet(
        id="ps_1",
        title="Heaps",
        created_at="t",
        updated_at="t",
        params=PracticeParams(),
        node_ids=[],
        propositions=[],
        chains=[],
        problems=[
            Problem(
                id="p1",
                index=0,
                chain_ids=[],
                title="Sift down",
                statement="Prove it.",
                answer="By induction",
            )
        ],
    )
    rows = list(practice_entries(problem_set))
    assert [(e.kind, e.target, e.title) for e in rows] == [
        ("practice", "", "Heaps"),
        ("problem", "p1", "Sift down"),
    ]
    assert rows[1].body == "Prove it.\n\nBy induction"


def test_snippets_and_addresses() -> None:
    assert snippet_parts("a \x02chain\x03 rule <b>") == [
        {"text": "a ", "match": False},
        {"text": "chain", "match": True},
        {"text": " rule <b>", "match": False},
    ]
    assert href("message", "c1", "m1") == "/chat/c1?m=m1"
    assert href("proposition", "n_1", "n_1") == "/?node=n_1"
    assert href("problem", "ps_1", "p1") == "/practice/ps_1?problem=p1"
