"""The clock and id makers (`server.core.clock`): the formats the records have always used."""

from __future__ import annotations

import re

import pytest

from server.core.clock import new_id, utc_now


def test_utc_now_is_iso_8601_utc_with_milliseconds() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", utc_now())


@pytest.mark.parametrize(
    ("prefix", "digits", "shape"),
    [
        ("c_", 16, r"c_[0-9a-f]{16}"),  # sessions
        ("m_", 16, r"m_[0-9a-f]{16}"),  # messages
        ("job_", 16, r"job_[0-9a-f]{16}"),  # Workbench jobs
        ("ik_", 16, r"ik_[0-9a-f]{16}"),  # accepted-queue keys
        ("ps_", 16, r"ps_[0-9a-f]{16}"),  # problem sets
        ("imp_", 12, r"imp_[0-9a-f]{12}"),  # imports
        ("", 12, r"[0-9a-f]{12}"),  # an extraction run's nonce
        ("", 8, r"[0-9a-f]{8}"),  # the graph view's process epoch
    ],
)
def test_each_id_keeps_its_format(prefix: str, digits: int, shape: str) -> None:
    made = {new_id(prefix, digits) for _ in range(50)}
    assert all(re.fullmatch(shape, one) for one in made)
    assert len(made) == 50  # random, not a counter that repeats


def test_the_default_is_sixteen_hex_digits() -> None:
    assert re.fullmatch(r"c_[0-9a-f]{16}", new_id("c_"))


@pytest.mark.parametrize("digits", [0, -2, 7])
def test_an_id_is_whole_bytes(digits: int) -> None:
    with pytest.raises(ValueError, match="positive even number of hex digits"):
        new_id("x_", digits)
