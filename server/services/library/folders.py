"""A folder import's walk (seed §6, notes import): where a folder import may read
(`import_roots`), the walk of the folder the learner chose (`collect_folder`: notes files to read,
entries refused unread) and the reading of each file inside it (`folder_items`: links out of the
folder, non-regular and unreadable files refused)."""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from server.core.library.notes import (
    MAX_NOTE_BYTES,
    NOTE_SUFFIXES,
    FolderRefused,
    NoteRefused,
    folder_refusal,
    skipped_name,
)
from server.core.ports import SettingsStore
from server.services.library.imports import ImportResult, Loader

MAX_FOLDER_FILES = 100_000
"""Most notes files one folder import takes (a sanity ceiling far above a real vault; each file is
read, prepared and queued in pages of `PREPARE_PAGE`, so memory does not grow with it)."""
MAX_FOLDER_DIRS = 20_000
"""Most directories one folder import walks; a bigger tree is refused (choose a smaller folder)."""

IMPORT_ROOTS_ENV = "LH_IMPORT_ROOTS"
"""Folders notes may be imported from (os.pathsep-separated absolute paths); replaces the default,
the learner's home folder. `library.importRoots` in settings.json adds more."""


def import_roots(settings: SettingsStore, env: dict[str, str] | None = None) -> list[Path]:
    """The folders a folder import may read: `$LH_IMPORT_ROOTS`, else the home folder; plus the
    absolute paths listed under `library.importRoots` in settings.json. Each is resolved."""
    environ = os.environ if env is None else env
    raw = [p for p in environ.get(IMPORT_ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    roots = [Path(p).expanduser() for p in raw] if raw else [Path.home()]
    library = (settings.load().model_extra or {}).get("library")
    extra = library.get("importRoots") if isinstance(library, dict) else None
    if isinstance(extra, list):
        roots += [Path(p).expanduser() for p in extra if isinstance(p, str) and p.strip()]
    return [r.resolve() for r in roots if r.is_absolute()]


@dataclass
class FolderWalk:
    """What a folder walk found: the notes files to read (in walk order) and the entries refused
    without reading (a linked folder, an unreadable folder)."""

    root: Path
    paths: list[Path]
    refused: list[ImportResult]


def collect_folder(folder: str, roots: list[Path]) -> FolderWalk:
    """Walk the folder the learner chose (blocking: call it off the event loop). Returns the
    notes files to read, and a refused result for each entry refused unread (a linked
    folder, a folder that cannot be listed). Reading happens later, page by page
    (`folder_items`), so a vault's bytes are never all in memory.

    The folder must be an absolute path inside `roots` (`import_roots`) and not a
    system folder; hidden and system directories are skipped, links are never followed out
    of the folder, a linked directory is not entered (and is listed as refused).

    Raises:
        FolderRefused: not an absolute folder (invalid), outside the roots or a system folder
            (forbidden), unreadable (forbidden), too big (over `MAX_FOLDER_FILES` notes files
            or `MAX_FOLDER_DIRS` folders) or holding no notes (invalid).
    """
    given = Path(folder).expanduser()
    if not given.is_absolute():
        raise FolderRefused(
            "invalid", "refused", f"{folder}: not an absolute path; give an absolute folder path"
        )
    try:
        root = given.resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as exc:
        raise FolderRefused(
            "invalid",
            "refused",
            f"{folder}: not a folder on this computer ({_reason(exc)}); check the path",
        ) from exc
    reason = folder_refusal(root, roots)
    if reason is not None:
        raise FolderRefused("forbidden", "folder_not_allowed", reason)
    if not root.is_dir():
        raise FolderRefused(
            "invalid", "refused", f"{folder}: not a folder; give the folder that holds your notes"
        )
    try:
        with os.scandir(root):
            pass
    except OSError as exc:
        raise FolderRefused(
            "forbidden",
            "folder_unreadable",
            f"{folder}: cannot be read ({_reason(exc)}); check its permissions",
        ) from exc
    walk = _walk(root, folder)
    if not walk.paths and not walk.refused:
        raise FolderRefused("invalid", "refused", f"{folder}: holds no .md, .markdown or .txt files")
    return walk


def folder_items(walk: FolderWalk) -> list[tuple[str, Loader]]:
    """The walk's files as (absolute path, loader) for `import_many`: each is read (links out
    of the folder, non-regular and unreadable files refused) when its page is prepared."""
    root = walk.root
    return [(str(path), functools.partial(_read_inside, path, root)) for path in walk.paths]


def _walk(root: Path, folder: str) -> FolderWalk:
    paths: list[Path] = []
    refused: list[ImportResult] = []
    dirs = 0

    def unlisted(exc: OSError) -> None:
        where = exc.filename or folder
        refused.append(
            ImportResult(
                str(where),
                None,
                "refused",
                f"{where}: a folder that cannot be read ({_reason(exc)}); its notes are not imported",
            )
        )

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlisted, followlinks=False):
        dirs += 1
        if dirs > MAX_FOLDER_DIRS:
            raise FolderRefused(
                "invalid",
                "refused",
                f"{folder}: more than {MAX_FOLDER_DIRS:,} folders; choose a smaller folder",
            )
        kept = []
        for d in sorted(dirnames):
            if skipped_name(d):
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                link = os.path.join(dirpath, d)
                refused.append(
                    ImportResult(
                        link,
                        None,
                        "refused",
                        f"{link}: a link to a folder; links to folders are not followed",
                    )
                )
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if skipped_name(name) or not name.lower().endswith(NOTE_SUFFIXES):
                continue
            if len(paths) >= MAX_FOLDER_FILES:
                raise FolderRefused(
                    "invalid",
                    "refused",
                    f"{folder}: more than {MAX_FOLDER_FILES:,} notes files; choose a smaller folder",
                )
            paths.append(Path(dirpath) / name)
    return FolderWalk(root, paths, refused)


def _read_inside(path: Path, root: Path) -> bytes:
    """A notes file's bytes (at most 2 MB + 1, so an oversized file is refused unread).

    Raises:
        NoteRefused: a link leading out of `root`, not a regular file, or unreadable.
    """
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as exc:
        raise NoteRefused(f"{path}: a broken link or unreadable ({_reason(exc)}); not imported") from exc
    if not target.is_relative_to(root):
        raise NoteRefused(
            f"{path}: a link to {target}, outside the chosen folder; links out are not followed"
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise NoteRefused(f"{path}: cannot be read ({_reason(exc)}); check its permissions") from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise NoteRefused(f"{path}: not a regular file; only notes files are imported")
        try:
            return handle.read(MAX_NOTE_BYTES + 1)
        except OSError as exc:
            raise NoteRefused(f"{path}: cannot be read ({_reason(exc)}); check its permissions") from exc


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
