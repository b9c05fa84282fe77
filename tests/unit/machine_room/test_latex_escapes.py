"""LaTeX escapes decoded as JSON control characters are healed (trial finding 2)."""

from __future__ import annotations

import json

import pytest

from server.core.machine_room.latex_escapes import heal_latex, heal_latex_in


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        (r'"$\frac{1}{2}$"', r"$\frac{1}{2}$"),
        (r'"$\text{m} \times 3$"', r"$\text{m} \times 3$"),
        (r'"$\beta + \theta \to x$"', r"$\beta + \theta \to x$"),
        (r'"$( x \right)$ and $\rho$"', r"$( x \right)$ and $\rho$"),
    ],
)
def test_latex_written_with_single_backslashes_is_healed(written: str, meant: str) -> None:
    assert heal_latex(json.loads(written)) == meant


@pytest.mark.parametrize(
    "text",
    ["line one\nnext line", "a\ttable\tcell", "col\t3", "a\rreturn", "tab\ttogether", "\x0c", "\x0c1"],
)
def test_real_control_characters_are_left_alone(text: str) -> None:
    assert heal_latex(text) == text


def test_every_string_in_the_arguments_is_healed() -> None:
    args = json.loads(r'{"question": "\frac12?", "options": ["\text{a}", "b"], "correct": 0}')
    assert heal_latex_in(args) == {"question": r"\frac12?", "options": [r"\text{a}", "b"], "correct": 0}


def test_invalid_json_escapes_keep_their_latex() -> None:
    from server.core.machine_room.latex_escapes import heal_json_escapes

    text = r'{"question": "$\infty$, $\left(\frac12\right)$, \underline{x}, \u00e9, \\n, \"q\""}'
    healed = json.loads(heal_json_escapes(text))["question"]
    assert heal_latex(healed) == r'$\infty$, $\left(\frac12\right)$, \underline{x}, é, \n, "q"'
    valid = r'{"a": "x\ny\t\"z\"\\"}'
    assert heal_json_escapes(valid) == valid


def test_the_offline_models_tool_arguments_are_healed() -> None:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    from server.agent.machine_room.engine import healed_tool_args

    raw = r'{"question": "What is $\frac{1}{2} \times \infty$?", "options": ["a"]}'
    response = ModelResponse(
        parts=[TextPart(r"\frac"), ToolCallPart("quiz", raw, "c1"), ToolCallPart("q", "{bad")]
    )
    healed = healed_tool_args(response)
    assert json.loads(healed.parts[1].args)["question"] == r"What is $\frac{1}{2} \times \infty$?"  # type: ignore[union-attr,arg-type]
    assert healed.parts[0] == response.parts[0] and healed.parts[2] == response.parts[2]
