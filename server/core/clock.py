"""The clock and the id makers every system stamps its records with (shared leaves, injected).

Services receive a `Clock` and a `NewId` at construction (`server.services.bootstrap` passes the
real ones below); tests pass fixed ones. No module reads the time or mints an id by itself.

Id formats (each unchanged from before these lived here): `<prefix>` + lowercase hex from
`secrets`; sessions `c_`, messages `m_`, jobs `job_`, accepted-queue keys `ik_`, problem sets
`ps_` (16 hex digits each); imports `imp_` and an extraction run's nonce (12); the graph view's
process epoch (8).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

Clock = Callable[[], str]
"""() -> the current time as the records store it: ISO-8601 UTC with milliseconds and `Z`."""


class NewId(Protocol):
    """(prefix, hex digits) -> a fresh id: `prefix` followed by that many lowercase hex digits."""

    def __call__(self, prefix: str, hex_digits: int = 16) -> str: ...


def utc_now() -> str:
    """ISO-8601 UTC timestamp with milliseconds, e.g. 2026-11-30T07:00:00.000Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(prefix: str, hex_digits: int = 16) -> str:
    """`prefix` + `hex_digits` random lowercase hex digits, e.g. `new_id("c_")` -> `c_9f2c4e1a0b7d3c55`.

    Raises ValueError when `hex_digits` is not a positive even number (ids are whole bytes)."""
    if hex_digits <= 0 or hex_digits % 2:
        raise ValueError(f"an id has a positive even number of hex digits, not {hex_digits}")
    return prefix + secrets.token_hex(hex_digits // 2)
