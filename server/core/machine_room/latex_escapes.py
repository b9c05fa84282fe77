"""LaTeX commands healed from JSON string escapes (trial finding 2).

A small model writing tool-call arguments by hand writes `"\\frac{1}{2}"` as `"\frac{1}{2}"`: valid
JSON, where `\f` is a form feed, so the question shows a box and "rac". The offline model's tool
arguments are passed through `heal_latex` after parsing. Only the unambiguous cases are healed: a
form feed or backspace followed by a letter (no one means a form feed before a word), and a tab or
carriage return followed by a known LaTeX command's remaining letters (`\text`, `\times`, `\theta`,
`\right`, `\rho`, …). A newline before letters (`\nu`, `\neq`) is left alone: it is usually a
newline. Pure.
"""

from __future__ import annotations

import re
from typing import Any

_TAB_COMMANDS = ("textbf", "textit", "text", "times", "theta", "tfrac", "tilde", "triangle", "tanh", "tan",
                 "tau", "top", "to")  # fmt: skip
_CR_COMMANDS = ("rightarrow", "right", "rho", "rangle", "rfloor", "rceil", "rvert", "rm")

_PATTERN = re.compile(
    r"\x0c(?=[A-Za-z])|\x08(?=[A-Za-z])"
    rf"|\t(?=(?:{'|'.join(c[1:] for c in _TAB_COMMANDS)})(?![A-Za-z]))"
    rf"|\r(?=(?:{'|'.join(c[1:] for c in _CR_COMMANDS)})(?![A-Za-z]))"
)
_BACK = {"\x0c": "\\f", "\x08": "\\b", "\t": "\\t", "\r": "\\r"}


def heal_latex(text: str) -> str:
    """`text` with control characters that stand for a LaTeX command's backslash and first letter
    put back (`"\\x0crac"` -> `"\\\\frac"`); anything else unchanged."""
    return _PATTERN.sub(lambda m: _BACK[m.group(0)], text)


def heal_latex_in(value: Any) -> Any:
    """`heal_latex` applied to every string in a JSON-shaped value (dicts, lists, strings)."""
    if isinstance(value, str):
        return heal_latex(value)
    if isinstance(value, list):
        return [heal_latex_in(v) for v in value]
    if isinstance(value, dict):
        return {k: heal_latex_in(v) for k, v in value.items()}
    return value


_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)", re.DOTALL)


def heal_json_escapes(text: str) -> str:
    """JSON text whose invalid string escapes (`\\infty`, `\\left`, `\\underline`: a backslash before
    a character JSON does not escape) get their backslash doubled, so the text parses and the LaTeX
    survives; valid escapes are kept (then `heal_latex` sees their decoded characters)."""

    def one(match: re.Match[str]) -> str:
        rest = match.group(1)
        return match.group(0) if len(rest) == 5 or rest in '"\\/bfnrt' else "\\\\" + rest

    return _ESCAPE.sub(one, text)
