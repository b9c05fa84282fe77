"""The blocks of a note that are never cut (issue 28, item 9): fenced code and display formulas.

A note is a sequence of lines; some runs of lines are one thing and mean nothing when cut in two:

- a fenced code block: an opening fence (three or more backticks or tildes, any indentation, an
  optional info string such as `python` or `dataviewjs`) up to the next line that is only a fence
  of the same character at least as long (CommonMark). An unclosed fence runs to the end of the
  note, as CommonMark reads it.
- a display formula over several lines: a line holding an odd number of `$$` opens one, the next
  line holding an odd number of `$$` closes it; or a line with a `\\[` (not `\\\\[`, LaTeX's line
  break with spacing) left open closes at the next line holding `\\]`. Inside a `$$` formula a
  `\\[` is part of the formula. A formula opened and never closed is not a block: its lines stay
  ordinary lines (the edge fixture `unbalanced-math.md`).

`note_blocks` finds them; each block carries the lines that reopen and close it around each piece
when a block longer than a whole part must be split (the model then still reads each piece as code
or as a formula, and no part begins with an orphan closing fence).

Pure: no IO. Linear in the note's lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
"""An opening fence: indentation, the fence (three or more backticks or tildes), the info string's
first word (the language, `""` when none)."""

_OPEN_BRACKET = re.compile(r"(?<!\\)\\\[")
_CLOSE_BRACKET = re.compile(r"(?<!\\)\\\]")

BlockKind = Literal["line", "code", "math"]


class Block(NamedTuple):
    """A run of a note's lines that is one thing (a named tuple: a note of 100,000 lines makes as
    many, cheaply).

    Attributes:
        kind: "line" (one ordinary line), "code" (a fenced code block) or "math" (a display
            formula over several lines).
        start, end: 0-based index of its first line, and one past its last.
        opener: the text that reopens it when it is split (the fence and language, "```python";
            "$$"; "\\["); "" for a line.
        closer: the text that closes it ("```", "$$", "\\]"); "" for a line.
        closed: whether the note closes it (False: an unclosed fence running to the end).
        lang: a code block's language, lower case ("" when none or not code).
    """

    kind: BlockKind
    start: int
    end: int
    opener: str = ""
    closer: str = ""
    closed: bool = True
    lang: str = ""


def closes_fence(line: str, fence: str) -> bool:
    """Whether `line` closes a block opened by `fence` (only the same character, at least as many)."""
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def _odd_dollars(line: str) -> bool:
    return line.count("$$") % 2 == 1


def _opens_bracket(line: str) -> bool:
    """Whether a `\\[` of the line is left open (no `\\]` after the last `\\[`)."""
    opens = [m.start() for m in _OPEN_BRACKET.finditer(line)]
    if not opens:
        return False
    return _CLOSE_BRACKET.search(line, opens[-1]) is None


def note_blocks(lines: Sequence[str]) -> list[Block]:
    """The note's lines grouped into blocks, in order, covering every line exactly once.

    Args:
        lines: the note's lines (its text split at "\\n").

    Returns:
        Blocks with `blocks[0].start == 0`, each `start` the previous `end`, the last `end`
        `len(lines)`.
    """
    count = len(lines)
    # where the next line with an odd number of `$$`, and the next with a `\]`, are (for openers
    # that never close: found in one pass backwards, so the walk stays linear)
    fences = [FENCE.match(line) if ("`" in line or "~" in line) else None for line in lines]
    odd = [("$$" in line and _odd_dollars(line)) for line in lines]
    next_dollars = [count] * (count + 1)
    next_bracket = [count] * (count + 1)
    next_fence = [count] * (count + 1)
    for i in range(count - 1, -1, -1):
        line = lines[i]
        next_dollars[i] = i if odd[i] else next_dollars[i + 1]
        closes = "\\]" in line and _CLOSE_BRACKET.search(line) is not None
        next_bracket[i] = i if closes else next_bracket[i + 1]
        next_fence[i] = i if fences[i] else next_fence[i + 1]
    blocks: list[Block] = []
    i = 0
    while i < count:
        line = lines[i]
        fence = fences[i]
        if fence:
            mark, lang = fence.group(2), fence.group(3).lower()
            end = i + 1
            while end < count and not closes_fence(lines[end], mark):
                end += 1
            closed = end < count
            end = end + 1 if closed else count
            opener = (mark + fence.group(3))[:60]
            blocks.append(Block("code", i, end, opener, mark, closed, lang))
            i = end
            continue
        if odd[i] and next_dollars[i + 1] < count:
            end = next_dollars[i + 1] + 1
            if next_fence[i + 1] >= end - 1:  # a fence between: the code wins, no formula
                blocks.append(Block("math", i, end, "$$", "$$"))
                i = end
                continue
        elif not odd[i] and "\\[" in line and _opens_bracket(line) and next_bracket[i + 1] < count:
            end = next_bracket[i + 1] + 1
            if next_fence[i + 1] >= end - 1:
                blocks.append(Block("math", i, end, "\\[", "\\]"))
                i = end
                continue
        blocks.append(Block("line", i, i + 1))
        i += 1
    return blocks
