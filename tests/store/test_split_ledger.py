"""`split_ledger`: the byte-level rewrite simplification uses to take a few chains out of a large
chains.jsonl (issue 17: the 100k merge commit re-validated and re-serialised every line)."""

from __future__ import annotations

from pathlib import Path

from server.core.contracts.graph import ChainLine, Provenance
from server.store.ledger import append_ledger, read_ledger, split_ledger


def chain(n: int) -> ChainLine:
    return ChainLine(
        id=f"arg_{n:04d}",
        premises=[f"n_{n:04d}a"],
        conclusion=f"n_{n:04d}b",
        provenance=Provenance(source="src_1", job="job_1"),
        at="2026-12-05T00:00:00Z",
    )


def test_it_takes_exactly_the_ids_and_keeps_every_other_line_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "chains.jsonl"
    append_ledger(path, [chain(n) for n in range(6)])
    raw = path.read_bytes()
    path.write_bytes(raw + b'{"torn": \n' + b'{"id": "arg_x", "premises": 3}\n' + b"[1, 2]\n")
    kept, taken = split_ledger(path, {"arg_0001", "arg_0004", "arg_9999"}, ChainLine)
    assert [c.id for c in taken] == ["arg_0001", "arg_0004"]
    assert taken == [chain(1), chain(4)]
    lines = raw.splitlines(keepends=True)
    expected = b"".join(line for i, line in enumerate(lines) if i not in (1, 4))
    # not-JSON is dropped (readers skip it); JSON a reader refuses is kept as it was
    assert kept == expected + b'{"id": "arg_x", "premises": 3}\n' + b"[1, 2]\n"
    path.write_bytes(kept)
    assert [c.id for c in read_ledger(path, ChainLine)] == ["arg_0000", "arg_0002", "arg_0003", "arg_0005"]


def test_a_missing_ledger_is_empty(tmp_path: Path) -> None:
    assert split_ledger(tmp_path / "none.jsonl", {"arg_0001"}, ChainLine) == (b"", [])


def test_an_id_that_is_not_a_string_never_matches(tmp_path: Path) -> None:
    path = tmp_path / "chains.jsonl"
    path.write_bytes(b'{"id": ["arg_0001"]}\n{"id": 7}\n')
    kept, taken = split_ledger(path, {"arg_0001", "7"}, ChainLine)
    assert taken == [] and kept == path.read_bytes()
