"""Markdown downloads (issue 31: a lesson's and a practice set's export): the streamed answer and
its file name."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from fastapi.responses import StreamingResponse

from server.core.markdown import chunked

MARKDOWN_OK: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A Markdown file (an attachment)",
        "content": {"text/markdown": {"schema": {"type": "string"}}},
    }
}
"""`responses=` entry of a route answering a Markdown download."""

_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


def file_name(title: str, fallback: str) -> str:
    """`<title>.md` as a file name: path separators, control and reserved characters (Windows'
    too) replaced by `-`, at most 100 characters before `.md`; `fallback` when nothing is left."""
    name = _UNSAFE.sub("-", " ".join(title.split())).strip(" .-")[:100].strip(" .-")
    return f"{name or fallback}.md"


def disposition(name: str) -> str:
    """`Content-Disposition: attachment` naming `name`: an ASCII `filename` (other letters
    transliterated or `_`) and the exact name as RFC 5987 `filename*`."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    ascii_name = re.sub(r"[^A-Za-z0-9._ -]", "_", ascii_name).strip() or "export.md"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"


def markdown_download(pieces: Iterable[str], title: str, *, fallback: str) -> StreamingResponse:
    """A streamed `text/markdown; charset=utf-8` attachment of the joined `pieces`, sent in 64 KiB
    blocks (`core.markdown.chunked`; the iteration runs in a worker thread, never on the loop).

    Args:
        pieces: the document in pieces, produced lazily.
        title: names the file (`file_name`).
        fallback: the file's name when the title leaves nothing (an id).
    """
    return StreamingResponse(
        chunked(pieces),
        media_type="text/markdown; charset=utf-8",
        headers={
            "content-disposition": disposition(file_name(title, fallback)),
            "x-content-type-options": "nosniff",
            "cache-control": "no-store",
        },
    )
