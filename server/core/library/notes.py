"""The notes front door's pure half: what a notes file is, and how it is chunked (seed §6).

A file is accepted when it is non-empty UTF-8 text of at most 2 MB; it is split at line
boundaries into chunks of at most the token budget (a line longer than the budget is split
too), never inside a fenced code block or a display formula that fits in one chunk. Broken
front matter is just text. Source ids are deterministic in the file's path as the import names
it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath, PureWindowsPath

from server.core.library.coverage import check_budget
from server.core.library.note_blocks import Block, note_blocks
from server.core.refusals import Refused
from server.core.tokens import estimate_tokens

MAX_NOTE_BYTES = 2_000_000
"""Largest notes file accepted, in bytes (2 MB; the 110 KB fixture is far below)."""

NOTE_SUFFIXES = (".md", ".markdown", ".txt")


class NoteRefused(ValueError):
    """A notes file that cannot be imported; the message says why and what to do."""


def source_id(path: str) -> str:
    """`src_` + the first 16 hex of SHA-256 of the file's path as the import names it.

    A picked folder sends each file's path inside it (starting with the folder's name) and a
    desktop import its absolute path, so same-named files of different folders are different
    sources. A single file chosen in the browser carries only its name: importing an edited
    `notes.md` again replaces what `notes.md` said (issue 11: a learner expects an edited note to
    replace its knowledge), at the price that two unrelated single files with one name are one
    source; import their folders to keep them apart.
    """
    return "src_" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]


def content_fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def decode_note(name: str, data: bytes) -> str:
    """The file's text, or NoteRefused.

    Refused: a name without .md/.markdown/.txt, more than 2 MB, binary content (NUL bytes),
    invalid UTF-8 (the message gives line and column), empty or whitespace-only text.
    A UTF-8 byte-order mark is dropped; CRLF line ends become LF.
    """
    if not name.lower().endswith(NOTE_SUFFIXES):
        raise NoteRefused(f"{name}: only .md, .markdown and .txt files are imported")
    if len(data) > MAX_NOTE_BYTES:
        raise NoteRefused(f"{name}: larger than 2 MB; notes files are limited to {MAX_NOTE_BYTES:,} bytes")
    if b"\x00" in data:
        raise NoteRefused(f"{name}: binary content (NUL bytes); only text notes are imported")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NoteRefused(
            f"{name}: not valid UTF-8 at line {line}, column {column} (byte {exc.start}); "
            "save the file as UTF-8 and import it again"
        ) from exc
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise NoteRefused(f"{name}: the file is empty (or only whitespace); nothing to import")
    return text


@dataclass(frozen=True)
class NoteChunk:
    """A chunk of a notes file: its text, 1-based first and last line, estimated tokens."""

    text: str
    first_line: int
    last_line: int
    tokens: int


def chunk_note(text: str, budget_tokens: int) -> list[NoteChunk]:
    """Split at line boundaries into chunks of at most `budget_tokens` (estimated); whitespace-only
    chunks are dropped.

    A fenced code block and a display formula over several lines (`note_blocks`) are never cut
    while they fit in one chunk: a chunk ends before such a block rather than inside it (issue 28,
    item 9). A block longer than a whole chunk is split at line boundaries, and each piece is
    closed and reopened with the block's own fence or formula delimiter (a piece of a
    ```` ```python ```` block is still a ```` ```python ```` block; a piece of a `$$` formula is
    still between `$$`), so no chunk starts with an orphan closing fence. A line longer than a
    chunk is split into chunk-sized pieces (a long line of code into pieces each fenced again).
    Line numbers are the note's (1-based); a reopening or closing line added to a piece carries
    the number of the line beside it.

    Raises:
        ValueError: budget below the floor (500).
    """
    check_budget(budget_tokens)
    max_chars = budget_tokens * 4  # a line costs its characters and its line end
    lines = text.split("\n")
    segments: list[tuple[int, list[tuple[int, str]]]] = []  # (characters with line ends, lines)
    for block in note_blocks(lines):
        if block.kind == "line" and len(lines[block.start]) < max_chars:
            segments.append((len(lines[block.start]) + 1, [(block.start + 1, lines[block.start])]))
            continue
        numbered = [(n + 1, lines[n]) for n in range(block.start, block.end)]
        cost = sum(len(line) + 1 for _, line in numbered)
        if cost <= max_chars:
            segments.append((cost, numbered))
        else:
            pieces = _split_block(block, numbered, max_chars)
            segments.extend((sum(len(line) + 1 for _, line in piece), piece) for piece in pieces)
    chunks: list[NoteChunk] = []
    current: list[tuple[int, str]] = []
    size = 0
    for cost, segment in segments:
        if current and size + cost > max_chars:
            chunks.append(_chunk(current))
            current, size = [], 0
        current.extend(segment)
        size += cost
    if current:
        chunks.append(_chunk(current))
    return [c for c in chunks if c.text.strip()]


def _split_block(
    block: Block, numbered: list[tuple[int, str]], max_chars: int
) -> list[list[tuple[int, str]]]:
    """A block longer than a chunk, in pieces of at most `max_chars` (line ends counted), each piece
    of a code block or formula closed and reopened with the block's own delimiters. Lines are kept
    whole while they fit; a line longer than a piece fills the piece it starts in and goes on in
    the next ones. A closed block's own closing line ends its last piece (the room kept for an
    added closing line is its room)."""
    opener, closer = block.opener, block.closer
    wrap = len(closer) + 1 if closer else 0
    room = max_chars - (len(opener) + 1 if opener else 0) - wrap
    pieces: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    size = 0
    last = len(numbered) - 1
    for index, (number, line) in enumerate(numbered):
        limit = room + wrap if (index == last and block.closed and closer) else room
        if size + len(line) + 1 <= limit:
            current.append((number, line))
            size += len(line) + 1
            continue
        if len(line) + 1 <= room:  # a whole line that fits in the next piece
            pieces.append(current)
            current, size = [(number, line)], len(line) + 1
            continue
        rest = line
        while rest:
            space = room - size - 1
            if space < min(len(rest), room // 4):  # too little left here for a useful piece
                pieces.append(current)
                current, size = [], 0
                continue
            current.append((number, rest[:space]))
            size += len(rest[:space]) + 1
            rest = rest[space:]
    if current:
        pieces.append(current)
    pieces = [p for p in pieces if p]
    if not opener:
        return pieces
    final = len(pieces) - 1
    return [
        [
            *([(piece[0][0], opener)] if index else []),
            *piece,
            *([(piece[-1][0], closer)] if index < final else []),
        ]
        for index, piece in enumerate(pieces)
    ]


def _chunk(lines: list[tuple[int, str]]) -> NoteChunk:
    text = "\n".join(piece for _, piece in lines)
    return NoteChunk(text, lines[0][0], lines[-1][0], estimate_tokens(text))


# -- the folder policy (issue 10, defect 6) ---------------------------------------------------------

SYSTEM_FOLDERS: tuple[PurePath, ...] = (
    *(
        PurePosixPath(p)
        for p in (
            "/bin",
            "/boot",
            "/dev",
            "/etc",
            "/lib",
            "/lib32",
            "/lib64",
            "/libx32",
            "/proc",
            "/run",
            "/sbin",
            "/snap",
            "/srv",
            "/sys",
            "/usr",
            "/var",
            "/opt",
            "/System",
            "/Library",
            "/private",
            "/cores",
            "/Applications",
        )
    ),
    *(
        PureWindowsPath(p)
        for p in ("C:/Windows", "C:/Program Files", "C:/Program Files (x86)", "C:/ProgramData")
    ),
)
"""Folders of the operating system: never imported from, whatever the allow-list says (unless
an allowed root itself lies inside one)."""

SKIPPED_DIRECTORIES = frozenset(
    {"node_modules", "__pycache__", "$RECYCLE.BIN", "System Volume Information", "lost+found"}
)
"""Directory names a folder walk never enters (besides hidden ones, whose names start with '.')."""


class FolderRefused(Refused):
    """A folder import refused as a whole (kind `invalid` or `forbidden`, and a code); the detail
    says why and what to do."""


def skipped_name(name: str) -> bool:
    """Whether a walk skips this directory or file name (hidden, or a system directory)."""
    return name.startswith(".") or name in SKIPPED_DIRECTORIES


def _inside(path: PurePath, folder: PurePath) -> bool:
    """Whether `path` is `folder` or below it (same path flavour; Windows paths ignore case)."""
    windows = isinstance(path, PureWindowsPath)
    if windows != isinstance(folder, PureWindowsPath):
        return False
    pure = PureWindowsPath if windows else PurePosixPath
    return pure(path).is_relative_to(pure(folder))


def folder_refusal(path: PurePath, roots: Sequence[PurePath]) -> str | None:
    """Why a resolved (absolute, symlink-free) folder may not be imported, or None.

    A folder may be imported when it lies inside one of `roots` (the learner's home, or the
    allow-list), is not the filesystem's root, and is not inside a system folder (unless the
    root that admits it itself lies inside that system folder).
    """
    if path.parent == path:
        return f"{path} is the whole filesystem; choose the folder that holds your notes"
    admitting = [root for root in roots if _inside(path, root)]
    for system in SYSTEM_FOLDERS:
        if _inside(path, system) and not any(_inside(root, system) for root in admitting):
            return f"{path} is a system folder ({system}); choose the folder that holds your notes"
    if not admitting:
        shown = ", ".join(str(r) for r in roots) or "none"
        return (
            f"{path} is outside the folders notes may be imported from ({shown}); choose a folder "
            "there, or add its parent to library.importRoots in settings.json"
        )
    return None
