"""An ended import's summary row says honestly how it went (trial finding 4): a batch whose files
all failed is not "done"."""

from __future__ import annotations

from server.services.library.feed import ImportTally


def tally(**counts: int) -> ImportTally:
    t = ImportTally(id="imp_1", label="notes", queued_at="2026-12-03T13:00:00Z")
    t.counts.update(counts)
    return t


def test_a_batch_whose_only_file_failed_is_failed() -> None:
    view = tally(failed=1).view()
    assert view["phase"] == "error" and view["error"] == "1 of 1 file failed"


def test_a_batch_with_some_failures_is_done_and_says_how_many_failed() -> None:
    view = tally(done=3, failed=2, refused=1).view()
    assert view["phase"] == "done" and view["error"] == "2 of 6 files failed; 1 was refused"


def test_a_clean_batch_is_done_without_error_and_a_running_one_says_nothing_yet() -> None:
    view = tally(done=2, unchanged=1).view()
    assert view["phase"] == "done" and view["error"] is None
    busy = tally(failed=1)
    busy.running = 1
    assert busy.view()["phase"] == "running" and busy.view()["error"] is None
    assert tally(aborted=2).view()["phase"] == "aborted"


def test_running_files_are_counted_by_what_they_do_now() -> None:
    """Issue 28 item 7: a launched file is "reading" only while its extractor call runs; one
    waiting for a permit or its turn to merge is waiting; the counts sum to the files."""
    from server.services.library.feed import JobRow, Phase

    def rows(*phases: Phase) -> list[JobRow]:
        return [
            JobRow(id=f"j{i}", source="s", kind="notes", label="n", index=i, total=len(phases), phase=p)
            for i, p in enumerate(phases)
        ]

    t = tally(done=2)
    t.waiting, t.running = 3, 4
    t.live = {
        "a": rows("extracting"),
        "b": rows("done", "auditing"),
        "c": rows("queued"),  # launched, waiting for a model-call permit
        "d": rows("waiting"),  # read, waiting for its turn to merge
    }
    counts = t.view()["counts"]
    assert {k: counts[k] for k in ("reading", "merging", "waiting", "running")} == {
        "reading": 1,
        "merging": 1,
        "waiting": 3 + 2,
        "running": 2,
    }
    assert counts["waiting"] + counts["running"] + counts["done"] == 9  # every file once
