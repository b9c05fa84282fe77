"""The offline model's measured speed and expected wait (issue 29, item 3)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.core.machine_room.offline_speed import OfflineSpeed

SAMPLE = st.tuples(st.integers(1, 4096), st.floats(0.01, 3600, allow_nan=False))


def test_nothing_measured_means_no_expected_wait() -> None:
    assert OfflineSpeed().expected_wait_s is None
    assert OfflineSpeed().measured(0, 5.0) == OfflineSpeed()
    assert OfflineSpeed().measured(10, 0.0) == OfflineSpeed()


def test_one_turn_sets_the_speed_and_the_wait() -> None:
    speed = OfflineSpeed().measured(120, 40.0)
    assert speed.tokens_per_s == 3.0 and speed.reply_tokens == 120 and speed.samples == 1
    assert speed.expected_wait_s == 40.0


@given(st.lists(SAMPLE, min_size=1, max_size=30))
def test_the_speed_stays_within_what_was_measured(samples: list[tuple[int, float]]) -> None:
    speed = OfflineSpeed()
    for tokens, seconds in samples:
        speed = speed.measured(tokens, seconds)
    rates = [t / s for t, s in samples]
    assert speed.samples == len(samples)
    assert speed.tokens_per_s is not None and speed.reply_tokens is not None
    assert min(rates) * (1 - 1e-9) <= speed.tokens_per_s <= max(rates) * (1 + 1e-9)
    assert min(t for t, _ in samples) - 1e-9 <= speed.reply_tokens <= max(t for t, _ in samples) + 1e-9
    wait = speed.expected_wait_s
    assert wait is not None and wait > 0


def test_a_slower_machine_lengthens_the_wait() -> None:
    quick = OfflineSpeed().measured(100, 10.0)
    assert (quick.measured(100, 100.0).expected_wait_s or 0) > (quick.expected_wait_s or 0)
