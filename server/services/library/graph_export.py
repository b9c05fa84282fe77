"""The graph's exports as files (issue 31 item 2): an Obsidian vault as a zip streamed while it is
written, and an Anki deck as an `.apkg` written with genanki to a temporary file and then sent.

The graph is the store's folded one, read where it lies (`GraphService.graph.nodes()` /
`.chains()`, folded on the event loop like every read of the graph); the writers
(`core.library.graph_export_vault`, `graph_export_anki`) produce one file or note at a time, and
the bytes go out in blocks of at least 64 KiB, so an export never holds a second copy of the graph
nor the whole file. The iteration runs in the response's worker thread, never on the loop.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import time
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import genanki

from server.core.library import graph_export_anki as anki
from server.core.library.graph_export import Labels, Part, selected, whole
from server.core.library.graph_export_vault import vault_files
from server.core.refusals import Refused
from server.services.library.graph import GraphService
from server.services.machine_room.background import run_background

BLOCK = 64 * 1024
"""Bytes gathered before a block is sent."""
NOTES_PER_COMMIT = 5_000
"""Anki notes written to the deck's SQLite file between commits (bounds SQLite's journal)."""


class GraphExport:
    """Args:
    graph: the graph's read service (its store's folded graph and the sources' titles and paths).
    """

    def __init__(self, graph: GraphService) -> None:
        self.graph = graph

    async def part(self, ids: list[str] | None = None) -> tuple[Part, Labels, dict[str, str | None]]:
        """The part of the graph to export (all of it, or the chain table's selection `ids`), and
        the sources' labels and paths. The ledgers are folded on the loop (cached by the store);
        the selection and the sources' pass run in a worker thread.

        Raises:
            Refused(not_found): an id is neither a proposition nor a chain of the graph.
        """
        nodes, chains = self.graph.graph.nodes(), self.graph.graph.chains()

        def gather() -> tuple[Part, Labels, dict[str, str | None]]:
            labels, paths = self.graph.sources_named()
            if ids is None:
                return whole(nodes, chains), labels, paths
            try:
                return selected(nodes, chains, ids), labels, paths
            except KeyError as exc:
                raise Refused(
                    "not_found",
                    "not_found",
                    f"{exc.args[0]!r} is not in the graph (deleted meanwhile?); reload the graph and "
                    "select again",
                ) from exc

        return await run_background(gather)


class _Sink:
    """A write-only, unseekable file that keeps what is written until taken (`zipfile` then writes
    each entry's sizes after its data, as a streamed zip does)."""

    def __init__(self) -> None:
        self.held: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.held.append(bytes(data))
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        out = b"".join(self.held)
        self.held, self.size = [], 0
        return out


def zip_stream(files: Iterable[tuple[str, str]]) -> Iterator[bytes]:
    """`files` (path in the zip, text) as a deflated zip, in blocks of at least `BLOCK` bytes
    (the last may be shorter), each file written as it comes. Text as UTF-8 (a lone surrogate
    as `?`)."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path, text in files:
            archive.writestr(path, text.encode("utf-8", "replace"))
            if sink.size >= BLOCK:
                yield sink.take()
    yield sink.take()


def vault_zip(part: Part, labels: Labels, paths: dict[str, str | None]) -> Iterator[bytes]:
    """The Obsidian vault (`core.library.graph_export_vault.vault_files`) as a streamed zip."""
    return zip_stream(vault_files(part, labels, paths))


def _model(model_id: int, name: str, fields: tuple[str, ...], template: dict[str, str]) -> genanki.Model:
    return genanki.Model(
        model_id, name, fields=[{"name": f} for f in fields], templates=[template], css=anki.CSS
    )


PROPOSITION_MODEL = _model(
    anki.PROPOSITION_MODEL_ID,
    "Learning Harness proposition",
    anki.PROPOSITION_FIELDS,
    anki.PROPOSITION_TEMPLATE,
)
CHAIN_MODEL = _model(anki.CHAIN_MODEL_ID, "Learning Harness chain", anki.CHAIN_FIELDS, anki.CHAIN_TEMPLATE)


def write_apkg(part: Part, labels: Labels, dest: Path, *, timestamp: float | None = None) -> Path:
    """Write the deck (`core.library.graph_export_anki.anki_notes`) as the `.apkg` `dest` (a zip of
    `collection.anki2`, genanki's SQLite collection, and an empty `media` list). Notes are written
    to the SQLite file one at a time, next to `dest` (then removed). Returns `dest`.

    Raises:
        OSError, sqlite3.Error: the file could not be written (`dest` is then left incomplete;
            the caller removes its directory).
    """
    stamp = time.time() if timestamp is None else timestamp
    collection = dest.with_name(dest.name + ".anki2")
    deck = genanki.Deck(anki.DECK_ID, anki.DECK_NAME, description="Propositions and chains of the graph.")
    deck.add_model(PROPOSITION_MODEL)
    deck.add_model(CHAIN_MODEL)
    ids = iter(range(int(stamp * 1000), 2**62))
    connection = sqlite3.connect(collection)
    try:
        cursor = connection.cursor()
        genanki.Package(deck).write_to_db(cursor, stamp, ids)  # schema, deck, note types: no note yet
        for n, note in enumerate(anki.anki_notes(part, labels), start=1):
            genanki.Note(
                model=PROPOSITION_MODEL if note.kind == "proposition" else CHAIN_MODEL,
                fields=list(note.fields),
                sort_field=note.sort,
                tags=list(note.tags),
                guid=note.guid,
            ).write_to_db(cursor, stamp, anki.DECK_ID, ids)
            if n % NOTES_PER_COMMIT == 0:
                connection.commit()
        connection.commit()
    finally:
        connection.close()
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.write(collection, "collection.anki2")
        archive.writestr("media", json.dumps({}))
    collection.unlink()
    return dest


def apkg_stream(part: Part, labels: Labels) -> Iterator[bytes]:
    """The deck written to a temporary directory (`write_apkg`), then sent in `BLOCK`-byte blocks;
    the directory is removed when the answer ends, or is abandoned, or the write fails."""
    folder = Path(tempfile.mkdtemp(prefix="lh-anki-"))
    try:
        path = write_apkg(part, labels, folder / "graph.apkg")
        with path.open("rb") as file:
            while block := file.read(BLOCK):
                yield block
    finally:
        shutil.rmtree(folder, ignore_errors=True)
