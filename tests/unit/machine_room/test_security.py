"""Loopback security decisions (issue 6): token, Host, Origin. Sec-Fetch-Site and the shapes:
`test_security_fetch_site.py`, `test_security_shapes.py`."""

from __future__ import annotations

import pytest

from server.api.machine_room.security import refusal_reason

OWN = {"host": "127.0.0.1:8765"}


def reason(
    headers: dict[str, str],
    path: str = "/api/chats",
    token: str | None = None,
    allowed: frozenset[str] = frozenset(),
    method: str = "GET",
) -> str | None:
    return refusal_reason(headers, path, method=method, token=token, allowed_origins=allowed)


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param(OWN, id="no-origin"),
        pytest.param(
            {"host": "localhost:8765", "origin": "http://localhost:8765"}, id="same-origin-localhost"
        ),
        pytest.param({"host": "127.0.0.1:8765", "origin": "http://127.0.0.1:8765"}, id="same-origin"),
        pytest.param({"host": "[::1]:8765"}, id="ipv6-loopback"),
    ],
)
def test_web_mode_admits_the_app_itself(headers: dict[str, str]) -> None:
    assert reason(headers) is None


@pytest.mark.parametrize(
    "headers, words",
    [
        pytest.param({"host": "evil.example:8765"}, "not a loopback", id="dns-rebinding-host"),
        pytest.param({}, "not a loopback", id="no-host"),
        pytest.param(
            {"host": "127.0.0.1:8765", "origin": "https://evil.example"}, "other sites", id="foreign-origin"
        ),
        pytest.param(
            {"host": "127.0.0.1:8765", "origin": "http://localhost:3000"}, "other sites", id="other-local-app"
        ),
        pytest.param({"host": "127.0.0.1.evil.example:8765"}, "not a loopback", id="loopback-prefix-trick"),
    ],
)
def test_web_mode_refuses_foreign_requests(headers: dict[str, str], words: str) -> None:
    assert words in (reason(headers) or "")


def test_allowed_dev_origin_passes() -> None:
    headers = {"host": "127.0.0.1:8765", "origin": "http://localhost:5173"}
    assert reason(headers, allowed=frozenset({"http://localhost:5173"})) is None
    # the Vite dev page calling the server on its own port directly: same-site, listed
    for site in ("same-site", "cross-site"):
        direct = {**headers, "sec-fetch-site": site}
        assert reason(direct, method="POST", allowed=frozenset({"http://localhost:5173"})) is None
        assert reason(direct, method="POST") is not None


def test_the_vite_proxy_passes_without_listing() -> None:
    """`npm run dev` proxies `/api` with `changeOrigin: false`: Host and Origin are both the dev
    server's, and the browser calls it same-origin."""
    proxied = {"host": "localhost:5173", "origin": "http://localhost:5173", "sec-fetch-site": "same-origin"}
    assert reason(proxied, method="POST") is None


def test_desktop_mode_requires_the_token_on_api_only() -> None:
    assert "token" in (reason(OWN, token="t0k") or "")
    assert "token" in (reason({**OWN, "x-lh-token": "wrong"}, token="t0k") or "")
    assert reason({**OWN, "x-lh-token": "t0k"}, token="t0k") is None
    assert reason(OWN, path="/", token="t0k") is None  # the page itself loads; its API calls carry the token
    assert "loopback" in (reason({"host": "evil:1", "x-lh-token": "t0k"}, token="t0k") or "")
