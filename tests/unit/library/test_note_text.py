"""Notes read as notes (issue 16, item 4): front matter, Obsidian syntax, non-prose, padding and
escaped headings, on made-up notes and on the shared fixtures read where they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.core.library.note_text import parse_front_matter, prepare_note, split_front_matter
from server.core.library.notes import NoteRefused, chunk_note, decode_note
from tests.shared import NOTES

GOOD = sorted(NOTES.glob("*.md"))
EDGE = sorted((NOTES / "edge").glob("*.md"))

EXCALIDRAW = """---
excalidraw-plugin: parsed
tags: [excalidraw]
---
==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠==

# Excalidraw Data
## Text Elements
Mitochondria ^a1b2c3

%%
## Drawing
```json
{"type": "excalidraw", "elements": [{"strokeWidth": 1, "strokeColor": "#000"}]}
```
%%
"""


# -- front matter ------------------------------------------------------------------------------------


def test_front_matter_is_metadata_not_prose() -> None:
    note = prepare_note(
        "a.md",
        "---\ntitle: Cell biology\naliases: [cells, biology of cells]\ntags:\n  - bio\n  - '#exam'\n"
        "created: 2024-01-01\n---\n# Cells\n\nA cell is the unit of life.\n",
    )
    assert note.title == "Cell biology"
    assert note.aliases == ("cells", "biology of cells")
    assert note.tags == ("bio", "exam")
    assert note.prose == "# Cells\n\nA cell is the unit of life.\n"
    assert "created" not in note.prose and "---" not in note.prose


def test_front_matter_shapes_and_nested_values() -> None:
    meta = parse_front_matter(
        ['title: "Quoted: yes"', "tags: a, b", "nested:", "  inner: 1", "text: |", "  block line"]
    )
    assert meta == {"title": "Quoted: yes", "tags": "a, b", "nested": [], "text": []}
    assert prepare_note("n.md", "---\ntags: a, b\n---\nBody.\n").tags == ("a", "b")


@pytest.mark.parametrize(
    "block",
    [
        '---\ntitle: "unterminated\ntags: [a, b\n---\nBody.\n',
        "---\nthis is not yaml at all\n---\nBody.\n",
        "---\ntitle: never closed\n\nBody.\n",
    ],
)
def test_a_broken_front_matter_stays_text(block: str) -> None:
    meta, body = split_front_matter(block)
    assert meta is None and body == block
    assert "Body." in prepare_note("b.md", block).prose


# -- Obsidian syntax ---------------------------------------------------------------------------------


def test_wiki_links_become_words_and_embeds_their_names() -> None:
    prose = prepare_note(
        "o.md",
        "See [[Krebs cycle]], [[Glycolysis|the first step]] and [[Cell#Membrane]].\n"
        "Also [[#Local heading]] and [[Page#^block1]].\n"
        "![[diagram.png]]\n![[Photosynthesis]]\n",
    ).prose
    assert prose == (
        "See Krebs cycle, the first step and Cell > Membrane.\n"
        "Also Local heading and Page.\n\nPhotosynthesis\n"
    )


def test_callouts_keep_title_and_body_without_the_marker() -> None:
    prose = prepare_note(
        "c.md", "> [!note] Key idea\n> Enzymes lower activation energy.\n\n> [!warning]-\n> Careful.\n"
    ).prose
    assert prose == "> Key idea\n> Enzymes lower activation energy.\n\n> Careful.\n"


def test_obsidian_comments_are_dropped() -> None:
    prose = prepare_note("c.md", "Kept %%hidden%% text.\n%%\nsecret\nlines\n%%\nAfter.\n").prose
    assert prose == "Kept  text.\n\nAfter.\n" or prose == "Kept text.\n\nAfter.\n"


# -- non-prose ---------------------------------------------------------------------------------------


def test_an_excalidraw_drawing_is_refused_with_a_plain_reason() -> None:
    with pytest.raises(NoteRefused, match=r"drawing\.excalidraw\.md: an Excalidraw drawing"):
        prepare_note("drawing.excalidraw.md", EXCALIDRAW)
    without_front_matter = EXCALIDRAW.split("---\n", 2)[2]
    with pytest.raises(NoteRefused, match="Excalidraw"):
        prepare_note("d.md", without_front_matter)


def test_a_drawing_block_inside_a_note_is_dropped_and_the_prose_kept() -> None:
    drawing = json.dumps({"elements": [{"strokeWidth": i, "x": i * 3.5} for i in range(200)]})
    note = prepare_note(
        "n.md",
        "# Notes\n\nOsmosis moves water.\n\n"
        f"```compressed-json\nN4Ig{'A' * 50}\n```\n\n```json\n{drawing}\n```\n",
    )
    assert note.prose == "# Notes\n\nOsmosis moves water.\n"
    assert note.dropped == ("JSON data",)


def test_a_small_json_example_is_kept() -> None:
    note = prepare_note("n.md", 'An object:\n\n```json\n{"a": 1}\n```\n')
    assert '{"a": 1}' in note.prose and note.dropped == ()


def test_base64_blobs_and_data_urls_are_dropped() -> None:
    blob = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg" * 4
    )
    note = prepare_note(
        "b.md", f"# Image\n\nA picture: ![dot](data:image/png;base64,{blob}) here.\n\n{blob}\n\nEnd.\n"
    )
    assert blob[:40] not in note.prose
    assert note.prose == "# Image\n\nA picture: here.\n\nEnd.\n"
    assert set(note.dropped) == {"data: URLs", "base64 data"}


def test_a_long_word_or_hash_is_not_a_blob() -> None:
    text = "Hash " + "0123456789abcdef" * 16 + " and " + "a" * 300 + ".\n"
    assert prepare_note("h.md", text).prose == text


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"type": "excalidraw", "elements": [{"strokeWidth": 1}]}),
        "[1, 2, 3]",
        '{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}\nend\n',
    ],
)
def test_a_json_file_is_refused(text: str) -> None:
    with pytest.raises(NoteRefused, match="JSON"):
        prepare_note("data.md", text)


def test_a_file_of_only_blobs_is_refused_naming_what_it_held() -> None:
    blob = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0123456789abcdefghijklmn" * 5
    with pytest.raises(NoteRefused, match=r"only\.md: holds no prose .*base64 data"):
        prepare_note("only.md", f"{blob}\n\n{blob}\n")


# -- whitespace and escaped headings -----------------------------------------------------------------


def test_padding_in_tables_and_line_ends_is_collapsed() -> None:
    row = "| " + " | ".join(f"cell{i}" + " " * 120 for i in range(5)) + " |   \t\n"
    rule = "|" + "|".join("-" * 120 for _ in range(5)) + "|\n"
    text = "# Table\n\n\n\n" + row + rule + row * 300
    note = prepare_note("t.md", text)
    assert "  " not in note.prose and "----" not in note.prose and "\n\n\n" not in note.prose
    assert len(note.prose) < len(text) / 10
    assert note.prose.splitlines()[2] == "| cell0 | cell1 | cell2 | cell3 | cell4 |"
    assert note.prose.splitlines()[3] == "|---|---|---|---|---|"
    assert len(chunk_note(note.prose, 2000)) < len(chunk_note(text, 2000))


def test_indentation_and_code_blocks_keep_their_spaces() -> None:
    text = "- item\n    - nested\n\n```python\ndef f():\n    return  1\n```\n"
    assert prepare_note("i.md", text).prose == text


def test_headings_reach_the_model_unescaped() -> None:
    prose = prepare_note("h.md", "\\#Definition\n\n## \\#2 Satz\n\nSee \\#tag.\n\n```\n\\# kept\n```\n").prose
    assert prose == "#Definition\n\n## #2 Satz\n\nSee #tag.\n\n```\n\\# kept\n```\n"


# -- the shared fixtures, read where they are ------------------------------------------------------


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_every_fixture_note_keeps_its_prose(path: Path) -> None:
    text = decode_note(path.name, path.read_bytes())
    note = prepare_note(path.name, text)
    assert note.dropped == ()
    assert 0.9 * len(text.split()) <= len(note.prose.split()) <= len(text.split())
    assert chunk_note(note.prose, 8192)


def test_the_chinese_and_german_notes_keep_their_words() -> None:
    zh = prepare_note("zh.md", (NOTES / "system-design-primer.large.zh-Hans.md").read_text("utf-8")).prose
    assert "系统设计" in zh and "负载均衡器" in zh
    de = prepare_note("de.md", (NOTES / "analysis-1-definitions.de.md").read_text("utf-8")).prose
    assert "Erstellung/Änderung von MathJax" in de


@pytest.mark.parametrize("path", EDGE, ids=lambda p: p.name)
def test_every_edge_file_gets_an_honest_outcome(path: Path) -> None:
    try:
        text = decode_note(path.name, path.read_bytes())
    except NoteRefused as exc:
        assert path.name in str(exc)
        return
    note = prepare_note(path.name, text)
    assert note.prose.strip() and note.dropped == ()
    if path.name == "broken-front-matter.md":
        assert 'title: "unterminated' in note.prose and "Light reactions" in note.prose
        assert note.title is None
    if path.name == "unbalanced-math.md":
        assert "\\(x+1 unmatched" in note.prose


def test_a_data_url_ends_where_its_base64_ends() -> None:
    note = prepare_note("d.md", "A data:image/png;base64,iVBORw0KGgoAAAANSUhEUg here and there.\n")
    assert note.prose == "A here and there.\n" and note.dropped == ("data: URLs",)
