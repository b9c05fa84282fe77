"""Notes read as notes (issue 16, item 4): what of a decoded notes file reaches the extractor.

`prepare_note` turns a file's text into the prose the model reads, beside its metadata:

- YAML front matter (`---` ... `---` at the top) is parsed by a small safe parser (`key: value`,
  `key: [a, b]`, `key:` + `  - a` lists); `title`, `aliases` and `tags` are kept as metadata, the
  block itself is not prose. A front matter that does not parse is kept as text.
- Obsidian syntax: `[[Page]]`, `[[Page|shown]]`, `[[Page#Heading]]` become plain words; embeds
  `![[Note]]` become the note's name, embedded files (`![[file.png]]`) are dropped; callouts
  `> [!note] Title` keep their title and body without the marker; `%% comments %%` are dropped.
- Non-prose is dropped, each with a reason: Excalidraw and tldraw drawings (a whole drawing
  refuses the file), base64 blobs and data: URLs, large JSON code blocks, Obsidian plugin code
  that is not the note's content (`dataview`, `dataviewjs`, `tikz`, ... blocks: `PLUGIN_CODE`;
  issue 28, item 9); a file that is mostly JSON, or holds nothing else, is refused
  (`NoteRefused`, the import's per-file refusal). Data is only what parses as JSON (a line, or a
  run of lines); a line led by a wiki link or a Markdown link is prose (issue 28, item 1). That
  judgement (drawings, JSON) lives in note_data.py.
- Admonition blocks (```` ```ad-note ````) are prose: their fences dropped, their title kept.
- Padding whitespace (runs of spaces/tabs inside lines, line ends, table rule dashes) is
  collapsed and blank-line runs become one blank line, before tokens are counted.
- `\\#` (an Obsidian way to write a `#` that is not a tag) reaches the model as `#`, so headings
  arrive unescaped; inside code it is left alone.

Pure: no IO.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from server.core.library.note_blocks import FENCE, closes_fence
from server.core.library.note_data import MOSTLY_JSON, drawing_kind, json_share, whole_json
from server.core.library.notes import NoteRefused

JSON_BLOCK_CHARS = 2_000
"""A fenced JSON block longer than this is data, not an example: dropped."""

BASE64_RUN = 200
"""A run of at least this many base64 characters (no spaces) is a blob, not prose."""

_ATTACHMENT = re.compile(
    r"\.(png|jpe?g|gif|webp|svg|bmp|tiff?|avif|heic|pdf|mp3|wav|ogg|m4a|flac|webm|mp4|mov|mkv|"
    r"excalidraw|canvas|zip)$",
    re.IGNORECASE,
)
_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_CALLOUT = re.compile(r"^(\s*(?:>\s*)+)\[![^\]\n]+\][+-]?\s*(.*)$")
_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w=.+-]+)*;base64,[A-Za-z0-9+/=]*", re.IGNORECASE)
_BASE64 = re.compile(rf"[A-Za-z0-9+/]{{{BASE64_RUN},}}={{0,2}}")
_EMPTY_IMAGE = re.compile(r"!\[[^\]\n]*\]\(\s*\)")
_PADDING = re.compile(r"(?<=\S)[ \t]{2,}")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_RULE_DASHES = re.compile(r"-{4,}")
_ESCAPED_HASH = re.compile(r"\\#")
_KEY = re.compile(r"^([A-Za-z_][\w .-]*?)\s*:(?:\s+(.*))?$")


@dataclass(frozen=True)
class NoteText:
    """A note as the extractor reads it.

    Attributes:
        prose: the text chunked and sent to the model.
        title, aliases, tags: from the front matter (metadata, not prose).
        dropped: one plain phrase per kind of non-prose dropped ("an Excalidraw drawing", ...).
    """

    prose: str
    title: str | None = None
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    dropped: tuple[str, ...] = field(default=())


def prepare_note(name: str, text: str) -> NoteText:
    """The prose and metadata of a decoded note (`decode_note`'s text).

    Raises:
        NoteRefused: the file is not prose (an Excalidraw drawing, mostly JSON, only blobs);
            the message starts with `name` and says what it is.
    """
    meta, body = split_front_matter(text)
    dropped: list[str] = []
    drawing = drawing_kind(meta, body)
    if drawing is not None:
        raise NoteRefused(f"{name}: {drawing}, not a note; its drawing is not imported")
    if whole_json(body):
        raise NoteRefused(f"{name}: a JSON file, not a note; only prose notes are imported")
    if json_share(body) > MOSTLY_JSON:
        raise NoteRefused(f"{name}: mostly JSON data, not a note; only prose notes are imported")
    prose = _prose(body, dropped)
    if not prose.strip():
        what = ", ".join(dropped) if dropped else "no prose"
        raise NoteRefused(f"{name}: holds no prose to learn from ({what}); nothing to import")
    meta = meta or {}
    return NoteText(
        prose=prose,
        title=_first(meta.get("title")),
        aliases=_items(meta.get("aliases", meta.get("alias"))),
        tags=tuple(t.lstrip("#") for t in _items(meta.get("tags", meta.get("tag"))) if t.lstrip("#")),
        dropped=tuple(dict.fromkeys(dropped)),
    )


# -- front matter -----------------------------------------------------------------------------------


def split_front_matter(text: str) -> tuple[dict[str, str | list[str]] | None, str]:
    """(the parsed front matter or None, the rest). A block that does not parse, or is not closed,
    is not front matter: (None, text) — it stays text."""
    if not text.startswith("---\n"):
        return None, text
    lines = text.split("\n")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        return None, text
    meta = parse_front_matter(lines[1:end])
    if meta is None:
        return None, text
    return meta, "\n".join(lines[end + 1 :])


def parse_front_matter(lines: list[str]) -> dict[str, str | list[str]] | None:
    """A minimal, safe reading of YAML front matter: top-level `key: value`, `key: [a, b]` and
    `key:` followed by `  - a` items; nested or block values are skipped. None when a line is not
    of these shapes or a quote or bracket is left open."""
    meta: dict[str, str | list[str]] = {}
    key: str | None = None
    for raw in lines:
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t-":  # under the last key: a list item, or a nested/block value
            if key is None:
                return None
            item = line.strip()
            if item.startswith("- "):
                value = _scalar(item[2:])
                if value is None:
                    return None
                current = meta.get(key)
                meta[key] = [*current, value] if isinstance(current, list) else [value]
            continue
        match = _KEY.match(line)
        if match is None:
            return None
        key, rest = match.group(1).strip(), (match.group(2) or "").strip()
        if rest.startswith("["):
            if not rest.endswith("]"):
                return None
            items = [_scalar(p) for p in rest[1:-1].split(",") if p.strip()]
            if any(i is None for i in items):
                return None
            meta[key] = [i for i in items if i is not None]
        elif rest and rest not in ("|", ">", "|-", ">-"):
            value = _scalar(rest)
            if value is None:
                return None
            meta[key] = value
        else:
            meta[key] = []
    return meta


def _scalar(value: str) -> str | None:
    value = value.strip()
    if value[:1] in ("'", '"'):
        if len(value) < 2 or value[-1] != value[0]:
            return None
        return value[1:-1]
    if value[:1] in ("[", "{") or value[-1:] in ("]", "}"):
        return None
    return value


def _first(value: str | list[str] | None) -> str | None:
    if isinstance(value, list):
        return value[0] if value else None
    return value or None


def _items(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v] if "," in value or " " in value else [value]
    return tuple(v.strip() for v in value if v.strip())


# -- non-prose --------------------------------------------------------------------------------------
def _drop_blobs(line: str, dropped: list[str]) -> str:
    if "base64" in line.lower() or len(line) >= BASE64_RUN:
        out = _DATA_URL.sub("", line)
        if out != line:
            dropped.append("data: URLs")
            out = _EMPTY_IMAGE.sub("", out)
        blob = _BASE64.sub(lambda m: "" if _is_blob(m.group()) else m.group(), out)
        if blob != out:
            dropped.append("base64 data")
        return blob
    return line


def _is_blob(run: str) -> bool:
    """A long run that mixes digits, lower and upper case (base64), not a word or a hex hash."""
    return any(c.isdigit() for c in run) and any(c.islower() for c in run) and any(c.isupper() for c in run)


# -- Obsidian syntax --------------------------------------------------------------------------------


def _wiki(match: re.Match[str]) -> str:
    embed, inner = match.group(1), match.group(2)
    target, _, shown = inner.partition("|")
    page, _, heading = target.partition("#")
    page, heading = page.strip(), heading.strip().lstrip("^")
    if embed:
        if _ATTACHMENT.search(page):
            return ""
        return page or heading
    if shown.strip():
        return shown.strip()
    if target.partition("#")[2].startswith("^"):  # a block reference: the page is the words
        return page
    if page and heading:
        return f"{page} > {heading}"
    return page or heading


def _obsidian(line: str) -> str | None:
    """The line with wiki links resolved and a callout marker removed; None drops the line."""
    callout = _CALLOUT.match(line)
    if callout:
        if not callout.group(2).strip():
            return None
        line = callout.group(1) + callout.group(2)
    if "[[" in line:
        line = _WIKI.sub(_wiki, line)
    return line


# -- the walk ---------------------------------------------------------------------------------------


def _prose(body: str, dropped: list[str]) -> str:
    out: list[str] = []
    lines = body.split("\n")
    fence: str | None = None
    fence_lang = ""
    block: list[str] = []
    in_comment = False
    for line in lines:
        if fence is not None:  # inside a fenced code block
            block.append(line.rstrip())
            if closes_fence(line, fence):
                _close_block(fence_lang, block, out, dropped)
                fence, block = None, []
            continue
        if in_comment or "%%" in line:
            line, in_comment = _strip_comments(line, in_comment)
            if not line.strip():
                if out and out[-1]:
                    out.append("")
                continue
        opened = FENCE.match(line)
        if opened:
            fence, fence_lang, block = opened.group(2), opened.group(3).lower(), [line.rstrip()]
            continue
        kept = _prose_line(line, dropped)
        if kept is not None:
            out.append(kept)
    if fence is not None:  # an unclosed fence: keep what it held, as code (nothing is lost)
        _close_block(fence_lang, block, out, dropped, closed=False)
    return _blank_runs(out)


def _prose_line(line: str, dropped: list[str]) -> str | None:
    """An ordinary line as the model reads it (blobs dropped, Obsidian syntax resolved, padding
    tidied, `\\#` unescaped); None drops it."""
    kept = _obsidian(_drop_blobs(line, dropped))
    return None if kept is None else _tidy(_ESCAPED_HASH.sub("#", kept))


PLUGIN_CODE: dict[str, str] = {
    "dataview": "Dataview queries",
    "dataviewjs": "DataviewJS scripts",
    "query": "search queries",
    "tasks": "Tasks queries",
    "tikz": "TikZ drawing code",
    "tracker": "Tracker charts",
    "chart": "chart definitions",
    "button": "buttons",
    "meta-bind": "Meta Bind fields",
    "meta-bind-button": "Meta Bind buttons",
    "meta-bind-js-view": "Meta Bind scripts",
    "leaflet": "Leaflet maps",
    "handwritten-ink": "handwritten drawings",
    "handdrawn-ink": "handwritten drawings",
    "compressed-json": "JSON data",
    "excalidraw": "JSON data",
}
"""Fenced blocks whose language names an Obsidian plugin's code, which the plugin runs or draws
and which is not the note's content (issue 28, item 9): skipped, each kind named in the import's
answer ("skipped Dataview queries, TikZ drawing code; its prose is imported"). A `latex` block
holding a `tikzpicture` is TikZ drawing code too. Other code blocks (`python`, `mermaid`, ...)
are the note's content and reach the model as they are, fenced: marked as code."""

_AD_KEYS = re.compile(r"^\s*(title|collapse|icon|color)\s*:\s*(.*)$", re.IGNORECASE)


def _close_block(
    lang: str, block: list[str], out: list[str], dropped: list[str], *, closed: bool = True
) -> None:
    """Add a fenced block (its fence lines included) to `out`, or name why it is skipped.

    Skipped when closed: Obsidian plugin code (`PLUGIN_CODE`), a JSON block over
    `JSON_BLOCK_CHARS`. An Admonition block (```` ```ad-note ````) is the note's prose: its body is
    read as prose, its title kept, its fences and settings dropped. An unclosed block is kept as
    code (nothing is lost)."""
    size = sum(len(b) + 1 for b in block)
    if closed:
        reason = PLUGIN_CODE.get(lang)
        if reason is None and lang in ("latex", "tex") and any("\\begin{tikzpicture}" in b for b in block):
            reason = "TikZ drawing code"
        if reason is None and lang == "json" and size > JSON_BLOCK_CHARS:
            reason = "JSON data"
        if reason is not None:
            dropped.append(reason)
            return
        if lang.startswith("ad-") and len(block) >= 2:
            for line in block[1:-1]:
                setting = _AD_KEYS.match(line)
                if setting:
                    if setting.group(1).lower() == "title" and setting.group(2).strip():
                        out.append(setting.group(2).strip())
                    continue
                kept = _prose_line(line, dropped)
                if kept is not None:
                    out.append(kept)
            return
    out.extend(_drop_blobs(b, dropped) for b in block)


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """Remove the `%% ... %%` parts of a line; whether a comment is still open after it."""
    kept: list[str] = []
    rest = line
    while rest:
        if in_comment:
            end = rest.find("%%")
            if end < 0:
                return "".join(kept), True
            rest, in_comment = rest[end + 2 :], False
        else:
            start = rest.find("%%")
            if start < 0:
                kept.append(rest)
                break
            kept.append(rest[:start])
            rest, in_comment = rest[start + 2 :], True
    return "".join(kept), in_comment


def _tidy(line: str) -> str:
    """Trailing whitespace dropped, runs of padding inside the line made one space, a table rule's
    dashes made three."""
    line = _PADDING.sub(" ", line.rstrip())
    if _TABLE_RULE.match(line):
        line = _RULE_DASHES.sub("---", line)
    return line


def _blank_runs(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if not line.strip():
            if out and out[-1] == "":
                continue
            line = ""
        out.append(line)
    while out and out[0] == "":
        out.pop(0)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n" if out else ""
