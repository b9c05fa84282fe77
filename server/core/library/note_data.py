"""What of a note is data, not prose (issue 16, item 4; issue 28, item 1): drawings and JSON.

- `drawing_kind`: whether a file is an Excalidraw or tldraw drawing (refused whole).
- `whole_json`: whether the body is one JSON document (refused whole).
- `json_share`: the share of the body's non-blank characters outside fenced blocks that parse as
  JSON objects or arrays, a line alone or a run of lines; above `MOSTLY_JSON` the file is refused.
  Data is only what parses: a line led by a wiki link (`[[Group]] is ...`), `[a, b]` or
  `{x | x > 0}` is prose. Linear in the body.

Split from note_text.py, which reads the prose. Pure: no IO.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re

from server.core.library.note_blocks import FENCE, closes_fence

MOSTLY_JSON = 0.6
"""Share of a file's non-blank characters (outside fenced blocks) that are JSON data (lines, or runs
of lines, that parse as a JSON object or array) above which it is refused."""


def drawing_kind(meta: dict[str, str | list[str]] | None, body: str) -> str | None:
    """What drawing the file is ("an Excalidraw drawing", "a tldraw drawing"), or None.

    Excalidraw (obsidian-excalidraw-plugin): an `excalidraw-plugin` front matter key, an
    `# Excalidraw Data` heading or the "Switch to EXCALIDRAW VIEW" banner. tldraw (the Obsidian
    tldraw plugins): a `tldraw-...` front matter key or the "START OF TLDRAW DATA" marker of its
    data block."""
    keys = [k.lower() for k in meta] if meta is not None else []
    if any(k.startswith("excalidraw-plugin") for k in keys):
        return "an Excalidraw drawing"
    if re.search(r"^#{1,6} Excalidraw Data\s*$", body, re.MULTILINE) or ("Switch to EXCALIDRAW VIEW" in body):
        return "an Excalidraw drawing"
    if any(k.startswith("tldraw") for k in keys) or _TLDRAW_DATA.search(body):
        return "a tldraw drawing"
    return None


_TLDRAW_DATA = re.compile(r"START[ _]OF[ _]TLDRAW[ _]DATA", re.IGNORECASE)


def whole_json(body: str) -> bool:
    """Whether the whole body (stripped) parses as one JSON object or array."""
    stripped = body.strip()
    if stripped[:1] not in ("{", "["):
        return False
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):  # nested deeper than Python's stack: not read as data
        return False
    return True


def json_share(body: str) -> float:
    """Share of the non-blank characters outside fenced blocks (those are judged per block) that are
    data: in a line that parses as a JSON object or array by itself, or in a run of lines that
    together parse as one (pretty-printed JSON, starting at a line that begins with `{` or `[`
    and ending at a line end). Nothing else is data: a line led by a wiki link (`[[Group]] is ...`),
    a Markdown link, a footnote mark or a table of links does not parse, so it is prose (issue 28,
    item 1).

    Linear in the body: a run that parses is skipped whole; the characters read by runs that fail
    are capped (`_JSON_SCAN` times the body), after which only single lines are tried.
    """
    lines = body.split("\n")
    inside = _in_fences(lines)
    starts = list(itertools.accumulate((len(x) + 1 for x in lines[:-1]), initial=0))
    total = data = 0
    budget = _JSON_SCAN * len(body) + 10_000
    i = 0
    while i < len(lines):
        line = lines[i]
        size = len(line.strip())
        if inside[i] or not size:
            i += 1
            continue
        total += size
        if not _JSON_START.match(line):
            i += 1
            continue
        end, spent = _json_run(body, starts, i, budget > 0)
        budget -= spent
        if end > i:
            run = sum(len(x.strip()) for x in lines[i + 1 : end])
            total += run
            data += size + run
            i = end
            continue
        i += 1
    return data / total if total else 0.0


_JSON_START = re.compile(r'\s*[\[{](?:\s*[\[{])*\s*(?:["\d\-tfn\]}]|$)')
"""What a line that opens a JSON object or array begins with: brackets, then a value's first
character (or a closing bracket, or the line's end). `[[Group]] is ...`, `[a, b]` and
`{x | x > 0}` are turned away here, without a parse."""

_JSON_SCAN = 4
"""How many times the body's length runs of lines that turn out not to be JSON may read in all."""

_DECODER = json.JSONDecoder()


def _json_run(body: str, starts: list[int], start: int, multiline: bool) -> tuple[int, int]:
    """(one past the last line of the JSON object or array starting at line `start`, or `start`
    when none; characters read past the line). `starts`: each line's offset in `body`.
    `multiline`: whether a value may run over the following lines.

    The line is parsed alone first. A line that fails inside itself (`[[Group]] is ...` fails at
    its second character) cannot start a longer value either: the parser reads the same
    characters. Only a line that is a JSON prefix cut at its end (`[`, `{"a": 1,`) is read on,
    in windows that end at line ends and double while the value is cut at the window's end (a
    JSON string never holds a raw line end, so a window never cuts a token), so the work is that
    of the value's own lines, not of the rest of the note."""
    begin = starts[start]
    end_of_line = starts[start + 1] - 1 if start + 1 < len(starts) else len(body)
    raw = body[begin:end_of_line]
    line = raw.strip()
    candidate = line[:-1] if line.endswith(",") else line
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as exc:
        if exc.pos < len(candidate) or not multiline:
            return start, 0
    except RecursionError:  # nested deeper than Python's stack: not read as data
        return start, 0
    else:
        return (start + 1 if isinstance(value, (dict, list)) else start), 0
    offset = begin + len(raw) - len(raw.lstrip())
    spent, window = 0, 512
    while True:
        stop = body.find("\n", offset + window)
        stop = len(body) if stop < 0 else stop
        piece = body[offset:stop]
        spent += len(piece)
        try:
            value, end = _DECODER.raw_decode(piece)
        except json.JSONDecodeError as exc:
            if stop < len(body) and exc.pos >= len(piece.rstrip()):
                window *= 2  # cut at the window's end: read on
                continue
            return start, spent
        except RecursionError:  # nested deeper than Python's stack: not read as data
            return start, spent
        break
    end += offset
    newline = body.find("\n", end)
    tail = body[end:] if newline < 0 else body[end:newline]
    if not isinstance(value, (dict, list)) or tail.strip() not in ("", ","):
        return start, spent
    return bisect.bisect_right(starts, end - 1), 0


def _in_fences(lines: list[str]) -> list[bool]:
    """For each line, whether it is part of a fenced code block (fence lines included)."""
    inside = [False] * len(lines)
    fence: str | None = None
    for index, line in enumerate(lines):
        if fence is not None:
            inside[index] = True
            if closes_fence(line, fence):
                fence = None
            continue
        opened = FENCE.match(line)
        if opened:
            fence = opened.group(2)
            inside[index] = True
    return inside
