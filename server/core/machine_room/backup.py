"""What a backup archive of the data dir holds, and the checks an archive passes before a restore
(issue 31 item 4; decision 0041). Pure: bytes and names in, answers out; the store reads and
writes the files (`server.store.machine_room.backup`).

An archive is a zip: the data dir's canonical files under their data-dir paths, and last the
manifest `lh-backup.json` `{format, version, app, createdAt, files: [{path, size, sha256}],
counts, skipped}`. What is in it (`included`): `settings.json`, `chats/<id>.json` and
`chats/<id>.log`, `graph/*.jsonl` with `graph/positions.json` and `graph/render.json`,
`practice/ps_*.json`, `jobs/job_*.json`, `intake/queue.jsonl`. What never is: keys
(`secrets.json`), subscription sign-ins (`subscriptions/`), derived files rebuilt when missing
(`chats/.index.json`, `graph/*.snapshot`, `cache/`), logs, the server's lock, and the restore
folder itself.

Errors: `ArchiveRefused(reason)`, the reason in plain words for the learner.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from server.core.contracts.chat import CHAT_ID_PATTERN, ChatRecord
from server.core.contracts.graph import (
    ChainLine,
    CoverageLine,
    DeletionLine,
    NodeLine,
    RetireLine,
    RunLine,
    SourceLine,
    VersionLine,
)
from server.core.contracts.intake import IntakeLine
from server.core.contracts.jobs import JobRecord
from server.core.contracts.practice import ProblemSet

FORMAT = "learning-harness-backup"
"""The manifest's `format`: what marks an archive as one of ours."""
VERSION = 1
"""The archive layout this app writes and the newest it reads."""
MANIFEST = "lh-backup.json"
"""The manifest's name in the archive (written last)."""

SECRET_WORDS = frozenset({"key", "token", "secret", "password", "credential", "credentials"})
"""A settings field one of whose words (camelCase, snake_case or kebab-case parts, any case) is
one of these is left out of a backup: `apiKey`, `access_token` are; `contextTokens` is not."""

_RECORDS: dict[str, tuple[re.Pattern[str], type[BaseModel]]] = {
    "chats": (CHAT_ID_PATTERN, ChatRecord),
    "practice": (re.compile(r"^ps_[0-9a-f]{8,32}$"), ProblemSet),
    "jobs": (re.compile(r"^job_[A-Za-z0-9_-]{1,80}$"), JobRecord),
}
"""Record folders: the id pattern a file's stem matches (an id is its file name) and the model."""

LEDGERS: dict[str, type[BaseModel] | None] = {
    "graph/nodes.jsonl": NodeLine,
    "graph/chains.jsonl": ChainLine,
    "graph/simplified.jsonl": ChainLine,
    "graph/coverage.jsonl": CoverageLine,
    "graph/sessions.jsonl": RunLine,
    "graph/sources.jsonl": SourceLine,
    "graph/retired.jsonl": RetireLine,
    "graph/versions.jsonl": VersionLine,
    "graph/deleted.jsonl": DeletionLine,
    "graph/usage.jsonl": None,
    "intake/queue.jsonl": IntakeLine,
}
"""The append-only ledgers and the model each line is (None: any JSON object). A `graph/*.jsonl`
not named here is kept too, each line a JSON object."""

_GRAPH_FILES = ("graph/positions.json", "graph/render.json")
_GRAPH_LEDGER = re.compile(r"^graph/[a-z_-]{1,40}\.jsonl$")


class ArchiveRefused(Exception):
    """An archive that cannot be restored; the message says why in plain words. Nothing changed."""


class Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ManifestFile(Camel):
    """One file of the archive: its data-dir path, size in bytes, and SHA-256 (hex)."""

    path: str
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Skipped(Camel):
    """A file of the data dir left out of the backup, and why (an unreadable record stays where it
    is, untouched; the backup says it is missing)."""

    path: str
    reason: str


class Counts(Camel):
    """What a data dir (or an archive) holds: lessons, distinct proposition ids recorded in the
    graph, practice sets, Workbench jobs, and whether settings are present."""

    lessons: int = 0
    propositions: int = 0
    practice_sets: int = 0
    jobs: int = 0
    settings: bool = False


class Manifest(Camel):
    """`lh-backup.json`. `version` is checked before anything else is read (`read_manifest`)."""

    format: str
    version: int
    app: str
    created_at: str
    files: list[ManifestFile]
    counts: Counts
    skipped: list[Skipped] = Field(default_factory=list)


def included(path: str) -> bool:
    """Whether a data-dir relative path (`/`-separated) belongs in a backup."""
    if path == "settings.json" or path in _GRAPH_FILES or path in LEDGERS:
        return True
    if _GRAPH_LEDGER.match(path):
        return True
    folder, _, name = path.partition("/")
    if folder not in _RECORDS or "/" in name:
        return False
    pattern = _RECORDS[folder][0]
    stem, dot, suffix = name.rpartition(".")
    if not dot or not pattern.match(stem):
        return False
    return suffix == "json" or (folder == "chats" and suffix == "log")


def entry_problem(name: str, unix_mode: int) -> str | None:
    """Why an archive entry cannot be restored, or None when it may (a directory entry that stays
    inside the data dir is allowed and ignored).

    Args:
        name: the entry's name as stored in the zip.
        unix_mode: the entry's Unix mode bits (`external_attr >> 16`; 0 when the zip has none).
    """
    shown = name[:200]
    if "\\" in name or "\x00" in name:
        return f"{shown!r} is not a plain path"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return f"{shown!r} is an absolute path: it would be written outside the data dir"
    parts = name.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return f"{shown!r} leaves the data dir (a '..' or empty part)"
    if stat.S_ISLNK(unix_mode):
        return f"{shown!r} is a link: a restore writes only plain files"
    if name.endswith("/"):
        return None
    if name != MANIFEST and not included(name):
        return f"{shown!r} is not a file a backup holds"
    return None


def _secret_name(name: str) -> bool:
    return any(word.lower() in SECRET_WORDS for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name))


def strip_secrets(data: Any) -> Any:
    """`data` (parsed settings) without any field one of whose words is in SECRET_WORDS,
    at any depth. Settings hold no key today (keys live in the keychain or `secrets.json`); this
    keeps one that a future section might add out of a backup."""
    if isinstance(data, dict):
        return {k: strip_secrets(v) for k, v in data.items() if not _secret_name(str(k))}
    if isinstance(data, list):
        return [strip_secrets(v) for v in data]
    return data


def lines(payload: bytes) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a JSONL payload with their 1-based numbers (no trailing newline)."""
    start, number = 0, 0
    while start < len(payload):
        end = payload.find(b"\n", start)
        end = len(payload) if end < 0 else end
        number += 1
        raw = payload[start:end]
        start = end + 1
        if raw.strip():
            yield number, raw


def line_problem(path: str, raw: bytes) -> str | None:
    """Why one ledger line does not parse (as the ledger's model), or None."""
    model = LEDGERS.get(path)
    try:
        if model is None:
            if not isinstance(orjson.loads(raw), dict):
                return "not a JSON object"
            return None
        model.model_validate_json(raw)
    except (ValueError, ValidationError) as exc:
        return str(exc).splitlines()[0][:200]
    return None


def clean_ledger(path: str, payload: bytes) -> tuple[bytes, int]:
    """A ledger's bytes as a backup keeps them: whole lines only (a torn last line cut), and
    without the lines a read skips anyway (they do not parse as the ledger's model), so what the
    app reads from it is unchanged. Returns (bytes, number of lines left out)."""
    kept: list[bytes] = []
    dropped = 0
    end = payload.rfind(b"\n")
    body = payload[: end + 1] if end >= 0 else b""
    if len(body) < len(payload) and payload[len(body) :].strip():
        dropped += 1
    for _, raw in lines(body):
        if line_problem(path, raw) is None:
            kept.append(raw + b"\n")
        else:
            dropped += 1
    return b"".join(kept), dropped


def record_problem(path: str, payload: bytes) -> str | None:
    """Why a record file (a lesson, practice set or job; settings; a graph JSON file) cannot be
    restored, or None. A record's `id` must be its file name (so ids are unique in an archive)."""
    try:
        data = orjson.loads(payload)
    except ValueError as exc:
        return f"{path} is not valid JSON ({str(exc)[:120]})"
    if path == "settings.json" or path in _GRAPH_FILES:
        return None if isinstance(data, dict) else f"{path} is not a JSON object"
    folder, _, name = path.partition("/")
    stem, _, suffix = name.rpartition(".")
    if folder == "chats" and suffix == "log":
        return None  # checked line by line (`log_problem`)
    if not isinstance(data, dict):
        return f"{path} is not a JSON object"
    model = _RECORDS[folder][1]
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        what = {"chats": "lesson", "practice": "practice set", "jobs": "job"}[folder]
        return f"{path} is not a valid {what} record ({exc.error_count()} problems)"
    if str(getattr(record, "id", "")) != stem:
        return f"{path} holds the record {getattr(record, 'id', '')!r}: an id must match its file name"
    return None


def log_problem(path: str, payload: bytes) -> str | None:
    """Why a lesson's change log cannot be restored (a line that is not a JSON object), or None."""
    for number, raw in lines(payload):
        try:
            if not isinstance(orjson.loads(raw), dict):
                return f"{path} line {number} is not a JSON object"
        except ValueError:
            return f"{path} line {number} does not parse"
    return None


def file_problem(path: str, payload: bytes) -> str | None:
    """Why one archived file cannot be restored, or None: every ledger line parses as its model,
    every record parses and is named by its id."""
    if path.endswith(".jsonl"):
        for number, raw in lines(payload):
            problem = line_problem(path, raw)
            if problem is not None:
                return f"{path} line {number} does not parse ({problem})"
        if payload and not payload.endswith(b"\n"):
            return f"{path} ends in a cut line"
        return None
    if path.endswith(".log"):
        return log_problem(path, payload)
    return record_problem(path, payload)


def read_manifest(payload: bytes) -> Manifest:
    """The manifest, checked: ours, and a version this app reads. Raises ArchiveRefused."""
    try:
        data = orjson.loads(payload)
    except ValueError as exc:
        raise ArchiveRefused("this is not a Learning Harness backup (its manifest is not JSON)") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ArchiveRefused("this is not a Learning Harness backup (its manifest is not ours)")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ArchiveRefused("this backup's manifest has no format version")
    if version > VERSION:
        raise ArchiveRefused(
            f"this backup was made by a newer version of Learning Harness (backup format {version}; "
            f"this app reads format {VERSION} and older): update the app, then restore it"
        )
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        raise ArchiveRefused(f"this backup's manifest is damaged ({exc.error_count()} problems)") from exc
    seen: set[str] = set()
    for entry in manifest.files:
        problem = entry_problem(entry.path, 0)
        if problem is not None or entry.path == MANIFEST:
            raise ArchiveRefused(f"the manifest lists {problem or entry.path + ' twice'}")
        if entry.path in seen:
            raise ArchiveRefused(f"the manifest lists {entry.path!r} twice")
        seen.add(entry.path)
    return manifest


class Counter:
    """Counts what files hold (`Counts`), fed file by file: a lesson per `chats/<id>.json`, a
    practice set and a job per record, propositions as distinct ids in `graph/nodes.jsonl`."""

    def __init__(self) -> None:
        self.counts = Counts()
        self._nodes: set[str] = set()

    def add(self, path: str, payload: bytes) -> None:
        if path == "settings.json":
            self.counts.settings = True
        elif path.startswith("chats/") and path.endswith(".json"):
            self.counts.lessons += 1
        elif path.startswith("practice/"):
            self.counts.practice_sets += 1
        elif path.startswith("jobs/"):
            self.counts.jobs += 1
        elif path == "graph/nodes.jsonl":
            for _, raw in lines(payload):
                try:
                    node = orjson.loads(raw)
                except ValueError:
                    continue
                if isinstance(node, dict) and isinstance(node.get("id"), str):
                    self._nodes.add(node["id"])
            self.counts.propositions = len(self._nodes)


def replaced(current: Counts, incoming: Counts) -> list[str]:
    """What a restore will replace, in plain words, one line per kind of record present on either
    side (e.g. "3 lessons, replaced by the backup's 5")."""

    def line(count: int, noun: str, plural: str, theirs: int) -> str:
        now = f"{count} {noun if count == 1 else plural}"
        return f"{now} here, replaced by the backup's {theirs}"

    out = []
    for count, noun, plural, theirs in (
        (current.lessons, "lesson", "lessons", incoming.lessons),
        (current.propositions, "proposition", "propositions", incoming.propositions),
        (current.practice_sets, "practice set", "practice sets", incoming.practice_sets),
        (current.jobs, "Workbench job", "Workbench jobs", incoming.jobs),
    ):
        if count or theirs:
            out.append(line(count, noun, plural, theirs))
    if current.settings or incoming.settings:
        out.append(
            "your settings, replaced by the backup's"
            if incoming.settings
            else "your settings, reset to the defaults (the backup has none)"
        )
    return out


class BackupStore(Protocol):
    """The data dir's backups (`server.store.machine_room.backup.BackupFiles`).

    Opened graph files are an opaque list: taken by `open_graph` while the graph's writers are held
    and handed to `write`, which reads and closes them."""

    @property
    def restore_dir(self) -> Path: ...

    def open_graph(self) -> list[Any]: ...

    def write(self, target: Path, graph: list[Any], created_at: str) -> Manifest: ...

    def check(self, archive: Path) -> tuple[Manifest, list[str]]: ...

    def inventory(self) -> Counts: ...

    def receive(self, source: IO[bytes], name: str, limit: int) -> Path: ...

    def discard(self, archive: Path) -> None: ...

    def stage(self, archive: Path) -> Path: ...

    def staged(self) -> Manifest | None: ...
