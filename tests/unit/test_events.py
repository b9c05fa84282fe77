"""The events bus (seed §10): a listener set iterated over a snapshot, errors isolated."""

from __future__ import annotations

from typing import Any

import pytest

from server.core.events import EVENT_NAMES, EventBus


def test_listeners_get_events_in_order_and_unsubscribe_is_idempotent() -> None:
    bus = EventBus()
    got: list[tuple[str, dict[str, Any]]] = []
    stop = bus.subscribe(lambda e, d: got.append((e, d)))
    bus.emit("turn-started", {"chatId": "c1"})
    bus.emit("chats-changed")
    stop()
    stop()
    bus.emit("graph-changed")
    assert got == [("turn-started", {"chatId": "c1"}), ("chats-changed", {})]
    assert len(bus) == 0


def test_unsubscribing_during_an_emit_is_safe_and_the_snapshot_still_delivers() -> None:
    bus = EventBus()
    got: list[str] = []
    stops: list[Any] = []
    stops.append(bus.subscribe(lambda e, d: (got.append("a"), stops[1]())))  # removes b mid-emit
    stops.append(bus.subscribe(lambda e, d: got.append("b")))
    bus.emit("activity-changed")
    bus.emit("activity-changed")
    assert got == ["a", "b", "a"]  # b was in the snapshot of the first emit only


def test_one_failing_listener_does_not_starve_the_others(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    got: list[str] = []

    def broken(event: str, data: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    bus.subscribe(broken)
    bus.subscribe(lambda e, d: got.append(e))
    bus.emit("graph-changed")
    assert got == ["graph-changed"]
    assert "an events listener failed" in caplog.text


def test_unknown_event_names_are_refused_and_the_payload_is_a_copy() -> None:
    bus = EventBus()
    with pytest.raises(ValueError, match="unknown event"):
        bus.emit("chat-changed")  # type: ignore[arg-type]
    seen: list[dict[str, Any]] = []
    bus.subscribe(lambda e, d: seen.append(d))
    data = {"chatId": "c1"}
    bus.emit("turn-settled", data)
    seen[0]["chatId"] = "x"
    assert data == {"chatId": "c1"}
    assert set(EVENT_NAMES) == {
        "turn-started",
        "turn-settled",
        "jobs-changed",
        "activity-changed",
        "chats-changed",
        "graph-changed",
        "subscriptions-changed",
    }


def test_close_tells_every_subscriber_once_and_later_ones_at_once() -> None:
    bus = EventBus()
    closed: list[str] = []
    bus.subscribe(lambda e, d: None, on_close=lambda: closed.append("a"))
    stop = bus.subscribe(lambda e, d: None, on_close=lambda: closed.append("b"))
    stop()  # an unsubscribed stream is not told
    bus.close()
    bus.close()
    bus.subscribe(lambda e, d: None, on_close=lambda: closed.append("late"))
    assert closed == ["a", "late"]
