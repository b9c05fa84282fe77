"""One-file-per-record stores (`store/records.py`): problem sets and Workbench jobs. A torn or
foreign file is refused by `get` and skipped by `list`, never deleted; ids are file names, so
anything else is refused; `update` writes only what `change` returns."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.contracts.jobs import JobRecord
from server.core.ports import StoreCorrupt
from server.store.workbench.jobs import FileJobStore


def job(job_id: str, chat_id: str = "c1", created_at: str = "2026-12-01T00:00:00Z") -> JobRecord:
    return JobRecord(
        id=job_id,
        chat_id=chat_id,
        tool_call_id="t",
        kind="demo",
        input={"request": "x"},
        created_at=created_at,
    )


def test_jobs_round_trip_and_list_by_session_oldest_first(tmp_path: Path) -> None:
    store = FileJobStore(tmp_path / "jobs")
    assert store.list() == [] and store.get("job_a") is None
    store.save(job("job_b", created_at="2026-12-01T00:00:02Z"))
    store.save(job("job_a", created_at="2026-12-01T00:00:01Z"))
    store.save(job("job_c", chat_id="c2"))
    assert [j.id for j in store.list("c1")] == ["job_a", "job_b"]
    assert len(store.list()) == 3
    assert store.delete("job_a") and not store.delete("job_a")


def test_a_torn_job_file_is_refused_and_skipped_never_deleted(tmp_path: Path) -> None:
    store = FileJobStore(tmp_path / "jobs")
    store.save(job("job_ok"))
    torn = tmp_path / "jobs" / "job_torn.json"
    torn.write_text('{"id": "job_torn", "chatId":')
    foreign = tmp_path / "jobs" / "job_shape.json"
    foreign.write_text('{"id": "job_shape"}')
    with pytest.raises(StoreCorrupt, match="job_torn"):
        store.get("job_torn")
    with pytest.raises(StoreCorrupt, match="not a job record"):
        store.get("job_shape")
    assert [j.id for j in store.list()] == ["job_ok"]
    assert torn.exists() and foreign.exists()


def test_ids_are_file_names(tmp_path: Path) -> None:
    store = FileJobStore(tmp_path / "jobs")
    assert store.get("../settings") is None and not store.delete("../../etc/passwd")
    with pytest.raises(ValueError):
        JobRecord.model_validate({**job("job_x").model_dump(by_alias=True), "id": "../x"})


def test_update_writes_only_what_change_returns(tmp_path: Path) -> None:
    store = FileJobStore(tmp_path / "jobs")
    store.save(job("job_u"))
    assert store.update("job_u", lambda j: None) is None
    done = store.update("job_u", lambda j: j.model_copy(update={"status": "done"}))
    assert done is not None and store.get("job_u").status == "done"  # type: ignore[union-attr]
    assert store.update("job_missing", lambda j: j) is None
