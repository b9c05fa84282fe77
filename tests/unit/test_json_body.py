"""Strict JSON for request bodies (issue 10, defect 5) and positions with huge integers."""

from __future__ import annotations

import pytest

from server.core.json_body import MAX_DEPTH, BodyRefused, parse_json_body
from server.core.library.layout import sanitize_positions


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"NaN", "NaN"),
        (b'{"a": Infinity}', "Infinity"),
        (b"[-Infinity]", "-Infinity"),
        (b"1e400", "overflows"),
        (b"18446744073709551616", "2^53"),
        (b"-9007199254740992", "2^53"),
        (b"1" + b"0" * 5000, "2^53"),
        (b"[" * 5000 + b"]" * 5000, "nested"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested"),
        (b"{", "not JSON"),
        (b"\xff", "UTF-8"),
    ],
)
def test_refused_with_the_reason(body: bytes, words: str) -> None:
    with pytest.raises(BodyRefused, match=words.replace("^", r"\^")):
        parse_json_body(body)


def test_ordinary_json_passes() -> None:
    value = parse_json_body(b'{"x": 9007199254740991, "y": -1.5e300, "z": [[[]]], "s": "NaN"}')
    assert value == {"x": 2**53 - 1, "y": -1.5e300, "z": [[[]]], "s": "NaN"}
    assert parse_json_body(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None


def test_positions_drop_an_integer_beyond_the_double_range() -> None:
    assert sanitize_positions({"a": {"x": 10**400, "y": 1}, "b": [1, 2]}, {"a", "b"}) == {"b": (1.0, 2.0)}
