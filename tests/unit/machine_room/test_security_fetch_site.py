"""Issue 26 item 5: what a browser's `Sec-Fetch-Site` says decides whether a request came from
the app's own pages. Requests a browser did not make (no `Sec-Fetch-Site`: curl, Node's fetch in
Electron main) and the app's own pages (`same-origin`) pass; a state-changing request from
anywhere else is refused, and so is another site reading `/api`."""

from __future__ import annotations

import pytest

from server.api.machine_room.security import refusal_reason

HOST = "127.0.0.1:8765"
OWN = f"http://{HOST}"
STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def reason(
    method: str,
    path: str = "/api/chats",
    *,
    site: str | None = None,
    origin: str | None = None,
    token: str | None = None,
    allowed: frozenset[str] = frozenset(),
    sent_token: str | None = None,
) -> str | None:
    headers = {"host": HOST}
    if sent_token is not None:
        headers["x-lh-token"] = sent_token
    if site is not None:
        headers["sec-fetch-site"] = site
    if origin is not None:
        headers["origin"] = origin
    return refusal_reason(headers, path, method=method, token=token, allowed_origins=allowed)


@pytest.mark.parametrize("method", STATE_CHANGING)
@pytest.mark.parametrize(
    "site", ["cross-site", "same-site", "none", "unknown-value", "", "same-origin, cross-site"]
)
def test_a_state_changing_request_not_from_our_pages_is_refused(method: str, site: str) -> None:
    # with no Origin (the finding), with our own Origin (contradictory: still refused)
    for origin in (None, OWN):
        why = reason(method, site=site, origin=origin)
        assert why is not None and "Sec-Fetch-Site" in why and method in why, (method, site, origin)


@pytest.mark.parametrize("method", STATE_CHANGING)
def test_our_pages_and_non_browser_clients_change_data(method: str) -> None:
    assert reason(method, site="same-origin", origin=OWN) is None  # the app's fetch()
    assert reason(method, site="same-origin") is None  # Chromium omits Origin on a same-origin GET-like
    assert reason(method) is None  # curl, Electron main's Node fetch (sends no Sec-Fetch-*)
    assert reason(method, token="t0k", sent_token="t0k") is None  # desktop main's own call
    assert reason(method, site="same-origin", origin=OWN, token="t0k", sent_token="t0k") is None


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_reading_the_api_from_another_site_is_refused(method: str) -> None:
    for site in ("cross-site", "same-site"):
        why = reason(method, "/api/chats/abc", site=site)
        assert why is not None and "another site" in why
    assert reason(method, "/api/health", site="none") is None  # the learner typed the URL
    assert reason(method, "/api/health", site="same-origin") is None
    assert reason(method, "/api/health") is None


@pytest.mark.parametrize("site", ["cross-site", "same-site", "none"])
def test_pages_and_assets_load_from_a_link_anywhere(site: str) -> None:
    for path in ("/", "/lessons/abc", "/assets/index.js", "/apix"):
        assert reason("GET", path, site=site) is None


def test_the_sandboxed_demo_frame_only_loads() -> None:
    """The Workbench demo's frame (`sandbox="allow-scripts"`, an opaque origin) is requested by
    our page (same-origin); anything the demo itself sends carries `Origin: null` and cross-site."""
    assert reason("GET", "/api/jobs/job_1/demo", site="same-origin") is None
    assert reason("GET", "/api/health", site="cross-site", origin="null") is not None
    assert reason("POST", "/api/chats", site="cross-site", origin="null") is not None


def test_a_listed_origin_is_trusted_whatever_the_site() -> None:
    dev = "http://localhost:5173"
    for site in ("same-site", "cross-site", None):
        assert reason("POST", site=site, origin=dev, allowed=frozenset({dev})) is None
        assert reason("GET", site=site, origin=dev, allowed=frozenset({dev})) is None
    # without the Origin the listing vouches for nothing
    assert reason("POST", site="same-site", allowed=frozenset({dev})) is not None


def test_the_token_is_still_required_after_a_same_origin_pass() -> None:
    why = reason("POST", site="same-origin", origin=OWN, token="t0k")
    assert why is not None and "token" in why
