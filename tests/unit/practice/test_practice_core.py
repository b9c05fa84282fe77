"""Practice's pure core (server/core/practice): the default dated title of a set."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from server.core.practice.levels import default_title


def test_the_default_title_is_dated_portably_in_english() -> None:
    # the day without a leading zero (the `%-d` of glibc, which raises on Windows), an English month
    assert default_title(datetime(2026, 12, 1, 10, 0, tzinfo=UTC)) == "Practice — 1 Dec 2026"
    assert default_title(datetime(2027, 3, 15, 23, 59, 59, tzinfo=UTC)) == "Practice — 15 Mar 2027"
    # the UTC day, as the frontend's defaultSetTitle dates it: 01:30 in UTC+2 is still 31 Dec in UTC
    plus_two = timezone(timedelta(hours=2))
    assert default_title(datetime(2027, 1, 1, 1, 30, tzinfo=plus_two)) == "Practice — 31 Dec 2026"
    assert default_title(datetime(2026, 5, 9)) == "Practice — 9 May 2026"  # naive: taken as UTC
