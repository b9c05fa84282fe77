"""Strict JSON for request bodies (issue 10): standard JSON only, with numbers a browser can hold.

Python's `json` accepts `NaN`, `Infinity` and `-Infinity` (not JSON), turns `1e400` into an
infinite float, parses integers of any size (beyond 2^64 they cannot be saved with orjson, and
beyond 2^53 a JavaScript client cannot hold them exactly), and raises RecursionError on deeply
nested input. `parse_json_body` refuses all of these with a `BodyRefused` that says why.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`)."""

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a request body (the app needs about 8)."""


class BodyRefused(ValueError):
    """A request body that is not acceptable JSON; the message says why."""


def _constant(name: str) -> Any:
    raise BodyRefused(f"{name} is not a JSON number; send finite numbers only")


def _integer(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > 16 or abs(int(text)) > MAX_SAFE_INTEGER:
        shown = text if len(text) <= 24 else text[:20] + "…"
        raise BodyRefused(f"the integer {shown} is beyond ±2^53; send a smaller number")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 24 else text[:20] + "…"
        raise BodyRefused(f"the number {shown} overflows a double; send a smaller number")
    return value


def depth_of(value: Any) -> int:
    """Nesting depth of arrays and objects (a scalar is 0), computed without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            items: Any = item.values()
        elif isinstance(item, list):
            items = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in items)
    return deepest


def parse_json_body(data: bytes | str) -> Any:
    """The JSON value of a request body.

    Raises:
        BodyRefused: not UTF-8, not JSON, `NaN`/`Infinity`, an integer beyond ±2^53, a number
            that overflows a double, or nesting deeper than `MAX_DEPTH`.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise BodyRefused(f"the body is not UTF-8 (byte {exc.start}); send JSON as UTF-8") from exc
    try:
        value = json.loads(text, parse_constant=_constant, parse_int=_integer, parse_float=_float)
    except RecursionError as exc:
        raise BodyRefused(f"the body is nested too deeply; at most {MAX_DEPTH} levels are accepted") from exc
    except json.JSONDecodeError as exc:
        raise BodyRefused(
            f"the body is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from exc
    if depth_of(value) > MAX_DEPTH:
        raise BodyRefused(f"the body is nested too deeply; at most {MAX_DEPTH} levels are accepted")
    return value
