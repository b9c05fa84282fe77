"""Issue 10, defect 4 and part of 5: `Origin: null` and malformed origins or hosts are refused
with the reason (never passed, never a 500). Issue 26 item 5: the scheme must match."""

from __future__ import annotations

import pytest

from server.api.machine_room.security import refusal_reason

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
        "https://127.0.0.1:8765",
        "HTTP://127.0.0.1:8765",
        "http://127.0.0.1:8765/",
        "http://localhost:8765",
        "http://a@127.0.0.1:8765",
    ],
)
def test_null_and_malformed_origins_are_refused(origin: str) -> None:
    reason = refusal_reason(
        {"host": OWN, "origin": origin}, "/api/chat", method="POST", token=None, allowed_origins=frozenset()
    )
    assert reason is not None and "Origin" in reason


def test_null_passes_only_when_listed_explicitly() -> None:
    headers = {"host": OWN, "origin": "null"}
    assert (
        refusal_reason(headers, "/api/chat", method="POST", token=None, allowed_origins=frozenset({"null"}))
        is None
    )


@pytest.mark.parametrize("host", ["127.0.0.1:abc", "127.0.0.1:99999", "[::1", ""])
def test_malformed_hosts_are_refused(host: str) -> None:
    assert (
        refusal_reason({"host": host}, "/api/health", method="POST", token=None, allowed_origins=frozenset())
        is not None
    )


def test_the_own_origin_still_passes() -> None:
    """The origin a browser sends is exactly `http://` + the Host: another loopback name for the
    same port is another origin (localhost may resolve to ::1, where another program may listen),
    and a trailing slash is not an origin's serialization."""
    for host in (OWN, "localhost:8765", "[::1]:8765", "LocalHost:8765"):
        origin = f"http://{host.lower()}"
        headers = {"host": host, "origin": origin}
        assert (
            refusal_reason(headers, "/api/chat", method="POST", token=None, allowed_origins=frozenset())
            is None
        )


def test_a_wrong_scheme_says_so() -> None:
    reason = refusal_reason(
        {"host": OWN, "origin": f"https://{OWN}"},
        "/api/chat",
        method="POST",
        token=None,
        allowed_origins=frozenset(),
    )
    assert reason is not None and "scheme" in reason and "http://" in reason
