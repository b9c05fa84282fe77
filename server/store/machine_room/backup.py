"""Backup archives of the data dir: write one while the server runs, check one, stage it, and
apply a staged one at the next start (issue 31 item 4; decision 0041). What an archive holds and
the checks are pure (`server.core.machine_room.backup`); this module reads and writes the files.

Consistency while the server runs: a file is opened, never read by path twice, so an atomic
replace (temp file + rename) during the backup leaves the opened version whole. A lesson's
snapshot and its change log are opened together under the chat store's lock (`hold_chats`), so
the pair is one state of the lesson. The graph's files are opened while the caller holds the
graph's writers (the merge section, which commits and deletions take), and each ledger is read
only up to the size it had then, cut at its last whole line. Practice sets, jobs and settings are
single files replaced atomically. The archive is written to `<name>.part` and renamed when whole.

A restore never writes into the live data dir: the checked archive is unpacked into
`restore/pending/`, and at the next start, before any store opens (`apply_pending_restore`, under
the data-dir lock), the areas it replaces are moved to `restore/replaced-<time>/` (nothing is
deleted) and the backup's moved in. Each step is a rename; a crash between them is finished at
the following start.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import shutil
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from server.core.machine_room.backup import (
    FORMAT,
    MANIFEST,
    VERSION,
    ArchiveRefused,
    Counter,
    Counts,
    Manifest,
    ManifestFile,
    Skipped,
    clean_ledger,
    entry_problem,
    file_problem,
    included,
    read_manifest,
    record_problem,
    strip_secrets,
)

log = logging.getLogger("lh.store.backup")

AREAS = ("settings.json", "chats", "graph", "practice", "jobs", "intake")
"""The data dir's top-level entries a restore replaces (what a backup holds lives under them)."""
DERIVED = ("cache",)
"""Derived top-level entries moved aside with a restore (rebuilt from the restored records)."""
DERIVED_IN_AREAS = ("chats/.index.json", "graph/view.snapshot", "graph/view-compact.snapshot")
"""Derived files inside the restored areas (never in an archive; rebuilt when missing)."""
RESTORE = "restore"
"""`<data dir>/restore/`: uploads being checked, the staged restore, the replaced areas."""
MAX_ENTRY_BYTES = 2 * 2**30
"""Largest single file an archive may hold (a 100k-proposition nodes ledger is ~30 MB)."""
_CHUNK = 1 << 20


@dataclass
class _Opened:
    """A file opened for the archive: its data-dir path, the open file, and how many bytes of it
    to read (append-only ledgers: the size when opened; None: all of it)."""

    path: str
    handle: IO[bytes]
    size: int | None


class BackupFiles:
    """The data dir's backups.

    Args:
        root: the data dir.
        hold_chats: the chat store's lock (held while a lesson's two files are opened).
        app_version: written into the manifest.
    """

    def __init__(
        self, root: Path, hold_chats: Callable[[], AbstractContextManager[Any]], app_version: str
    ) -> None:
        self.root = root
        self.hold_chats = hold_chats
        self.app_version = app_version

    @property
    def restore_dir(self) -> Path:
        return self.root / RESTORE

    # -- writing ----------------------------------------------------------------------------------
    def open_graph(self) -> list[_Opened]:
        """Open the graph's files (call holding the graph's writers: the merge section). The
        ledgers are read later only up to the size they have now."""
        graph = self.root / "graph"
        out: list[_Opened] = []
        if not graph.is_dir():
            return out
        for path in sorted(graph.iterdir()):
            rel = f"graph/{path.name}"
            if not included(rel) or path.is_symlink() or not path.is_file():
                continue
            try:
                handle = path.open("rb")
            except FileNotFoundError:
                continue
            size = os.fstat(handle.fileno()).st_size if rel.endswith(".jsonl") else None
            out.append(_Opened(rel, handle, size))
        return out

    def write(self, target: Path, graph: list[_Opened], created_at: str) -> Manifest:
        """Write the archive to `target` (through `<target>.part`, renamed when whole): the graph's
        files opened by `open_graph`, then settings, lessons, practice sets, jobs and the accepted
        queue, each opened now; the manifest last. Closes `graph`'s files. Returns the manifest.
        Raises OSError (disk full: the part file is removed)."""
        part = target.with_name(target.name + ".part")
        target.parent.mkdir(parents=True, exist_ok=True)
        files: list[ManifestFile] = []
        skipped: list[Skipped] = []
        counter = Counter()
        try:
            with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:

                def put(rel: str, payload: bytes) -> None:
                    info = zipfile.ZipInfo(rel, date_time=_zip_time(created_at))
                    info.external_attr = 0o100644 << 16  # a regular file
                    info.compress_type = zipfile.ZIP_DEFLATED
                    archive.writestr(info, payload)
                    files.append(
                        ManifestFile(path=rel, size=len(payload), sha256=hashlib.sha256(payload).hexdigest())
                    )
                    counter.add(rel, payload)

                for rel, payload in itertools.chain(*(_read_all(g) for g in graph), self._rest()):
                    kept, problem = self._kept(rel, payload)
                    if problem is not None:
                        skipped.append(Skipped(path=rel, reason=problem))
                    if kept is not None:
                        put(rel, kept)
                manifest = Manifest(
                    format=FORMAT,
                    version=VERSION,
                    app=self.app_version,
                    created_at=created_at,
                    files=files,
                    counts=counter.counts,
                    skipped=skipped,
                )
                put_manifest = zipfile.ZipInfo(MANIFEST, date_time=_zip_time(created_at))
                put_manifest.external_attr = 0o100644 << 16
                put_manifest.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(put_manifest, manifest.model_dump_json(by_alias=True, indent=1))
            os.replace(part, target)
        except BaseException:
            for opened in graph:
                opened.handle.close()
            with contextlib.suppress(OSError):
                part.unlink()
            raise
        return manifest

    def _kept(self, rel: str, payload: bytes) -> tuple[bytes | None, str | None]:
        """What the archive keeps of a file, and a note when something was left out."""
        if rel.endswith(".jsonl"):
            kept, dropped = clean_ledger(rel, payload)
            note = f"{dropped} unreadable line(s) left out (the app skips them too)" if dropped else None
            return kept, note
        if rel == "settings.json":
            try:
                data = orjson.loads(payload)
            except ValueError:
                return None, "not valid JSON: left out (the app cannot read it either)"
            clean = strip_secrets(data)
            if clean != data:
                return orjson.dumps(
                    clean, option=orjson.OPT_INDENT_2
                ) + b"\n", "fields that looked like secrets left out"
            return payload, None
        if rel.endswith(".log"):
            return payload[: payload.rfind(b"\n") + 1], None  # a torn last line is dropped by reads too
        problem = record_problem(rel, payload)
        if problem is not None:
            return None, f"left out: {problem} (the file stays in the data dir, untouched)"
        return payload, None

    def _rest(self) -> Iterator[tuple[str, bytes]]:
        """Settings, every lesson (its snapshot and log opened together under the chat store's
        lock), practice sets, jobs and the accepted queue, as (data-dir path, bytes): one file (or
        lesson pair) opened at a time, so thousands of lessons never hold thousands of handles."""
        yield from _read_all(self._open("settings.json"))
        for rel in self._listed("chats"):
            if rel.endswith(".json"):
                with self.hold_chats():
                    pair = [self._open(rel), self._open(rel[: -len(".json")] + ".log")]
                yield from _read_all(*pair)
        for folder in ("practice", "jobs"):
            for rel in self._listed(folder):
                yield from _read_all(self._open(rel))
        yield from _read_all(self._open("intake/queue.jsonl", ledger=True))

    def _open(self, rel: str, *, ledger: bool = False) -> _Opened | None:
        path = self.root / rel
        if path.is_symlink():
            return None
        try:
            handle = path.open("rb")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        return _Opened(rel, handle, os.fstat(handle.fileno()).st_size if ledger else None)

    def _listed(self, folder: str) -> list[str]:
        base = self.root / folder
        if not base.is_dir():
            return []
        return sorted(f"{folder}/{p.name}" for p in base.iterdir() if included(f"{folder}/{p.name}"))

    # -- reading an archive -----------------------------------------------------------------------
    def check(self, archive: Path) -> tuple[Manifest, list[str]]:
        """Check an archive through and through without writing anything: a zip, ours, a version
        this app reads, every entry a plain file inside the data dir that a backup holds, listed
        once in the manifest with its size and SHA-256, every ledger line parsing as its model,
        every record named by its id. Returns (manifest, the entries' names). Raises ArchiveRefused
        with the reason."""
        with _open_zip(archive) as zf:
            manifest = read_manifest(_read_member(zf, _manifest_info(zf), None))
            listed = {entry.path: entry for entry in manifest.files}
            names: set[str] = set()
            for info in zf.infolist():
                problem = entry_problem(info.filename, info.external_attr >> 16)
                if problem is not None:
                    raise ArchiveRefused(f"refused: {problem}")
                if info.filename in names:
                    raise ArchiveRefused(f"refused: {info.filename!r} is in the archive twice")
                names.add(info.filename)
                if info.filename == MANIFEST or info.is_dir():
                    continue
                entry = listed.get(info.filename)
                if entry is None:
                    raise ArchiveRefused(f"refused: {info.filename!r} is not in the backup's manifest")
                payload = _read_member(zf, info, entry)
                problem = file_problem(info.filename, payload)
                if problem is not None:
                    raise ArchiveRefused(f"refused: {problem}")
            missing = sorted(set(listed) - names)
            if missing:
                raise ArchiveRefused(
                    f"the archive is incomplete: {len(missing)} file(s) of its manifest are missing, "
                    f"e.g. {missing[0]!r}"
                )
        return manifest, sorted(listed)

    def inventory(self) -> Counts:
        """What the data dir holds now (the same counts a manifest carries)."""
        counter = Counter()
        for rel in ["settings.json", "graph/nodes.jsonl"]:
            path = self.root / rel
            if path.is_file():
                counter.add(rel, path.read_bytes() if rel.endswith(".jsonl") else b"")
        for folder in ("chats", "practice", "jobs"):
            for rel in self._listed(folder):
                if rel.endswith(".json"):
                    counter.add(rel, b"")
        return counter.counts

    def receive(self, source: IO[bytes], name: str, limit: int) -> Path:
        """Copy an uploaded archive into `restore/<name>.zip`. Raises ArchiveRefused past `limit`
        bytes (the part written is removed)."""
        self.restore_dir.mkdir(parents=True, exist_ok=True)
        target = self.restore_dir / f"{name}.zip"
        size = 0
        try:
            with target.open("wb") as out:
                while chunk := source.read(_CHUNK):
                    size += len(chunk)
                    if size > limit:
                        raise ArchiveRefused(f"the archive is larger than {limit // 2**20} MB")
                    out.write(chunk)
        except BaseException:
            with contextlib.suppress(OSError):
                target.unlink()
            raise
        return target

    def discard(self, archive: Path) -> None:
        """Remove an uploaded archive (best effort)."""
        with contextlib.suppress(OSError):
            archive.unlink()

    # -- restoring --------------------------------------------------------------------------------
    def stage(self, archive: Path) -> Path:
        """Check the archive again and unpack it into `restore/pending/` (through
        `restore/pending.part/`), replacing a restore staged earlier and not yet applied. The live
        data dir is not touched; `apply_pending_restore` moves it in at the next start. Raises
        ArchiveRefused (nothing staged)."""
        manifest, names = self.check(archive)
        part = self.restore_dir / "pending.part"
        pending = self.restore_dir / "pending"
        shutil.rmtree(part, ignore_errors=True)
        listed = {entry.path: entry for entry in manifest.files}
        try:
            with _open_zip(archive) as zf:
                for name in names:
                    payload = _read_member(zf, zf.getinfo(name), listed[name])
                    target = part / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(payload)
                (part / MANIFEST).write_bytes(manifest.model_dump_json(by_alias=True, indent=1).encode())
            _fsync_tree(part)
            shutil.rmtree(pending, ignore_errors=True)
            os.replace(part, pending)
        except BaseException:
            shutil.rmtree(part, ignore_errors=True)
            raise
        return pending

    def staged(self) -> Manifest | None:
        """The manifest of a restore staged and not yet applied, or None."""
        path = self.restore_dir / "pending" / MANIFEST
        try:
            return Manifest.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return None


def _read_all(*opened: _Opened | None) -> Iterator[tuple[str, bytes]]:
    """Read and close each opened file (all are closed even when a read fails)."""
    payloads = []
    try:
        for item in opened:
            if item is not None:
                payloads.append((item.path, _read(item)))
    finally:
        for item in opened:
            if item is not None:
                item.handle.close()
    yield from payloads


def _read(opened: _Opened) -> bytes:
    return opened.handle.read() if opened.size is None else opened.handle.read(opened.size)


def _zip_time(iso: str) -> tuple[int, int, int, int, int, int]:
    try:
        date, _, time = iso.partition("T")
        y, mo, d = (int(x) for x in date.split("-"))
        h, mi, s = (int(float(x)) for x in time.rstrip("Z").split("+")[0].split(":"))
        return (max(1980, y), mo, d, h, mi, s)
    except ValueError:
        return (1980, 1, 1, 0, 0, 0)


@contextlib.contextmanager
def _open_zip(archive: Path) -> Any:
    try:
        with archive.open("rb") as raw:
            head = raw.read(4)
    except OSError as exc:
        raise ArchiveRefused(f"the archive cannot be read ({exc.strerror})") from exc
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        if head == b"PK\x03\x04":
            raise ArchiveRefused(
                "the archive is damaged or cut short (its zip directory is missing)"
            ) from exc
        raise ArchiveRefused("this is not a Learning Harness backup (not a zip archive)") from exc
    with zf:
        yield zf


def _manifest_info(zf: zipfile.ZipFile) -> zipfile.ZipInfo:
    try:
        return zf.getinfo(MANIFEST)
    except KeyError as exc:
        raise ArchiveRefused(f"this is not a Learning Harness backup (no {MANIFEST} in it)") from exc


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, entry: ManifestFile | None) -> bytes:
    """A member's bytes, read at most to the size its manifest entry states (+1), checked against
    that size and SHA-256. Raises ArchiveRefused (damaged, cut short, or not what was listed)."""
    limit = entry.size if entry is not None else 16 * 2**20
    if info.file_size > min(limit, MAX_ENTRY_BYTES):
        raise ArchiveRefused(f"refused: {info.filename!r} is larger than its manifest says")
    try:
        with zf.open(info) as member:
            payload = member.read(limit + 1)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise ArchiveRefused(
            f"the archive is damaged or cut short ({info.filename!r} cannot be read)"
        ) from exc
    if entry is not None and (
        len(payload) != entry.size or hashlib.sha256(payload).hexdigest() != entry.sha256
    ):
        raise ArchiveRefused(f"the archive is damaged: {info.filename!r} is not the file its manifest lists")
    return payload


def _fsync_tree(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            fd = os.open(Path(dirpath) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _sweep(restore: Path) -> None:
    """Remove what a stopped server left in `restore/` mid-way (no request is in flight at start):
    uploads being checked, archives being sent or written, a half-unpacked staging folder."""
    if not restore.is_dir():
        return
    for path in restore.iterdir():
        name = path.name
        if name.startswith(("upload-", "outgoing-")) and path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.unlink()
        elif name == "pending.part" and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def apply_pending_restore(root: Path, stamp: str) -> Path | None:
    """At start, before any store opens (the caller holds the data-dir lock): move a staged
    restore in. The areas it replaces (AREAS and the derived caches) go to
    `restore/replaced-<stamp>/`, never deleted; then the staged areas are moved in. Returns the
    folder the replaced data went to, or None when nothing was staged. Every step is a rename; a
    crash between them is finished at the next start (the folder's name is kept in
    `restore/pending/aside`). Leftovers of a stopped server in `restore/` (uploads, archives being
    sent, a half-unpacked staging folder) are removed first. Raises OSError when a rename fails
    (the server does not start on a half-moved data dir; the message names the folders)."""
    restore = root / RESTORE
    pending = restore / "pending"
    _sweep(restore)
    if not (pending / MANIFEST).is_file():
        return None
    aside_file = pending / "aside"
    if aside_file.is_file():
        aside = restore / aside_file.read_text().strip()
    else:
        aside = restore / f"replaced-{stamp}"
        aside_file.write_text(aside.name)
    moved = aside / ".moved"
    if not moved.exists():
        aside.mkdir(parents=True, exist_ok=True)
        for area in (*AREAS, *DERIVED):
            if (root / area).exists() and not (aside / area).exists():
                os.replace(root / area, aside / area)
        moved.write_text("")
    for area in AREAS:
        if (pending / area).exists():
            os.replace(pending / area, root / area)
    for rel in DERIVED_IN_AREAS:
        with contextlib.suppress(FileNotFoundError):
            (root / rel).unlink()
    os.replace(pending / MANIFEST, aside / "restored-backup.json")
    shutil.rmtree(pending, ignore_errors=True)
    log.info("restored the staged backup; the data it replaced is in %s", aside)
    return aside
