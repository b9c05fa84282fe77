"""Where a note is cut, and what of its code reaches the model (issue 28, item 9).

A note was split inside a fenced code block (its second part began with an orphan closing fence)
and 55 KB of TikZ source went to the model as prose. Parts are now never cut inside a fenced code
block or a display formula that fits in one part; a block longer than a part is cut at line
boundaries with each piece fenced (or put between `$$`) again; Obsidian plugin code is skipped and
named. Checked on made-up notes, on the shared fixtures read where they are (display formulas of
the German analysis notes, code of the system design primer), and on notes Hypothesis writes.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.library.note_blocks import Block, note_blocks
from server.core.library.note_text import prepare_note
from server.core.library.notes import NoteChunk, chunk_note, decode_note
from tests.shared import NOTES

BUDGET = 500  # the floor: 2,000 characters a part


def _lines(chunks: list[NoteChunk]) -> list[str]:
    return [line for c in chunks for line in c.text.split("\n")]


def _whole(chunk: NoteChunk) -> list[Block]:
    """The chunk's own blocks; every code block in it must be closed in it."""
    return note_blocks(chunk.text.split("\n"))


# -- the blocks ----------------------------------------------------------------------------------------


def test_the_blocks_of_a_note() -> None:
    lines = [
        "Intro",  # 0
        "```python",  # 1
        "x = '$$'",  # 2: no formula inside code
        "```",  # 3
        "$$",  # 4
        "\\begin{aligned} a &= b \\\\[2pt] \\[ c \\end{aligned}",  # 5: \\[ and \[ inside $$ stay
        "$$",  # 6
        "\\[",  # 7
        "x^2",  # 8
        "\\]",  # 9
        "$$a$$ inline, one line",  # 10
        "~~~~",  # 11
        "```",  # 12: a shorter or other fence does not close ~~~~
        "~~~~~",  # 13
        "$$ never closed",  # 14
        "last",  # 15
    ]
    blocks = [(b.kind, b.start, b.end) for b in note_blocks(lines)]
    assert blocks == [
        ("line", 0, 1),
        ("code", 1, 4),
        ("math", 4, 7),
        ("math", 7, 10),
        ("line", 10, 11),
        ("code", 11, 14),
        ("line", 14, 15),
        ("line", 15, 16),
    ]


def test_an_unclosed_fence_runs_to_the_end_and_a_lone_bracket_is_a_line() -> None:
    blocks = note_blocks(["a \\\\[2pt] b", "\\[ x", "```js", "code"])
    assert [(b.kind, b.start, b.end, b.closed) for b in blocks] == [
        ("line", 0, 1, True),
        ("line", 1, 2, True),
        ("code", 2, 4, False),
    ]


# -- parts never cut inside a block --------------------------------------------------------------------


def test_a_code_block_that_fits_is_never_cut() -> None:
    text = "\n".join(
        ["prose line " * 15] * 10 + ["```python", *(f"x{i} = {i}" for i in range(120)), "```", "end"]
    )
    chunks = chunk_note(text, BUDGET)
    assert len(chunks) == 2
    assert chunks[1].text.startswith("```python\n") and chunks[1].text.endswith("```\nend")
    assert "\n".join(c.text for c in chunks) == text


def test_a_code_block_longer_than_a_part_is_fenced_again_in_every_piece() -> None:
    body = [f"    step({i}, '{'x' * 20}')" for i in range(400)]
    text = "\n".join(["# Code", "~~~~python", *body, "~~~~", "After."])
    chunks = chunk_note(text, BUDGET)
    assert len(chunks) > 3
    assert all(c.tokens <= BUDGET for c in chunks)
    for chunk in chunks:
        assert all(b.closed for b in _whole(chunk) if b.kind == "code"), chunk.text[:80]
        assert not chunk.text.startswith("~~~~\n")  # no orphan closing fence
    assert [c.text.split("\n")[0] for c in chunks[1:]] == ["~~~~python"] * (len(chunks) - 1)
    wrappers = {"~~~~python", "~~~~"}
    assert [line for line in _lines(chunks) if line not in wrappers] == [
        line for line in text.split("\n") if line not in wrappers
    ]


def test_a_long_formula_is_put_between_dollars_again() -> None:
    rows = [f"a_{{{i}}} &= b_{{{i}}} + c_{{{i}}} \\\\" for i in range(300)]
    text = "\n".join(["Solve:", "$$\\begin{aligned}", *rows, "\\end{aligned}$$", "Done."])
    chunks = chunk_note(text, BUDGET)
    assert len(chunks) > 2
    assert all(c.text.count("$$") % 2 == 0 for c in chunks)
    assert all(c.tokens <= BUDGET for c in chunks)


def test_a_line_of_code_longer_than_a_part_is_split_and_each_piece_fenced() -> None:
    text = "```\n" + "y" * 5000 + "\n```"
    chunks = chunk_note(text, BUDGET)
    assert len(chunks) == 3 and all(c.tokens <= BUDGET for c in chunks)
    assert all(c.text.startswith("```\n") and c.text.endswith("\n```") for c in chunks)
    assert "".join(c.text.removeprefix("```\n").removesuffix("\n```") for c in chunks) == "y" * 5000


def test_the_german_notes_formulas_are_never_cut() -> None:
    """analysis-1-definitions.de.md holds 66 `$$` and formulas over several lines; cutting at line
    boundaries alone split one of them at 69 of the budgets from 500 to 2,990 tokens."""
    path = NOTES / "analysis-1-definitions.de.md"
    text = prepare_note(path.name, decode_note(path.name, path.read_bytes())).prose
    for budget in range(BUDGET, 1000, 10):  # the line cut alone split one at 530, 540, 560, ...
        chunks = chunk_note(text, budget)
        assert len(chunks) > 3
        assert all(c.text.count("$$") % 2 == 0 for c in chunks), budget
        assert "\n".join(c.text for c in chunks).split() == text.split()


@pytest.mark.parametrize(
    "name", ["system-design-primer.large.en.md", "system-design-primer.large.zh-Hans.md"]
)
def test_the_primers_code_blocks_are_never_cut(name: str) -> None:
    text = prepare_note(name, decode_note(name, (NOTES / name).read_bytes())).prose
    for budget in (BUDGET, 700, 1500):
        chunks = chunk_note(text, budget)
        for chunk in chunks:
            assert all(b.closed for b in _whole(chunk) if b.kind == "code"), chunk.text[:200]
        assert "\n".join(c.text for c in chunks).split() == text.split()
        assert all(a.last_line < b.first_line for a, b in itertools.pairwise(chunks))


# -- generated notes -----------------------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\n\r`~$\\"), max_size=120)


@st.composite
def _block(draw: st.DrawFn) -> list[str]:
    kind = draw(st.sampled_from(["prose", "code", "dollars", "brackets"]))
    body = draw(st.lists(_TEXT, max_size=draw(st.sampled_from([3, 30, 80]))))
    if kind == "prose":
        return body or ["p"]
    if kind == "code":
        fence = draw(st.sampled_from(["```", "````", "~~~"]))
        lang = draw(st.sampled_from(["", "python", "js"]))
        inner = draw(st.sampled_from(["", "$$", "\\[", "``` inner", "~~"]))
        return [fence + lang, *body, inner, fence]
    if kind == "dollars":
        return ["$$", *body, "\\[ kept \\] \\\\[2pt]", "$$"]
    return ["\\[", *body, "\\]"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(_TEXT, st.sampled_from(["```", "~~~~ js", "$$", "$$ a $$", "\\[", "\\]", "x \\\\[2pt]"])),
        min_size=1,  # a text split at line ends has a line at least
    )
)
def test_the_blocks_cover_every_line_once_in_order(lines: list[str]) -> None:
    blocks = note_blocks(lines)
    assert [b.start for b in blocks] == [0, *(b.end for b in blocks[:-1])]
    assert blocks[-1].end == len(lines)
    assert all(b.end > b.start for b in blocks)
    assert all(b.closed or (b.kind == "code" and b.end == len(lines)) for b in blocks)


@settings(max_examples=150, deadline=None)
@given(st.lists(_block(), min_size=1, max_size=12), st.sampled_from([BUDGET, 800]))
def test_no_part_is_ever_cut_inside_a_block(blocks: list[list[str]], budget: int) -> None:
    lines = [line for block in blocks for line in block]
    text = "\n".join(lines)
    chunks = chunk_note(text, budget)
    assert all(c.tokens <= budget for c in chunks)
    for chunk in chunks:
        own = _whole(chunk)
        assert all(b.closed for b in own if b.kind == "code"), chunk.text
        outside = [chunk.text.split("\n")[i] for b in own if b.kind != "code" for i in range(b.start, b.end)]
        assert sum(line.count("$$") for line in outside) % 2 == 0, chunk.text
    # nothing lost: the note's lines, in order, with only reopening and closing lines added
    produced = iter(_lines(chunks))
    assert all(any(line == out for out in produced) for line in lines if line.strip())
    # a block that fits in a part lies in one part
    fits = [b for b in note_blocks(lines) if sum(len(x) + 1 for x in lines[b.start : b.end]) <= budget * 4]
    for block in fits:
        if block.end - block.start > 1 and any(x.strip() for x in lines[block.start : block.end]):
            assert any(c.first_line <= block.start + 1 and block.end <= c.last_line for c in chunks), block


# -- plugin code: skipped and named, or sent marked as code --------------------------------------------

TIKZ = (
    "```tikz\n\\begin{document}\n\\begin{tikzpicture}\n"
    + "\\draw (0,0) -- (1,1);\n" * 2500
    + "\\end{tikzpicture}\n\\end{document}\n```\n"
)


def test_plugin_code_is_skipped_and_named() -> None:
    note = prepare_note(
        "n.md",
        "# Cosets\n```dataviewjs\ndv.table(['a'], [])\n```\nA coset is a translate.\n"
        f"{TIKZ}```dataview\nLIST\n```\n```latex\n\\begin{{tikzpicture}}\\end{{tikzpicture}}\n```\n"
        "```tasks\nnot done\n```\n",
    )
    assert note.prose == "# Cosets\nA coset is a translate.\n"
    assert note.dropped == ("DataviewJS scripts", "TikZ drawing code", "Dataview queries", "Tasks queries")
    assert len(TIKZ) > 50_000


def test_the_note_content_code_reaches_the_model_fenced() -> None:
    text = (
        "Sort:\n```python\ndef f():\n    return 1\n```\n```mermaid\ngraph TD; A-->B\n```\n"
        "```latex\n\\frac{a}{b}\n```\n"
    )
    note = prepare_note("n.md", text)
    assert note.prose == text and note.dropped == ()


def test_an_unclosed_plugin_block_is_kept_as_code() -> None:
    note = prepare_note("n.md", "Intro.\n```dataview\nLIST FROM #a\nmore words\n")
    assert note.prose == "Intro.\n```dataview\nLIST FROM #a\nmore words\n" and note.dropped == ()
