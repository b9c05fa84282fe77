"""The wiring (`server.services.bootstrap`): the publishers share the one `FanOut`, and a lesson's
deletion reaches every handler of `LessonDeleted` even when one of them fails, without failing
the delete (the canonical write)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.models.function import FunctionModel

from server.config import DataPaths
from server.services.bootstrap import Services, build_services
from tests.fakes import FakeSecrets
from tests.fakes.headless import FakeHeadless
from tests.flows.conftest import COMPATIBLE_SLOT, Script


@pytest.fixture
def services(data_dir: Path) -> Services:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"models": {"strong": COMPATIBLE_SLOT}}))
    script = Script()
    return build_services(
        DataPaths(data_dir),
        offline=False,
        secrets=FakeSecrets(),
        model_factory=lambda r, k, u: FunctionModel(stream_function=script.stream),
        headless=FakeHeadless(),
    )


def test_every_publisher_holds_the_one_fanout(services: Services) -> None:
    fanout = services.chats.fanout
    assert services.turns.fanout is fanout
    assert services.jobs.fanout is fanout
    assert services.extraction.fanout is fanout


def test_a_failing_deletion_handler_fails_neither_the_delete_nor_the_handlers_after_it(
    services: Services, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    record = services.chats.create("Heaps")
    services.wake.owed.entries[record.id] = {"steer_job_x_result": ("job_x", {"id": "steer_job_x_result"})}
    services.turns.failures[record.id] = {"detail": "the model failed", "at": "2026-01-01T00:00:00.000Z"}

    def broken(chat_id: str) -> None:  # the first handler of LessonDeleted
        raise OSError("the accepted queue could not be written")

    monkeypatch.setattr(services.library, "lesson_deleted", broken)
    services.chats.delete(record.id)  # raises nothing

    assert services.stores.chats.get(record.id) is None  # the canonical write stands
    assert services.wake.pending(record.id) == []  # wake.forget ran after the failure
    assert record.id not in services.turns.failures  # turns.forget too
    assert any("LessonDeleted" in r.getMessage() for r in caplog.records if r.name == "lh.fanout")
