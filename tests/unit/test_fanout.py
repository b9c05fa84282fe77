"""The in-process fan-out (`server.core.fanout`): each handler of a message's type runs in order,
each contained; `publish` never raises; an async handler is awaited only by `publish_awaited`."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Coroutine
from typing import Any

import pytest

from server.core.fanout import FanOut, JobOutcomeSaved, LessonDeleted, MergeLanded, TurnSettled


def test_handlers_run_in_table_order_with_the_message() -> None:
    seen: list[tuple[str, str]] = []
    fanout = FanOut(
        {
            LessonDeleted: [lambda m: seen.append(("a", m.chat_id)), lambda m: seen.append(("b", m.chat_id))],
            MergeLanded: [lambda m: seen.append(("merge", m.label))],
        }
    )
    fanout.publish(LessonDeleted("c_1"))
    assert seen == [("a", "c_1"), ("b", "c_1")]  # only the deleted lesson's handlers


def test_a_failing_handler_is_logged_and_the_next_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    def broken(message: LessonDeleted) -> None:
        raise RuntimeError("disk on fire")

    fanout = FanOut({LessonDeleted: [broken, lambda m: seen.append(m.chat_id)]})
    with caplog.at_level(logging.ERROR, logger="lh.fanout"):
        fanout.publish(LessonDeleted("c_1"))  # nothing raised to the publisher
    assert seen == ["c_1"]
    [failure] = caplog.records
    assert "LessonDeleted" in failure.getMessage() and "broken" in failure.getMessage()
    assert failure.exc_info is not None and "disk on fire" in str(failure.exc_info[1])


def test_a_message_type_without_handlers_does_nothing() -> None:
    FanOut({}).publish(MergeLanded("job_1"))  # no table entry: silent


def test_publish_never_runs_an_async_handler_and_closes_its_coroutine(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    async def settle(message: MergeLanded) -> None:
        ran.append(message.label)

    made: list[Coroutine[Any, Any, None]] = []

    def handler(message: MergeLanded) -> Coroutine[Any, Any, None]:
        made.append(settle(message))
        return made[-1]

    with caplog.at_level(logging.ERROR, logger="lh.fanout"):
        FanOut({MergeLanded: [handler]}).publish(MergeLanded("job_1"))
    assert ran == []
    assert inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED  # never left unawaited
    assert "was not run" in caplog.records[0].getMessage()


def test_publish_awaited_awaits_each_handler_before_the_next(caplog: pytest.LogCaptureFixture) -> None:
    order: list[str] = []

    async def slow(message: MergeLanded) -> None:
        await asyncio.sleep(0.01)
        order.append("slow")

    async def failing(message: MergeLanded) -> None:
        raise ValueError("no layout")

    fanout = FanOut({MergeLanded: [slow, failing, lambda m: order.append("sync")]})
    with caplog.at_level(logging.ERROR, logger="lh.fanout"):
        asyncio.run(fanout.publish_awaited(MergeLanded("job_1")))
    assert order == ["slow", "sync"]  # the failing one contained between them
    assert len(caplog.records) == 1 and "failing" in caplog.records[0].getMessage()


@pytest.mark.parametrize("message", [LessonDeleted("c_1"), MergeLanded("job_1")])
def test_messages_are_frozen(message: LessonDeleted | MergeLanded) -> None:
    field = dataclasses.fields(message)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(message, field, "other")


def test_every_message_type_is_a_frozen_dataclass() -> None:
    for kind in (TurnSettled, LessonDeleted, JobOutcomeSaved, MergeLanded):
        assert dataclasses.is_dataclass(kind) and getattr(kind, "__dataclass_params__").frozen  # noqa: B009
