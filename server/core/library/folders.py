"""Folder clusters: notes imported from folders group by folder first (issue 17 item 2; the seed's
parked "multi-scale cluster hierarchy", §14; docs/decisions/0022-folder-clusters.md).

Pure. A notes source's path is the one its import names (`core.notes.source_id`): a picked folder
sends `vault/sub/note.md`, a desktop import an absolute path, a single browser file a bare name.
A source's folder is its path's parent directory ('/'-separated; Windows backslashes read as '/');
a bare name, a lesson or a source without a path has no folder and stays a top-level cluster.

Folders nest: a folder's parent is its nearest ancestor directory that is itself a folder (holds
files), so a vault with files only in `vault/a/b/` and `vault/` reads `vault` ⊃ `vault/a/b`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass


def folder_path(path: str | None) -> str | None:
    """The directory part of a source's path ('/'-separated, no trailing '/'), or None for a bare
    name or no path. `C:\\notes\\a.md` -> `C:/notes`; `/a.md` -> `/`."""
    if not path:
        return None
    norm = path.replace("\\", "/").rstrip("/")
    head, sep, _ = norm.rpartition("/")
    if not sep:
        return None
    return head or "/"


def folder_key(path: str) -> str:
    """A folder's stable id: `dir_` + the first 16 hex of SHA-256 of its '/'-path."""
    return "dir_" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Folder:
    """One folder cluster.

    Attributes:
        key: `folder_key(path)`.
        label: the folder's name (its last path part; the path itself for `/` or `C:`).
        path: the full '/'-path (the canvas's tooltip).
        parent: the key of the nearest ancestor folder, or None at top level.
        sessions: the source (file) ids directly in it, sorted.
    """

    key: str
    label: str
    path: str
    parent: str | None
    sessions: tuple[str, ...]


def folder_tree(paths: Mapping[str, str | None]) -> tuple[dict[str, str], list[Folder]]:
    """The folder hierarchy of notes sources.

    Args:
        paths: source id -> its path as imported (notes sources only; None/bare names have no folder).

    Returns:
        (source id -> its folder's key, for sources in a folder; the folders sorted by path, so a
        parent comes before its children). O(sources × depth).
    """
    members: dict[str, list[str]] = {}
    for source, path in paths.items():
        folder = folder_path(path)
        if folder is not None:
            members.setdefault(folder, []).append(source)
    folders: list[Folder] = []
    of: dict[str, str] = {}
    for path in sorted(members):
        parent = None
        up = folder_path(path) if path != "/" else None
        while up is not None:
            if up in members:
                parent = folder_key(up)
                break
            up = folder_path(up) if up != "/" else None
        key = folder_key(path)
        label = path.rsplit("/", 1)[-1] or path
        folders.append(Folder(key, label, path, parent, tuple(sorted(members[path]))))
        for source in members[path]:
            of[source] = key
    return of, folders


def folder_rows(folders: list[Folder], sizes: Mapping[str, int]) -> list[dict[str, object]]:
    """The view's `folders` rows: `{key, label, path, parent, clusters, nodeCount}`; `clusters` the
    keys of its file clusters, `nodeCount` their nodes (`sizes`: cluster key -> node count; give
    `folder_tree` only the sources that have nodes, so every folder has some)."""
    return [
        {
            "key": f.key,
            "label": f.label,
            "path": f.path,
            "parent": f.parent,
            "clusters": list(f.sessions),
            "nodeCount": sum(sizes.get(s, 0) for s in f.sessions),
        }
        for f in folders
    ]
