"""The graph as an Obsidian vault (issue 31 item 2): the files of a vault, as (path, text) pairs
produced one at a time, for the caller to zip (`services.library.graph_export`).

Pure. The vault, under one top folder `VAULT`:
- one note per proposition, in the folder of its first source (`graph_export.source_folder`: a
  lesson's `Lessons/<title>`, a notes file's folder as imported): YAML front matter `id`,
  `aliases` (its name when the file is named otherwise, then its aliases), `sources` (titles),
  `source_ids`, `created`; its name as the heading, its statement (Markdown, `$…$` math kept as
  source), then `## Follows from` ("from [[A]] and [[B]]", one line per chain concluding it) and
  `## Leads to` ("with [[B]], gives [[D]]", one line per chain it is a premise of);
- an index note per folder (`<folder> (index).md`), linking its subfolders' index notes and its
  notes, and `Index.md` at the top, linking the top folders' index notes.

Every link resolves: each note's file name is unique in the whole vault as a case-insensitive file
system compares names (`graph_export.Namer`), so `[[name]]` finds it from any folder; a link shows
the proposition's name (`[[file|name]]`) when the file is named otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from server.core.contracts.graph import Proposition
from server.core.library.graph_export import (
    Labels,
    Namer,
    Part,
    chains_of,
    safe_name,
    source_folder,
    source_label,
)
from server.core.markdown import block, front_matter, one_line

VAULT = "Learning Harness graph"
"""The vault's top folder in the zip (what unzipping makes)."""
INDEX = "Index"


def link(file: str, name: str) -> str:
    """`[[file]]`, or `[[file|name]]` when the note's name reads otherwise (a `|`, `[` or `]` in
    the shown name, which would end the link, read as `/`, `(`, `)`)."""
    shown = one_line(name).replace("|", "/").replace("[", "(").replace("]", ")")
    return f"[[{file}]]" if shown == file or not shown else f"[[{file}|{shown}]]"


def listed(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class _Folders:
    """Source -> its folder in the vault (a '/'-path of safe parts, unique among its siblings: two
    lessons of one title get two folders) and each folder's subfolders, in order of first use."""

    def __init__(self, labels: Labels, paths: Mapping[str, str | None]) -> None:
        self.labels, self.paths = labels, paths
        self.of_source: dict[str, str] = {}
        self._by_key: dict[tuple[str, ...], str] = {}  # (kind, *parts, lesson id) -> path
        self._names: dict[str, Namer] = {}
        self.children: dict[str, list[str]] = {"": []}
        self.label: dict[str, str] = {}

    def folder(self, source: str) -> str:
        """The vault folder of `source`'s propositions (made on first use)."""
        found = self.of_source.get(source)
        if found is not None:
            return found
        kind = self.labels.get(source, ("", None))[0]
        parts = source_folder(source, self.labels, self.paths)
        path = ""
        for depth, part in enumerate(parts, start=1):
            # a lesson's own folder is its alone whatever its title; a notes folder is its files'
            own = source if kind == "chat" and depth == len(parts) else ""
            key = (kind, *parts[:depth], own)
            made = self._by_key.get(key)
            if made is None:
                name = self._names.setdefault(path, Namer()).take(part, "folder")
                made = f"{path}/{name}" if path else name
                self._by_key[key] = made
                self.children.setdefault(path, []).append(made)
                self.children.setdefault(made, [])
                self.label[made] = name
            path = made
        self.of_source[source] = path
        return path


def vault_files(part: Part, labels: Labels, paths: Mapping[str, str | None]) -> Iterator[tuple[str, str]]:
    """The vault's files, `(path in the zip, Markdown text)`, one at a time: every proposition's
    note, then the index notes (deepest folders first, `Index.md` last).

    Memory: the graph is read where it lies (`part`); held besides are each proposition's file
    name and folder and the chains' indexes by member (`chains_of`), ~150 bytes a proposition
    and ~50 a chain, and one note's text at a time.
    """
    folders = _Folders(labels, paths)
    names = Namer()
    file_of: dict[str, str] = {}
    folder_of: dict[str, str] = {}
    for nid, node in part.nodes.items():
        file_of[nid] = names.take(node.name, nid)
        folder_of[nid] = folders.folder(node.sources[0] if node.sources else "")
    concluding, premise_of = chains_of(part)

    def to(nid: str) -> str:
        return link(file_of[nid], part.nodes[nid].name)

    members: dict[str, list[str]] = {}
    for nid, node in part.nodes.items():
        members.setdefault(folder_of[nid], []).append(nid)
        yield (
            f"{VAULT}/{folder_of[nid]}/{file_of[nid]}.md",
            _note(node, file_of[nid], labels, concluding.get(nid, ()), premise_of.get(nid, ()), part, to),
        )
    index_of = {
        folder: names.take(f"{folders.label[folder]} ({INDEX.lower()})", "index") for folder in folders.label
    }
    for folder in sorted(folders.label, key=lambda f: (-f.count("/"), f)):
        lines = [f"# {folders.label[folder]}\n\n"]
        lines.extend(f"- {link(index_of[sub], folders.label[sub])}\n" for sub in folders.children[folder])
        lines.extend(f"- {to(nid)}\n" for nid in members.get(folder, ()))
        yield f"{VAULT}/{folder}/{index_of[folder]}.md", "".join(lines)
    top = [f"# {VAULT}\n\n", f"{len(part.nodes):,} propositions, {len(part.chains):,} chains.\n\n"]
    top.extend(f"- {link(index_of[sub], folders.label[sub])}\n" for sub in folders.children[""])
    yield f"{VAULT}/{safe_name(INDEX, INDEX)}.md", "".join(top)


def _note(
    node: Proposition,
    file: str,
    labels: Labels,
    concluding: Iterable[int],
    premise_of: Iterable[int],
    part: Part,
    to: Callable[[str], str],
) -> str:
    aliases = [node.name] if node.name != file else []
    aliases += [a for a in node.aliases if a not in aliases]
    head = front_matter(
        {
            "id": node.id,
            "aliases": aliases,
            "sources": [source_label(s, labels) for s in node.sources],
            "source_ids": list(node.sources),
            "created": node.created_at,
        }
    )
    body = [head, f"# {one_line(node.name) or node.id}\n\n", block(node.statement)]
    if concluding:
        body.append("## Follows from\n\n")
        body.extend(f"- from {listed([to(p) for p in part.chains[i].premises])}\n" for i in concluding)
        body.append("\n")
    if premise_of:
        body.append("## Leads to\n\n")
        for i in premise_of:
            chain = part.chains[i]
            others = [to(p) for p in chain.premises if p != node.id]
            gives = f"gives {to(chain.conclusion)}"
            body.append(f"- with {listed(others)}, {gives}\n" if others else f"- {gives}\n")
        body.append("\n")
    return "".join(body)
