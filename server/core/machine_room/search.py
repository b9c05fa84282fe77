"""Search across the learner's records (issue 31 item 5; decision 0044): what is indexed, and the
learner's query text made into an FTS5 query that is always text.

The index is derived (SQLite FTS5, `data/search/index.sqlite`): every row is an `Entry` made here
from a record by `lesson_entries`, `proposition_entry` and `practice_entries`, and the store keeps
them, grouped by owner (a lesson, a proposition, a problem set), in step with the records.

Pure: no IO.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from server.core.contracts.graph import Proposition
from server.core.contracts.practice import ProblemSet

SCHEMA_VERSION = 2
"""The index's shape; an index file of another version is rebuilt from the records."""

Kind = Literal["lesson", "message", "proposition", "practice", "problem"]
Group = Literal["lesson", "proposition", "practice"]
"""An owner's kind: a lesson owns its title row and message rows, a problem set its title row and
problem rows, a proposition its one row."""

GROUP_OF: dict[Kind, Group] = {
    "lesson": "lesson",
    "message": "lesson",
    "proposition": "proposition",
    "practice": "practice",
    "problem": "practice",
}

MAX_QUERY_CHARS = 200
"""`GET /api/search`'s `q` length limit (characters)."""
MAX_TERMS = 12
"""Words of a query past this many are ignored (each is one more posting list to intersect)."""
MAX_BODY_CHARS = 20_000
"""A row's indexed text is cut at this many characters (a pasted book in one message stays
findable by its start; the index stays small)."""

_WORD = re.compile(r"[^\W_]+")
"""A run of letters and digits: what FTS5's unicode61 tokenizer keeps as one token (it splits on
everything else, `_` included)."""


@dataclass(frozen=True)
class Entry:
    """One indexed row.

    Attributes:
        kind: what the row is.
        owner: the record it belongs to (a chat id, a proposition id, a problem set id).
        target: where a result opens inside the owner: a message id, a problem id, else "".
        label: what a result shows as its heading (a lesson's title, a proposition's name).
        title: the row's heavily weighted text (a title, a name and its aliases).
        body: the rest (a message's text, a statement, a problem's statement and answer).
    """

    kind: Kind
    owner: str
    target: str
    label: str
    title: str
    body: str


def fts_query(text: str, *, prefix_last: bool = True) -> str | None:
    """The learner's words as an FTS5 query that every word must match, each a quoted string so
    that nothing the learner types (`"`, `*`, `AND`, `NEAR`, `:`, `-`, `^`, brackets) is query
    syntax; the last word also matches as a prefix (`"deriv"*`, search as you type) unless
    `prefix_last` is False or the text ends in a space. None when the text has no word (nothing
    to look for). At most `MAX_TERMS` words; the text is read up to `MAX_QUERY_CHARS`."""
    clipped = text[:MAX_QUERY_CHARS]
    words = _WORD.findall(clipped)[:MAX_TERMS]
    if not words:
        return None
    quoted = [f'"{w}"' for w in words]  # a word holds no `"`: `_WORD` matches none
    if prefix_last and not clipped[-1:].isspace():
        quoted[-1] += "*"
    return " ".join(quoted)


_TERM = re.compile(r'"([^"]*)"(\*?)')


def query_terms(match: str) -> list[tuple[str, bool]]:
    """`fts_query`'s words back, folded as the index folds them (lower case, no diacritics), each
    with True when it is matched as a prefix."""
    out = []
    for word, star in _TERM.findall(match):
        out.append((_fold(word), bool(star)))
    return out


def _fold(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()


def make_snippet(title: str, body: str, terms: Sequence[tuple[str, bool]], words: int = 16) -> str:
    """Up to `words` words of the body around its first matched word (else of the title), the
    matched words between `MARK_START` and `MARK_END`, `…` where text was left out. `terms` are
    `query_terms`' (folded words, True for a prefix)."""

    def hit(token: str) -> bool:
        folded = _fold(token)
        return any(folded.startswith(w) if prefix else folded == w for w, prefix in terms)

    for text in (body, title):
        tokens = list(_WORD.finditer(text))
        first = next((i for i, m in enumerate(tokens) if hit(m.group())), None)
        if first is None:
            continue
        start = max(0, min(first - words // 4, len(tokens) - words))
        window = tokens[start : start + words]
        begin, end = window[0].start(), window[-1].end()
        out = ["…" if begin > 0 else ""]
        at = begin
        for m in window:
            if hit(m.group()):
                out += [text[at : m.start()], MARK_START, m.group(), MARK_END]
                at = m.end()
        out += [text[at:end], "…" if end < len(text.rstrip()) else ""]
        return " ".join("".join(out).split())
    return " ".join((body or title)[:200].split())


def _clip(text: str) -> str:
    return text[:MAX_BODY_CHARS]


def message_text(message: Mapping[str, Any]) -> str:
    """A transcript message's readable text: its text parts joined by blank lines (tool calls,
    files and reasoning are not searched)."""
    parts = message.get("parts")
    if not isinstance(parts, list):
        return ""
    texts = [
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    ]
    return "\n\n".join(texts)


def lesson_entries(chat_id: str, title: str, messages: Iterable[Mapping[str, Any]]) -> Iterator[Entry]:
    """A lesson's rows: its title, then each learner or teacher message with text (system
    messages are not the learner's to find)."""
    yield Entry("lesson", chat_id, "", title, title, "")
    for message in messages:
        if message.get("role") not in ("user", "assistant"):
            continue
        message_id = message.get("id")
        text = message_text(message)
        if isinstance(message_id, str) and message_id and text.strip():
            yield Entry("message", chat_id, message_id, title, "", _clip(text))


def proposition_entry(node: Proposition) -> Entry:
    """A proposition's row: its name and aliases as the title, its statement as the body."""
    title = "\n".join([node.name, *node.aliases])
    return Entry("proposition", node.id, node.id, node.name, title, _clip(node.statement))


def proposition_stamp(node: Proposition) -> str:
    """What must change for a proposition's row to be written again: a digest of its indexed
    text (16 hex digits; the text itself would double the index's size)."""
    text = "\x1f".join([node.name, node.statement, *node.aliases])
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def practice_entries(problem_set: ProblemSet) -> Iterator[Entry]:
    """A problem set's rows: its title and note, then each problem (its title as the title; its
    statement, the learner's answer and the model solution as the body)."""
    yield Entry("practice", problem_set.id, "", problem_set.title, problem_set.title, _clip(problem_set.note))
    for problem in problem_set.problems:
        body = "\n\n".join(t for t in (problem.statement, problem.answer, problem.solution) if t)
        if not (problem.title or body):
            continue
        label = f"{problem_set.title} — problem {problem.index + 1}"
        yield Entry("problem", problem_set.id, problem.id, label, problem.title, _clip(body))


def changed(indexed: Mapping[str, str], current: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """`(to_write, to_drop)`: owners whose stamp is new or differs, and owners indexed but gone.
    Both sorted (deterministic writes)."""
    write = sorted(k for k, v in current.items() if indexed.get(k) != v)
    drop = sorted(k for k in indexed if k not in current)
    return write, drop


MARK_START = "\x02"
MARK_END = "\x03"
"""What the index puts around a matched word in a snippet; `snippet_parts` splits on them."""


def snippet_parts(snippet: str) -> list[dict[str, Any]]:
    """An index snippet as `[{text, match}]` runs (`match` True for the matched words), so the page
    highlights without trusting any markup in the learner's text."""
    out: list[dict[str, Any]] = []
    for i, piece in enumerate(re.split(f"[{MARK_START}{MARK_END}]", snippet)):
        if piece:
            out.append({"text": piece, "match": i % 2 == 1})
    return out


def href(kind: Kind, owner: str, target: str) -> str:
    """Where a result opens in the page: a lesson (at the message), the home graph focused on a
    proposition, a problem set (at the problem)."""
    if kind == "message":
        return f"/chat/{owner}?m={target}"
    if kind == "lesson":
        return f"/chat/{owner}"
    if kind == "proposition":
        return f"/?node={owner}"
    if kind == "problem":
        return f"/practice/{owner}?problem={target}"
    return f"/practice/{owner}"


def kinds_in(groups: Sequence[Group]) -> list[Kind]:
    """The row kinds of these owner kinds."""
    return [k for k, g in GROUP_OF.items() if g in groups]
