"""`LedgerTail` (issue 16): following an append-only ledger by its new tail answers what a whole
read (`read_ledger`) answers, whatever happens to the file between reads: appends, torn and
invalid lines, an atomic rewrite, an in-place rewrite, removal. And the graph store's in-memory
indexes built on it answer as a fresh store reading the files."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.contracts.graph import CoverageLine, RunLine, SourceLine
from server.store import ledger
from server.store.atomic import write_bytes_atomic
from server.store.ledger import LedgerTail, append_ledger, model_parser, read_ledger
from server.store.library.graph import FileGraphStore


def coverage(i: int, source: str = "src_a") -> CoverageLine:
    return CoverageLine(source=source, message=f"m{i}", fingerprint=f"f{i}", job=f"job_{i}", at="t")


def followed(tail: LedgerTail[CoverageLine], kept: list[CoverageLine]) -> list[CoverageLine]:
    reset, new = tail.poll()
    if reset:
        kept.clear()
    kept.extend(line for line, _, _ in new)
    return kept


def test_a_poll_reads_only_the_new_tail_and_spans_point_at_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "coverage.jsonl"
    tail = LedgerTail(path, model_parser(CoverageLine))
    assert tail.poll() == (False, [])  # no file yet
    append_ledger(path, [coverage(1), coverage(2)])
    reset, new = tail.poll()
    assert reset and [line.job for line, _, _ in new] == ["job_1", "job_2"]
    data = path.read_bytes()
    for line, offset, length in new:
        assert CoverageLine.model_validate_json(data[offset : offset + length]) == line
    assert tail.poll() == (False, [])  # nothing new: nothing parsed
    append_ledger(path, [coverage(3)])
    reset, new = tail.poll()
    assert not reset and [line.job for line, _, _ in new] == ["job_3"]


def test_a_torn_tail_waits_and_is_skipped_once_an_append_ends_it(tmp_path: Path) -> None:
    path = tmp_path / "coverage.jsonl"
    tail = LedgerTail(path, model_parser(CoverageLine))
    kept: list[CoverageLine] = []
    append_ledger(path, [coverage(1)])
    with path.open("ab") as handle:
        handle.write(b'{"source": "src_a", "mess')  # a crash mid-line
    assert [c.job for c in followed(tail, kept)] == ["job_1"]
    append_ledger(path, [coverage(2)])  # ends the torn line first
    assert [c.job for c in followed(tail, kept)] == ["job_1", "job_2"]
    assert kept == list(read_ledger(path, CoverageLine))


def test_a_replaced_or_rewritten_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "coverage.jsonl"
    tail = LedgerTail(path, model_parser(CoverageLine))
    kept: list[CoverageLine] = []
    append_ledger(path, [coverage(1), coverage(2)])
    followed(tail, kept)
    write_bytes_atomic(path, coverage(7).model_dump_json().encode() + b"\n")  # another inode
    assert [c.job for c in followed(tail, kept)] == ["job_7"]
    # the same inode rewritten in place, longer than before: the bytes before the read position
    # changed, so the whole file is read again rather than taken as an append
    long = b"".join(coverage(i, "src_longer_name").model_dump_json().encode() + b"\n" for i in (8, 9))
    path.write_bytes(long)
    assert [c.job for c in followed(tail, kept)] == ["job_8", "job_9"]
    path.unlink()
    assert followed(tail, kept) == []


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 4)),
        st.tuples(st.just("garbage"), st.sampled_from([b"not json\n", b'{"source": 1}\n', b"\n\n"])),
        st.tuples(st.just("torn"), st.integers(1, 30)),
        st.tuples(st.just("unterminated"), st.integers(0, 9)),
        st.tuples(st.just("rewrite"), st.integers(0, 3)),
        st.tuples(st.just("in_place"), st.integers(0, 3)),
        st.tuples(st.just("remove"), st.just(0)),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(_OPS, st.integers(1, 3))
def test_following_the_tail_answers_as_a_whole_read(ops: list[tuple[str, object]], poll_every: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "coverage.jsonl"
        tail = LedgerTail(path, model_parser(CoverageLine))
        kept: list[CoverageLine] = []
        for step, (op, arg) in enumerate(ops):
            counter = step + 1
            if op == "append":
                append_ledger(path, [coverage(counter * 10 + i) for i in range(int(str(arg)) + 1)])
            elif op == "garbage":
                with path.open("ab") as handle:
                    handle.write(arg)  # type: ignore[arg-type]
            elif op == "torn":
                with path.open("ab") as handle:
                    handle.write(coverage(counter).model_dump_json().encode()[: int(str(arg))])
            elif op == "unterminated":  # a whole line without its newline (a hand-edited file)
                with path.open("ab") as handle:
                    handle.write(coverage(counter + int(str(arg))).model_dump_json().encode())
            elif op == "rewrite":
                lines = [coverage(counter * 10 + i) for i in range(int(str(arg)))]
                write_bytes_atomic(path, b"".join(c.model_dump_json().encode() + b"\n" for c in lines))
            elif op == "in_place":
                lines = [coverage(counter * 100 + i, "s" * (i + 1)) for i in range(int(str(arg)))]
                with path.open("wb") as handle:  # same inode, truncated and written again
                    handle.write(b"".join(c.model_dump_json().encode() + b"\n" for c in lines))
            elif op == "remove" and path.exists():
                os.unlink(path)
            if step % poll_every == 0:
                followed(tail, kept)
        assert followed(tail, kept) == list(read_ledger(path, CoverageLine))


def test_the_stores_indexes_follow_another_writer(tmp_path: Path) -> None:
    """Runs, coverage and sources read through the kept indexes equal a fresh store's reads, also
    after another store instance (another writer, e.g. a previous process) appended."""
    root = tmp_path / "graph"
    mine, other = FileGraphStore(root), FileGraphStore(root)
    for store, n in ((mine, 1), (other, 2), (mine, 3), (other, 4)):
        store.record_source(SourceLine(id=f"src_{n % 2}", kind="notes", title=f"t{n}", at=f"t{n}"))
        append_ledger(root / "coverage.jsonl", [coverage(n, f"src_{n % 2}")])
        append_ledger(
            root / "sessions.jsonl",
            [
                RunLine(
                    source=f"src_{n % 2}",
                    job=f"job_{n}",
                    label="l",
                    addedNodes=0,
                    linkedNodes=0,
                    addedChains=0,
                    droppedChains=0,
                    at="t",
                )
            ],
        )
        for reader in (mine, other):
            fresh = FileGraphStore(root)
            assert reader.sources() == fresh.sources()
            assert list(reader.sources()) == list(fresh.sources())
            assert reader.runs() == fresh.runs()
            for src in ("src_0", "src_1"):
                assert reader.coverage(src) == fresh.coverage(src)
                assert reader.contributors(src) == fresh.contributors(src)
    assert mine.sources()["src_0"].title == "t4"  # the last line of a source wins
    assert mine.contributors("src_1") == {"job_1", "job_3"}


def test_a_commit_in_a_worker_thread_is_never_read_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While `commit_merge` writes in another thread (held here just after its run line, the
    commit point, before the rest of the commit), reads on this thread answer the graph as it
    stood before it: the same nodes, chains and view signatures; once it returns, the new graph."""
    from tests.store.library.test_graph_store import commit

    store = FileGraphStore(tmp_path / "graph")
    commit(store)
    before = (store.nodes(), store.chains(), store.signature(), store.rows_signature())
    reached, release = threading.Event(), threading.Event()
    real_append = ledger.append_ledger

    def held_append(path: Path, lines) -> None:  # type: ignore[no-untyped-def]
        real_append(path, lines)
        if path.stem == "sessions":
            reached.set()
            assert release.wait(10)

    monkeypatch.setattr("server.store.library.graph.append_ledger", held_append)
    writer = threading.Thread(target=commit, args=(store, "job_2"))
    writer.start()
    assert reached.wait(10)
    try:
        assert (tmp_path / "graph" / "sessions.jsonl").read_bytes().count(b"\n") == 2  # run line landed
        assert FileGraphStore(tmp_path / "graph").nodes().keys() != before[0].keys()  # a fresh read sees it
        during = (store.nodes(), store.chains(), store.signature(), store.rows_signature())
        assert during == before
    finally:
        release.set()
        writer.join()
    fresh = FileGraphStore(tmp_path / "graph")
    assert store.nodes() == fresh.nodes() and len(store.nodes()) == 6
    assert store.chains() == fresh.chains()
    assert store.signature() == fresh.signature() != before[2]
