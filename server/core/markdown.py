"""Markdown writing shared by the exports (issue 31: a lesson, `core/classroom/session_markdown.py`;
a practice set, `core/practice/set_markdown.py`): front matter, fences that cannot swallow what
follows, quoted blocks and table cells. Pure; every function takes and returns `str`.

The target readers are Obsidian and GitHub (CommonMark + GFM tables, YAML front matter, `$…$`
math kept as source, mermaid blocks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

import orjson

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_NOT_YAML_PRINTABLE = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
"""Characters a YAML stream may not hold even quoted (YAML 1.1 c-printable: DEL, C1 controls,
U+FFFE/U+FFFF), and the line breaks a quoted YAML scalar would fold (NEL, U+2028, U+2029). JSON
leaves them raw; a YAML reader then refuses the front matter, or reads another text."""


def yaml_value(value: str | int | float | None) -> str:
    """A YAML scalar for front matter: numbers as they are, None as `null`, text as a JSON string
    (a JSON string is a YAML double-quoted scalar, so any text, colons, quotes and newlines
    included, reads back as itself; characters YAML may not hold raw, `_NOT_YAML_PRINTABLE`, as
    `\\uXXXX` escapes, which both read back)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = orjson.dumps(value).decode()  # JSON escapes what YAML must not hold, but for these:
    return _NOT_YAML_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def front_matter(fields: Mapping[str, str | int | float | list[str] | None]) -> str:
    """`---` YAML front matter `---` and a blank line: one `key: value` line per field (keys must be
    plain words), a list as `key:` then `  - item` lines (an empty list as `[]`)."""
    lines = ["---"]
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{key}: []" if not value else f"{key}:")
            lines.extend(f"  - {yaml_value(item)}" for item in value)
        else:
            lines.append(f"{key}: {yaml_value(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n"


def closed_fences(text: str) -> str:
    """`text` (Markdown) with a code fence it leaves open closed at its end, so that it cannot turn
    the rest of the document into code. A fence closes with a line of at least as many of the same
    character and nothing else (CommonMark); indented code is left alone."""
    open_fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if match is None:
            continue
        marks, rest = match.group(1), match.group(2)
        if open_fence is None:
            if not (marks[0] == "`" and "`" in rest):  # a backtick fence's info has no backtick
                open_fence = marks
        elif marks[0] == open_fence[0] and len(marks) >= len(open_fence) and not rest.strip():
            open_fence = None
    if open_fence is None:
        return text
    return text + ("" if text.endswith("\n") else "\n") + open_fence


def block(text: str) -> str:
    """A piece of Markdown as a block of its own: fences closed, surrounding blank lines trimmed,
    ended by one blank line (empty text: nothing)."""
    body = closed_fences(text.strip("\n")).rstrip()
    return body + "\n\n" if body.strip() else ""


def quoted(text: str) -> str:
    """`text` as a block quote: every line prefixed with `> ` (`>` for an empty line), fences
    closed first so a quoted fence ends inside the quote."""
    body = closed_fences(text.strip("\n")).rstrip()
    return "\n".join(f"> {line}" if line.strip() else ">" for line in body.split("\n")) + "\n\n"


def one_line(text: str) -> str:
    """Text on one line: runs of whitespace (newlines included) become one space."""
    return " ".join(text.split())


def cell(text: str) -> str:
    """A GFM table cell: one line, `|` escaped."""
    return one_line(text).replace("|", "\\|")


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> Iterator[str]:
    """A GFM table's lines (each `\\n`-ended), cells escaped with `cell`; then a blank line."""
    head = [cell(h) for h in header]
    yield "| " + " | ".join(head) + " |\n"
    yield "|" + "|".join(" --- " for _ in head) + "|\n"
    for row in rows:
        yield "| " + " | ".join(cell(c) for c in row) + " |\n"
    yield "\n"


def link_text(text: str) -> str:
    """Text for inside `[...]` of a link: one line, brackets escaped."""
    return one_line(text).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def count(n: int) -> str:
    """1234 -> "1,234"."""
    return f"{n:,}"


def link_url(url: str) -> str:
    """A URL for inside `(...)` of a link: characters that would end or break it percent-encoded."""
    return (
        url.replace(" ", "%20")
        .replace("(", "%28")
        .replace(")", "%29")
        .replace("<", "%3C")
        .replace(">", "%3E")
    )


def chunked(pieces: Iterable[str], size: int = 64 * 1024) -> Iterator[bytes]:
    """`pieces` encoded as UTF-8 (a lone surrogate, which is not text, as `?`) and gathered into
    blocks of at least `size` bytes (the last one may be shorter): a streamed answer goes out in a
    few large writes, holding at most one block."""
    held: list[bytes] = []
    length = 0
    for piece in pieces:
        data = piece.encode("utf-8", "replace")  # a lone surrogate becomes "?", never an error
        held.append(data)
        length += len(data)
        if length >= size:
            yield b"".join(held)
            held, length = [], 0
    if held:
        yield b"".join(held)
