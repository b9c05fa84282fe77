"""Is a question option words, or generated debris? (issue 29, item 3; pure).

A small model can emit options such as `-3.00,"False "true 'false &#`: pieces of JSON, stray
quotes and half an HTML entity. Such an option goes back to the model as a retry (the question
tools in server/agent/classroom/tools.py raise `ModelRetry` with `options_problem`'s text).

What counts as debris is judged on the option's prose only: `$...$` / `$$...$$` math and
`` `...` `` code spans are cut out first, so `$x^2$`, `$\\frac{1}{2}$`, `` `a[i] = "x"` `` and
`` `&amp;` `` stay legitimate. In the prose that remains, an option is debris when it has

- markup: an HTML tag (`<br>`, `</b>`) or an HTML entity (`&#`, `&#39;`, `&amp;`);
- a LaTeX command outside math (`\\frac`), or an unclosed code span (an odd backtick);
- a stray double quote: one that opens and never closes, closes and never opened (except an
  inch mark after a digit: `12"`), or stands between two letters or alone between spaces;
- a single quote that opens a quotation and never closes it (`'false`); apostrophes inside or
  after a word (`Newton's`, `students'`, `5'`) are words;
- unbalanced brackets: `(`/`[` against `)`/`]` as one family, so interval notation `[0, 1)`
  passes, and `{`/`}` on their own;
- a control character or U+FFFD (a broken byte).

Numbers (`-3.00`, `+1`, `50%`, `$5`), identifiers (`os.path.join`, `snake_case`), operators
(`**`, `<=`, `->`, `&&`) and plain math without dollars (`4x + 5e^2 - 6i`) are not debris.
"""

from __future__ import annotations

import re
import unicodedata

_MATH_BLOCK = re.compile(r"\$\$.+?\$\$", re.DOTALL)
_MATH_INLINE = re.compile(r"\$(?=\S)[^$\n]+?(?<=\S)\$")
_CODE = re.compile(r"`[^`]+`")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_ENTITY = re.compile(r"&#|&[A-Za-z][A-Za-z0-9]*;")
_LATEX = re.compile(r"\\[A-Za-z]")
_OPENERS = set(" \t([{,;:/-")


def _prose(text: str) -> str:
    """`text` with math and code spans replaced by a neutral word (`x`)."""
    text = _MATH_BLOCK.sub(" x ", text)
    text = _CODE.sub(" x ", text)
    return _MATH_INLINE.sub(" x ", text)


def _quote_problem(prose: str) -> str | None:
    """A stray double or opening single quote in `prose`, or None."""
    padded = f" {prose} "
    open_double = 0
    open_single = 0
    for i in range(1, len(padded) - 1):
        ch = padded[i]
        if ch not in "\"'":
            continue
        before, after = padded[i - 1], padded[i + 1]
        opens = before in _OPENERS or before in "\"'"
        closes = after.isspace() or (not after.isalnum() and after not in "\"'")
        if ch == '"':
            if opens and not after.isspace():
                open_double += 1
            elif closes and not before.isspace():
                if open_double:
                    open_double -= 1
                elif not before.isdigit():
                    return 'a closing double quote (") that was never opened'
            else:
                return 'a stray double quote (")'
        elif opens and after.isalnum():
            open_single += 1
        elif closes and open_single and not before.isspace():
            open_single -= 1
    if open_double:
        return 'a double quote (") that is never closed'
    if open_single:
        return "a single quote (') that is never closed"
    return None


def _bracket_problem(prose: str) -> str | None:
    """Unbalanced brackets in `prose`, or None. `(`/`[` close with `)`/`]` alike (intervals)."""
    round_depth = 0
    curly_depth = 0
    for ch in prose:
        if ch in "([":
            round_depth += 1
        elif ch in ")]":
            round_depth -= 1
        elif ch == "{":
            curly_depth += 1
        elif ch == "}":
            curly_depth -= 1
        if round_depth < 0 or curly_depth < 0:
            return f"a closing bracket ({ch}) that was never opened"
    if round_depth or curly_depth:
        return "a bracket that is never closed"
    return None


def option_debris(option: str) -> str | None:
    """Why `option` is not words, in plain words, or None when it reads as an answer.

    Args:
        option: one answer option as the model authored it (Markdown with `$...$` math).

    Returns:
        A short reason (e.g. "markup (&#)") or None.
    """
    if any(ch == "\ufffd" or (unicodedata.category(ch) == "Cc" and ch not in "\t\n") for ch in option):
        return "a control character or a broken byte"
    prose = _prose(option)
    if prose.count("`") % 2:
        return "an unclosed code span (`)"
    if match := _TAG.search(prose) or _ENTITY.search(prose):
        return f"markup ({match.group(0)})"
    if match := _LATEX.search(prose):
        return f"a LaTeX command outside $...$ ({match.group(0)}…)"
    return _quote_problem(prose) or _bracket_problem(prose)


def options_problem(options: list[str]) -> str | None:
    """The model-facing retry text when any option is debris, else None.

    Args:
        options: the options of a `quiz` or `ask_user_question` call, as authored.

    Returns:
        E.g. `option 3 ('-3.00,"False "true …') is not words: markup (&#). Each option must be a
        plain answer ...`, naming every bad option (1-based), or None when all read as answers.
    """
    bad = []
    for number, option in enumerate(options, start=1):
        reason = option_debris(option)
        if reason:
            shown = option if len(option) <= 60 else option[:57] + "…"
            bad.append(f"option {number} ({shown!r}) is not words: {reason}")
    if not bad:
        return None
    return (
        "; ".join(bad) + ". Each option must be a plain answer a learner can read: words, numbers, math in "
        "$...$, code in backticks; no markup, stray quotes or fragments. Call the tool again "
        "with fixed options."
    )
