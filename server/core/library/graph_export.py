"""What the graph's exports share (issue 31 item 2: an Obsidian vault, `graph_export_vault`; an
Anki deck, `graph_export_anki`): the part of the graph an export holds, each proposition's chains,
where each source's notes go, and names that are safe file names on Windows, macOS and Linux.

Pure. Inputs are the store's folded graph (`Mapping[str, Proposition]`, `Mapping[str, Chain]`,
never copied: an export holds the graph once), the cluster labels (`source id -> (kind, title)`,
kind `notes` | `chat`) and the notes sources' paths as imported (`source id -> path`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from server.core.contracts.graph import Chain, Proposition
from server.core.library.folders import folder_path

Labels = Mapping[str, tuple[str, str | None]]
"""source id -> (kind `notes` | `chat`, its title or None when it has none, e.g. a deleted lesson)."""


@dataclass(frozen=True)
class Part:
    """The part of the graph an export holds.

    Attributes:
        nodes: proposition id -> proposition (the store's own mapping, or a selection of it).
        chains: the chains whose every member is in `nodes`, in the store's order.
    """

    nodes: Mapping[str, Proposition]
    chains: list[Chain]


def whole(nodes: Mapping[str, Proposition], chains: Mapping[str, Chain]) -> Part:
    """Every proposition and every chain whose members all exist (a dangling chain is left out)."""
    return Part(nodes, [c for c in chains.values() if _resolves(c, nodes)])


def selected(nodes: Mapping[str, Proposition], chains: Mapping[str, Chain], ids: Iterable[str]) -> Part:
    """The chain table's selection: the propositions it names (`n_` ids), and every member of a
    chain it names (`arg_` ids); then every chain whose members are all among them (what the
    table's "chains in the selection" counts), so each link of the export resolves.

    Raises:
        KeyError: naming the first id that is neither a proposition nor a chain of the graph.
    """
    picked: dict[str, Proposition] = {}
    for one in ids:
        if one in nodes:
            picked[one] = nodes[one]
        elif one in chains and _resolves(chains[one], nodes):
            chain = chains[one]
            for member in (*chain.premises, chain.conclusion):
                picked[member] = nodes[member]
        else:
            raise KeyError(one)
    return Part(picked, [c for c in chains.values() if _resolves(c, picked)])


def _resolves(chain: Chain, nodes: Collection[str]) -> bool:
    return chain.conclusion in nodes and all(p in nodes for p in chain.premises)


def chains_of(part: Part) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """(conclusion id -> indexes in `part.chains` of the chains concluding it, premise id -> those
    it is a premise of). Only ints and the store's interned ids: a few dozen bytes a chain."""
    concluding: dict[str, list[int]] = {}
    premise_of: dict[str, list[int]] = {}
    for index, chain in enumerate(part.chains):
        concluding.setdefault(chain.conclusion, []).append(index)
        for premise in chain.premises:
            premise_of.setdefault(premise, []).append(index)
    return concluding, premise_of


# -- where a source's notes go -------------------------------------------------------------------
LESSONS = "Lessons"
NOTES = "Notes"
OTHER = "Other sources"


def source_folder(source: str, labels: Labels, paths: Mapping[str, str | None]) -> tuple[str, ...]:
    """The folder (path parts, not yet made safe) a source's propositions go to: a lesson's under
    `Lessons/<title>`; a notes file's under its folder as imported (`vault/sub/a.md` ->
    `vault/sub`; a drive or leading `/` dropped); a notes file imported alone under `Notes`; a
    source the graph no longer names (a deleted lesson) under `Other sources`."""
    kind, title = labels.get(source, ("", None))
    if kind == "chat":
        return (LESSONS, title or source)
    if kind == "notes":
        folder = folder_path(paths.get(source))
        parts = tuple(p for p in (folder or "").split("/") if p and not re.fullmatch(r"[A-Za-z]:", p))
        return parts or (NOTES,)
    return (OTHER,)


def source_label(source: str, labels: Labels) -> str:
    """A source as a reader names it: its title, else its id."""
    return labels.get(source, ("", None))[1] or source


# -- safe names ------------------------------------------------------------------------------------
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*#^\[\]]+')
"""Characters no file name may hold on Windows (`<>:"/\\|?*`, controls), and those that break an
Obsidian wiki link to the file (`#`, `^`, `[`, `]`, `|`)."""
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.IGNORECASE)
MAX_NAME = 80
"""Characters of a name before its `.md` (and a disambiguating suffix): well inside every file
system's 255-byte limit, path and all, even in 4-byte UTF-8 letters."""


def safe_name(text: str, fallback: str) -> str:
    """`text` as one path part safe on Windows, macOS and Linux and inside an Obsidian link: NFC,
    one line, unsafe characters as `-`, no leading or trailing dot or space, at most `MAX_NAME`
    characters, not a Windows device name (`CON`, `nul.txt`, ...: `_` appended); `fallback` (made
    safe the same way) when nothing is left."""
    name = _UNSAFE.sub("-", " ".join(unicodedata.normalize("NFC", text).split()))
    name = name.strip(" .-")[:MAX_NAME].strip(" .-")
    if not name:
        return safe_name(fallback, "untitled") if fallback != text else "untitled"
    if _RESERVED.match(name):
        name += "_"
    return name


class Namer:
    """Names unique among themselves as a case-insensitive file system compares them (Windows and
    macOS: `Limit` and `limit` are one file; macOS also folds Unicode forms): a name taken is given
    again with ` (2)`, ` (3)`, ... before its extension."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def take(self, text: str, fallback: str) -> str:
        """A fresh safe name for `text` (`safe_name`), unique among this namer's."""
        base = safe_name(text, fallback)
        name, n = base, 1
        while _fold(name) in self._taken:
            n += 1
            name = f"{base} ({n})"
        self._taken.add(_fold(name))
        return name


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()
