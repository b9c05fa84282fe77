"""The pure rules of a backup archive (issue 31 item 4): which entry names may be restored (never
one that leaves the data dir), settings without secrets, the manifest's version, ledgers kept as
whole parsed lines, and the plain words of what a restore replaces."""

from __future__ import annotations

import posixpath
import stat

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.machine_room.backup import (
    FORMAT,
    VERSION,
    ArchiveRefused,
    Counts,
    clean_ledger,
    entry_problem,
    included,
    read_manifest,
    replaced,
    strip_secrets,
)

PARTS = st.sampled_from(
    ["..", ".", "", "chats", "graph", "c1.json", "nodes.jsonl", "a\\b", "C:", "/", "x.log"]
)


@given(st.lists(PARTS, min_size=1, max_size=5).map("/".join) | st.text(max_size=40))
def test_an_accepted_entry_stays_inside_the_data_dir(name: str) -> None:
    problem = entry_problem(name, stat.S_IFREG | 0o644)
    if problem is None and not name.endswith("/"):
        root = "/data"
        resolved = posixpath.normpath(posixpath.join(root, name))
        assert resolved.startswith(root + "/"), name
        assert name == "lh-backup.json" or included(name)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("../x.json", "leaves the data dir"),
        ("chats/../../x.json", "leaves the data dir"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/x.json", "absolute"),
        ("chats\\..\\x.json", "not a plain path"),
        ("secrets.json", "not a file a backup holds"),
        ("subscriptions/chatgpt.json", "not a file a backup holds"),
        ("chats/.index.json", "not a file a backup holds"),
    ],
)
def test_entries_that_are_refused(name: str, words: str) -> None:
    problem = entry_problem(name, 0)
    assert problem is not None and words in problem


def test_a_link_is_refused_even_with_an_allowed_name() -> None:
    problem = entry_problem("chats/c1.json", stat.S_IFLNK | 0o777)
    assert problem is not None and "link" in problem
    assert entry_problem("chats/c1.json", stat.S_IFREG | 0o644) is None


def test_settings_lose_secret_fields_and_keep_counts() -> None:
    settings = {
        "agent": {"contextTokens": 24000},
        "graph": {"extractionChunkTokens": 8192},
        "research": {"apiKey": "k", "provider": "brave"},
        "x": [{"access_token": "t", "refresh-token": "r", "password": "p", "name": "n"}],
    }
    assert strip_secrets(settings) == {
        "agent": {"contextTokens": 24000},
        "graph": {"extractionChunkTokens": 8192},
        "research": {"provider": "brave"},
        "x": [{"name": "n"}],
    }


def manifest(**change: object) -> bytes:
    base = {
        "format": FORMAT,
        "version": VERSION,
        "app": "0.1.0",
        "createdAt": "2026-12-06T00:00:00.000Z",
        "files": [],
        "counts": {},
    }
    return orjson.dumps({**base, **change})


def test_the_manifest_is_ours_and_not_newer() -> None:
    assert read_manifest(manifest()).version == VERSION
    with pytest.raises(ArchiveRefused, match="newer version"):
        read_manifest(manifest(version=VERSION + 1))
    with pytest.raises(ArchiveRefused, match="not ours"):
        read_manifest(manifest(format="someone-else"))
    with pytest.raises(ArchiveRefused, match="not JSON"):
        read_manifest(b"\x00\x01")
    with pytest.raises(ArchiveRefused, match="twice"):
        entry = {"path": "settings.json", "size": 1, "sha256": "0" * 64}
        read_manifest(manifest(files=[entry, entry]))


def test_a_ledger_keeps_whole_lines_that_parse() -> None:
    good = b'{"ids": ["n_1"], "at": "t"}\n'
    extra = b'{"ids": ["n_1"], "at": "t", "what": 1}\n'  # not a deletion line: the read skips it too
    kept, dropped = clean_ledger("graph/deleted.jsonl", good + b"garbage\n" + extra + good + b'{"ids"')
    assert kept == good + good and dropped == 3
    assert clean_ledger("graph/usage.jsonl", b"") == (b"", 0)


def test_what_a_restore_replaces_in_plain_words() -> None:
    lines = replaced(Counts(lessons=3, propositions=1, settings=True), Counts(lessons=5, propositions=10))
    assert lines == [
        "3 lessons here, replaced by the backup's 5",
        "1 proposition here, replaced by the backup's 10",
        "your settings, reset to the defaults (the backup has none)",
    ]
