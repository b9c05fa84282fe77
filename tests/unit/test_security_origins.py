"""Issue 10, defect 4 and part of 5: `Origin: null` and malformed origins or hosts are refused
with the reason (never passed, never a 500)."""

from __future__ import annotations

import pytest

from server.api.security import refusal_reason

OWN = "127.0.0.1:8765"


@pytest.mark.parametrize(
    "origin",
    [
        "null",
        "http://127.0.0.1:abc",
        "http://127.0.0.1:99999",
        "http://[::1",
        "http://127.0.0.1:8765:1",
        "",
        "file://",
    ],
)
def test_null_and_malformed_origins_are_refused(origin: str) -> None:
    reason = refusal_reason(
        {"host": OWN, "origin": origin}, "/api/chat", token=None, allowed_origins=frozenset()
    )
    assert reason is not None and "Origin" in reason


def test_null_passes_only_when_listed_explicitly() -> None:
    headers = {"host": OWN, "origin": "null"}
    assert refusal_reason(headers, "/api/chat", token=None, allowed_origins=frozenset({"null"})) is None


@pytest.mark.parametrize("host", ["127.0.0.1:abc", "127.0.0.1:99999", "[::1", ""])
def test_malformed_hosts_are_refused(host: str) -> None:
    assert refusal_reason({"host": host}, "/api/health", token=None, allowed_origins=frozenset()) is not None


def test_the_own_origin_still_passes() -> None:
    for origin in ("http://127.0.0.1:8765", "http://localhost:8765", "http://127.0.0.1:8765/"):
        assert (
            refusal_reason(
                {"host": OWN, "origin": origin}, "/api/chat", token=None, allowed_origins=frozenset()
            )
            is None
        )
