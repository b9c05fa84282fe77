"""BackupService (issue 31 item 4): the graph's files are opened inside the merge section (a backup
waits while a merge or deletion holds it, and does not hold it while the archive is written), each
lesson is opened under the chat store's lock, and a restore needs the token of the last check."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from server.core.machine_room.backup import Counts, Manifest
from server.core.refusals import Refused
from server.services.machine_room.backup import BackupService
from server.store.machine_room.backup import BackupFiles
from tests.bench.library.bench_graph_read import write_graph


class Watched(BackupFiles):
    """Real files; records whether the merge section was held when the graph was opened and when
    the archive was written."""

    def __init__(self, root: Path, section: asyncio.Lock, chat_lock: Any) -> None:
        super().__init__(root, lambda: chat_lock, "test")
        self.section = section
        self.seen: dict[str, bool] = {}

    def open_graph(self) -> list[Any]:
        self.seen["open_graph"] = self.section.locked()
        return super().open_graph()

    def write(self, target: Path, graph: list[Any], created_at: str) -> Manifest:
        self.seen["write"] = self.section.locked()
        return super().write(target, graph, created_at)


class CountingLock:
    """A chat store lock that counts how often it was taken."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.taken = 0

    def __enter__(self) -> None:
        self.lock.acquire()
        self.taken += 1

    def __exit__(self, *_: object) -> None:
        self.lock.release()


def service(tmp_path: Path) -> tuple[BackupService, Watched, asyncio.Lock, CountingLock]:
    data = tmp_path / "data"
    write_graph(data / "graph", 20)
    (data / "chats").mkdir()
    model = {"provider": "openai", "model": "m"}
    for n in range(3):
        record = {"id": f"c{n}", "createdAt": "t", "updatedAt": "t", "model": model}
        (data / "chats" / f"c{n}.json").write_text(json.dumps(record))
    section, chats = asyncio.Lock(), CountingLock()
    files = Watched(data, section, chats)
    ids = iter(range(1000))

    def new_id(prefix: str, hex_digits: int = 16) -> str:
        return f"{prefix}{next(ids):0{hex_digits}x}"

    return BackupService(files, section, lambda: "2026-12-06T00:00:00.000Z", new_id), files, section, chats


async def test_the_graph_is_opened_inside_the_merge_section_and_written_outside_it(tmp_path: Path) -> None:
    backups, files, section, chats = service(tmp_path)
    await section.acquire()  # a merge is committing
    task = asyncio.create_task(backups.create())
    for _ in range(20):
        await asyncio.sleep(0)
    assert "open_graph" not in files.seen and not task.done()
    section.release()
    archive, manifest = await asyncio.wait_for(task, timeout=60)
    assert files.seen == {"open_graph": True, "write": False}
    assert manifest.counts == Counts(lessons=3, propositions=20)
    assert chats.taken == 3  # each lesson's pair opened under the chat store's lock
    backups.discard(archive)
    assert not archive.exists()


async def test_a_restore_needs_the_last_checks_token(tmp_path: Path) -> None:
    backups, files, _, _ = service(tmp_path)
    archive, _ = await backups.create()
    with pytest.raises(Refused) as unknown:
        await backups.restore("bk_00000000000000ff")
    assert unknown.value.code == "restore_unknown"
    first = await backups.check(io.BytesIO(archive.read_bytes()))
    second = await backups.check(io.BytesIO(archive.read_bytes()))
    assert len(list(files.restore_dir.glob("upload-*"))) == 1  # the first upload is dropped
    with pytest.raises(Refused):
        await backups.restore(first["token"])  # another archive was checked since
    assert (await backups.restore(second["token"]))["restartRequired"] is True
    assert backups.staged()["staged"]["counts"]["lessons"] == 3
    with pytest.raises(Refused) as refused:
        await backups.check(io.BytesIO(b"PK\x03\x04 cut"))
    assert refused.value.code == "archive_refused" and "cut short" in refused.value.detail
    assert list(files.restore_dir.glob("upload-*")) == []
