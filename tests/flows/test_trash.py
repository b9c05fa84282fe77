"""Issue 31 item 6 (decision 0043): a deleted lesson or problem set goes to the trash, kept 30
days, and comes back whole: every API read the same as before the deletion. Purged after 30 days
(an injected clock), emptied on request; a restore that would overwrite a record is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from server.core.contracts.jobs import Delivery, DemoArtifact, JobRecord, WorkerResult, steer_id
from server.core.events import EventBus
from server.core.trash import TrashEntry
from server.services.trash import TrashService
from server.store.classroom.chats import FileChatStore
from server.store.trash import FileTrash
from server.store.workbench.jobs import FileJobStore
from tests.flows.conftest import Live, sse_chunks, turn_body
from tests.flows.machine_room.test_backup_restore import job, lessons, reads, seed, server
from tests.flows.test_events import wait_for

SET_ID = "ps_0000000a"


def test_a_trashed_lesson_and_set_come_back_with_every_read_the_same(tmp_path: Path) -> None:
    data = tmp_path / "data"
    seed(data)
    with server(data) as client:
        first, second = lessons(client)
        job(data, first)  # a Workbench job of the first lesson goes to the trash with it
        ids = {"chat_id": [first, second], "set_id": [SET_ID], "job_id": ["job_demo1"]}
        before = reads(client, ids)
        assert client.delete(f"/api/chats/{first}").status_code == 204
        assert client.delete(f"/api/practice/sets/{SET_ID}").status_code == 204
        # gone from every read ...
        assert client.get(f"/api/chats/{first}").status_code == 404
        assert [c["id"] for c in client.get("/api/chats").json()["chats"]] == [second]
        assert client.get(f"/api/practice/sets/{SET_ID}").status_code == 404
        assert not (data / "jobs" / "job_demo1.json").exists()
        # ... and in the trash, moved, not removed
        trash = client.get("/api/trash").json()
        assert trash["days"] == 30
        by_id = {e["id"]: e for e in trash["entries"]}
        assert set(by_id) == {first, SET_ID}
        assert by_id[first]["kind"] == "lesson" and by_id[SET_ID]["kind"] == "practiceSet"
        assert by_id[SET_ID]["title"] == "Heaps"
        assert sorted(by_id[first]["files"]) == sorted(
            [f"chats/{first}.json", "jobs/job_demo1.json"]
            + ([f"chats/{first}.log"] if f"chats/{first}.log" in by_id[first]["files"] else [])
        )
        assert (data / "trash" / first / "files" / "chats" / f"{first}.json").is_file()
        for entry_id in (first, SET_ID):
            restored = client.post("/api/trash/restore", json={"id": entry_id})
            assert restored.status_code == 200, restored.text
            assert restored.json()["entry"]["id"] == entry_id
        assert client.get("/api/trash").json()["entries"] == []
        assert not (data / "trash" / first).exists()
        after = reads(client, ids)
        # the activity feed is this process's run rows, not a record: a deleted set's rows go
        after.pop("/api/activity"), before.pop("/api/activity")
        assert after == before
        # the restored lesson goes on: a turn on it works
        turn = client.post("/api/chat", json=turn_body(first, "And then?", "u9"))
        assert turn.status_code == 200 and "[DONE]" in sse_chunks(turn.text)


def test_the_trash_is_emptied_on_request_and_unknown_entries_are_404(live: Live) -> None:
    chat_id = live.new_chat()
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    assert [e["id"] for e in live.client.get("/api/trash").json()["entries"]] == [chat_id]
    emptied = live.client.delete("/api/trash")
    assert emptied.json() == {"removed": 1}
    assert live.client.get("/api/trash").json()["entries"] == []
    assert list((live.data / "trash").iterdir()) == []
    missing = live.client.post("/api/trash/restore", json={"id": chat_id})
    assert missing.status_code == 404 and "trash" in missing.json()["detail"]
    bad = live.client.post("/api/trash/restore", json={"id": "../chats"})
    assert bad.status_code == 400
    assert live.client.get(f"/api/chats/{chat_id}").status_code == 404


def test_a_restore_that_would_overwrite_a_lesson_is_refused_and_changes_nothing(live: Live) -> None:
    chat_id = live.new_chat()
    record = (live.data / "chats" / f"{chat_id}.json").read_bytes()
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    (live.data / "chats" / f"{chat_id}.json").write_bytes(record)  # back from elsewhere (a backup)
    refused = live.client.post("/api/trash/restore", json={"id": chat_id})
    assert refused.status_code == 409 and "exists again" in refused.json()["detail"]
    assert [e["id"] for e in live.client.get("/api/trash").json()["entries"]] == [chat_id]
    assert (live.data / "trash" / chat_id / "files" / "chats" / f"{chat_id}.json").read_bytes() == record


def test_entries_are_purged_after_30_days_on_the_injected_clock(live: Live) -> None:
    now = ["2026-03-01T10:00:00.000Z"]
    live.services.trash.clock = lambda: now[0]
    chat_id = live.new_chat()
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    [entry] = live.client.get("/api/trash").json()["entries"]
    assert entry["deletedAt"] == now[0] and entry["purgeAt"] == "2026-03-31T10:00:00.000Z"
    now[0] = "2026-03-31T09:59:59.999Z"  # a millisecond short of 30 days: kept
    assert len(live.client.get("/api/trash").json()["entries"]) == 1
    now[0] = "2026-03-31T10:00:00.000Z"
    assert live.client.get("/api/trash").json()["entries"] == []
    assert not (live.data / "trash" / chat_id).exists()


def test_purged_at_start_and_a_cut_short_move_is_put_back(tmp_path: Path) -> None:
    """What a crash left (a folder without entry.json) goes back to its place at start; entries
    past their time go."""
    (tmp_path / "trash" / "c_old" / "files" / "chats").mkdir(parents=True)
    old = TrashEntry(
        id="c_old",
        kind="lesson",
        title="Old",
        deleted_at="2026-01-01T00:00:00.000Z",
        purge_at="2026-01-31T00:00:00.000Z",
        files=["chats/c_old.json"],
    )
    (tmp_path / "trash" / "c_old" / "files" / "chats" / "c_old.json").write_text("{}")
    (tmp_path / "trash" / "c_old" / "entry.json").write_text(old.model_dump_json(by_alias=True))
    half = tmp_path / "trash" / "c_half" / "files" / "chats"
    half.mkdir(parents=True)
    (half / "c_half.json").write_text(json.dumps({"id": "c_half"}))
    store = FileTrash(tmp_path)
    chats = FileChatStore(tmp_path / "chats")
    clock = "2026-02-01T00:00:00.000Z"
    jobs = FileJobStore(tmp_path / "jobs")
    service = TrashService(store, chats, chats.held, jobs, EventBus(), clock=lambda: clock)
    service.startup()
    assert (tmp_path / "chats" / "c_half.json").read_text() == '{"id": "c_half"}'
    assert list((tmp_path / "trash").iterdir()) == []


def test_a_restored_lesson_is_owed_its_jobs_steers_again(live: Live) -> None:
    """While in the trash a lesson is owed nothing (LessonDeleted dropped its deliveries); restored,
    its job's pending delivery is registered again and delivered into the lesson by the wake."""
    chat_id = live.new_chat()
    turn = live.client.post("/api/chat", json=turn_body(chat_id))
    assert turn.status_code == 200 and "[DONE]" in sse_chunks(turn.text)
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    # a finished job of the lesson that still owes it its result (as a job ending while the lesson
    # was being deleted leaves it), put in the trash entry beside the lesson's own files
    now = datetime.now(UTC).isoformat()
    steer = steer_id("job_owed", "result")
    record = JobRecord(
        id="job_owed",
        chat_id=chat_id,
        tool_call_id="call_1",
        kind="demo",
        input={"request": "x"},
        status="done",
        created_at=now,
        finished_at=now,
        result=WorkerResult(text="done", artifact=DemoArtifact(title="Box", html="<p>box</p>")),
        delivery=Delivery(kind="result", steer_id=steer),
    )
    entry_dir = live.data / "trash" / chat_id
    (entry_dir / "files" / "jobs").mkdir(parents=True)
    (entry_dir / "files" / "jobs" / "job_owed.json").write_text(record.model_dump_json(by_alias=True))
    entry = json.loads((entry_dir / "entry.json").read_text())
    entry["files"].append("jobs/job_owed.json")
    (entry_dir / "entry.json").write_text(json.dumps(entry))
    assert live.services.wake.pending(chat_id) == []
    assert live.client.post("/api/trash/restore", json={"id": chat_id}).status_code == 200

    def delivered() -> bool:
        job = live.services.stores.jobs.get("job_owed")
        return job is not None and job.delivery is not None and job.delivery.status == "delivered"

    wait_for(delivered, timeout=30)
    assert steer in [m["id"] for m in live.record(chat_id)["messages"]]
