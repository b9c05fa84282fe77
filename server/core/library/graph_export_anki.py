"""The graph as an Anki deck (issue 31 item 2): the deck's note types and its notes, produced one
at a time, for the caller to write as an `.apkg` with genanki (`services.library.graph_export`).

Pure. A card per proposition (front: its name; back: its statement) and a card per chain (front:
its premises, each name and statement; back: the conclusion). Fields are HTML: text escaped,
newlines as `<br>`, `$…$` math as `\\(…\\)` and `$$…$$` as `\\[…\\]`, which Anki's MathJax renders
(`anki_html`). Each note is tagged `source::<title>` for each of its sources (and
`learning-harness::proposition` or `::chain`).

Stable ids, so a second export updates the notes of the first import instead of adding new ones:
a note's guid is derived from its proposition's or chain's id alone (`guid`), and the deck's and
both note types' ids are fixed (`DECK_ID`, `PROPOSITION_MODEL_ID`, `CHAIN_MODEL_ID`). Anki matches
an imported note to one it has by guid and note type.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from server.core.library.graph_export import Labels, Part, source_label

DECK_ID = 1_694_302_871
DECK_NAME = "Learning Harness graph"
PROPOSITION_MODEL_ID = 1_694_302_872
CHAIN_MODEL_ID = 1_694_302_873
"""Fixed for ever: changing one makes Anki see a new deck or note type, and duplicates."""

PROPOSITION_FIELDS = ("Name", "Statement", "Id")
CHAIN_FIELDS = ("Premises", "Conclusion", "Id")
PROPOSITION_TEMPLATE = {
    "name": "Name → statement",
    "qfmt": '<div class="name">{{Name}}</div>',
    "afmt": '{{FrontSide}}<hr id="answer"><div class="statement">{{Statement}}</div>',
}
CHAIN_TEMPLATE = {
    "name": "Premises → conclusion",
    "qfmt": '<div class="ask">From</div>{{Premises}}<div class="ask">what follows?</div>',
    "afmt": '{{FrontSide}}<hr id="answer">{{Conclusion}}',
}
CSS = (
    ".card { font-family: sans-serif; font-size: 20px; text-align: left; }\n"
    ".name { font-weight: bold; }\n"
    ".ask { color: #666; font-size: 16px; margin: 0.5em 0; }\n"
    "ul { padding-left: 1.2em; }\n"
)


@dataclass(frozen=True)
class AnkiNote:
    """One note of the deck.

    Attributes:
        kind: which note type (`PROPOSITION_FIELDS` or `CHAIN_FIELDS`, in that order in `fields`).
        fields: the HTML fields.
        guid: `guid(id)`.
        tags: Anki tags (no spaces).
        sort: the sort field's text (the name, or the conclusion's name).
    """

    kind: Literal["proposition", "chain"]
    fields: tuple[str, str, str]
    guid: str
    tags: tuple[str, ...]
    sort: str


def guid(item_id: str) -> str:
    """A note's Anki guid from the graph id it shows: 10 characters of base64 of SHA-256 (Anki's
    own guids are 10 base91 characters); the same id gives the same guid in every export."""
    return base64.b64encode(hashlib.sha256(f"learning-harness:{item_id}".encode()).digest())[:10].decode()


_MATH = re.compile(r"(\\\$)|\$\$(.+?)\$\$|\$(?!\s)([^$\n]*?[^\s\\$])\$(?!\d)", re.DOTALL)
"""An escaped dollar; display math `$$…$$`; inline math `$…$` (no space just inside either `$`,
no digit after the closing one: "$5 and $6" is money, as pandoc reads it)."""


def anki_html(text: str) -> str:
    """Markdown-ish text as an Anki field: HTML-escaped (`<`, `>`, `&`, quotes), `$…$` as
    `\\(…\\)`, `$$…$$` as `\\[…\\]` (newlines inside math as spaces), `\\$` as `$`, other
    newlines as `<br>`. Anki's MathJax reads the escaped text as the characters it shows."""

    def one(match: re.Match[str]) -> str:
        if match.group(1):
            return "$"
        if match.group(2) is not None:
            return "\\[" + " ".join(match.group(2).split()) + "\\]"
        return "\\(" + match.group(3) + "\\)"

    return _MATH.sub(one, html.escape(text.strip())).replace("\n", "<br>")


def tag(text: str) -> str:
    """Text as one Anki tag: whitespace and quotes as `_` (a tag has no space)."""
    return re.sub(r'[\s"]+', "_", text.strip()) or "_"


def _tags(kind: str, sources: list[str], labels: Labels) -> tuple[str, ...]:
    return (
        f"learning-harness::{kind}",
        *dict.fromkeys(f"source::{tag(source_label(s, labels))}" for s in sources),
    )


def anki_notes(part: Part, labels: Labels) -> Iterator[AnkiNote]:
    """Every proposition's note, then every chain's, one at a time (nothing held between them)."""
    for nid, node in part.nodes.items():
        yield AnkiNote(
            "proposition",
            (anki_html(node.name) or html.escape(nid), anki_html(node.statement), nid),
            guid(nid),
            _tags("proposition", node.sources, labels),
            node.name,
        )
    for chain in part.chains:
        premises = "".join(
            f'<li><span class="name">{anki_html(part.nodes[p].name)}</span>: '
            f"{anki_html(part.nodes[p].statement)}</li>"
            for p in chain.premises
        )
        end = part.nodes[chain.conclusion]
        yield AnkiNote(
            "chain",
            (
                f"<ul>{premises}</ul>",
                f'<div class="name">{anki_html(end.name)}</div><div>{anki_html(end.statement)}</div>',
                chain.id,
            ),
            guid(chain.id),
            _tags("chain", chain.sources, labels),
            end.name,
        )
