"""Options that are not words go back to the model (issue 29, item 3): the pure check.

Hypothesis builds legitimate options from the shapes a real quiz asks about (words with
apostrophes, numbers, units, currency, `$...$` math, code spans, bare identifiers and
operators, quoted words, intervals) and asserts none is refused; then inserts one piece of
debris between its tokens and asserts it is refused.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from server.core.classroom.option_words import option_debris, options_problem

WORDS = st.sampled_from(
    [
        "True",
        "False",
        "derivative",
        "Newton's",
        "students'",
        "don't",
        "the",
        "limit",
        "café",
        "Ableitung",
        "производная",
        "導関数",
        "it",
        "is",
        "none",
        "of",
        "above",
        "O(n log n)",
        "f(x)",
        "e.g.",
        "i.e.,",
        "x-axis",
        "well-known",
        "and/or",
        "yes;",
        "no:",
        "Hello, world!",
    ]
)
NUMBERS = st.one_of(
    st.integers(-10_000, 10_000).map(str),
    st.integers(-10_000, 10_000).map(lambda n: f"{n:+d}"),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.2f}"),
    st.sampled_from(["50%", "$5", "5'", "3.14", "1/2", "1e-9", "2^10", "10 m/s", "9.81 m/s²"]),
)
MATH = st.sampled_from(
    [
        "$x^2$",
        "$\\frac{1}{x}$",
        "$\\sqrt{2}$",
        "$e^{i\\pi} + 1 = 0$",
        "$f'(x) = 2x$",
        "$[0, 1)$",
        "$$\\int_0^1 x\\,dx$$",
        "$a < b$",
        "$\\{1, 2\\}$",
        "$|x|$",
        '$"$',
    ]
)
CODE = st.sampled_from(
    [
        "`a[i]`",
        '`print("hi")`',
        "`&amp;`",
        "`<div>`",
        "`x = {'a': 1}`",
        "`'`",
        "`\\n`",
        "`arr[0]`",
        "`None`",
    ]
)
BARE = st.sampled_from(
    [
        "os.path.join",
        "snake_case",
        "camelCase",
        "__init__",
        "**",
        "//",
        "<=",
        "->",
        "=>",
        "&&",
        "||",
        "!=",
        "==",
        "^",
        "%",
        "x++",
        "i += 1",
        "4x + 5e^2 - 6i",
        "+1",
        "[0, 1)",
        "(0, 1]",
        "{a, b}",
        '"hello"',
        "'x'",
        '"a" and "b"',
        "(see above)",
        "O(1)",
        "x < y",
        "x > y",
    ]
)
TOKEN = st.one_of(WORDS, NUMBERS, MATH, CODE, BARE)
LEGIT = st.lists(TOKEN, min_size=1, max_size=6).map(" ".join)
DEBRIS = st.sampled_from(
    [
        "&#",
        "&#39;",
        "&quot;",
        "<br>",
        "</b>",
        '"true',
        "'false",
        '"',
        'a"b',
        "\\frac",
        "`x",
        "f(x",
        "x)",
        "{a",
        "}",
        "\ufffd",
        "\x00",
    ]
)


@settings(max_examples=400, deadline=None)
@given(LEGIT)
def test_real_option_texts_are_words(option: str) -> None:
    assert option_debris(option) is None, option


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKEN, min_size=0, max_size=5), DEBRIS, st.data())
def test_debris_between_tokens_is_refused(tokens: list[str], debris: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(tokens)))
    # A stray quote followed by a token that ends the same quote (`'false` then `5'`) is a
    # quoted phrase, `'false 5'`, not debris: such draws are not this test's case.
    for quote in {"'", '"'} & set(debris):
        assume(all(quote not in token for token in tokens[at:]))
    option = " ".join([*tokens[:at], debris, *tokens[at:]])
    assert option_debris(option) is not None, option


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ('-3.00,"False "true \'false &#', False),  # the option
        ("+1", True),
        ('a 12" screen', True),  # an inch mark after a digit is not a stray quote
        ('"true 12"', True),  # ...and it may close a quotation: read as a quoted phrase
        ("4x + 5e^2 - 6i", True),
        ("The derivative of $x$ is $1$", True),
        ("<script>alert(1)</script>", False),
        ('"True"', True),
        ('True"', False),
        ("'90s music", False),  # accepted limit: an elided year reads as an opened quote
    ],
)
def test_known_options(option: str, words: bool) -> None:
    assert (option_debris(option) is None) is words


def test_retry_text_names_each_bad_option_in_plain_words() -> None:
    problem = options_problem(["+1", "4x + 5e^2 - 6i", '-3.00,"False "true \'false &#'])
    assert problem is not None
    assert problem.startswith("option 3 (")
    assert "markup (&#)" in problem
    assert "option 1" not in problem and "option 2" not in problem
    assert "Call the tool again" in problem
    assert options_problem(["$x^2$", "`x**2`", "x squared"]) is None


def test_a_quiz_with_debris_goes_back_to_the_model_and_the_fixed_one_is_posed() -> None:
    """Wired where the question tools validate: the teacher's quiz with the issue's debris option
    comes back as a retry prompt; its second, clean quiz is the one deferred to the browser."""
    import json

    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from server.agent.classroom.lesson import build_teacher
    from server.agent.classroom.tools import LessonDeps

    bad = ["+1", "4x + 5e^2 - 6i", '-3.00,"False "true \'false &#']
    good = ["$1$", "$x$", "$\\frac{1}{x}$"]
    retries: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            for p in last.parts:
                if isinstance(p, RetryPromptPart) and p.tool_name == "quiz":
                    retries.append(p.model_response())
                elif isinstance(p, ToolReturnPart) and p.outcome == "retried":
                    retries.append(str(p.content))
        options = good if retries else bad
        args = {
            "question": "What is $\\frac{d}{dx} x$?",
            "options": options,
            "correct": 0,
            "explanation": "Slope 1.",
        }
        return ModelResponse(parts=[ToolCallPart("quiz", json.dumps(args), tool_call_id=f"q{len(retries)}")])

    result = build_teacher(FunctionModel(model), offline=None).run_sync("go", deps=LessonDeps(messages=[]))
    assert len(retries) == 1 and "option 3" in retries[0] and "not words" in retries[0]
    assert isinstance(result.output, DeferredToolRequests)
    (posed,) = result.output.calls
    assert posed.args_as_dict()["options"] == good
