"""Dictation tokens over real HTTP against a fake Deepgram on loopback (issue 19, item 3).

`POST /api/dictation/token` mints a short-lived token with the learner's Deepgram key; the key goes
to Deepgram only and never appears in a response, a log line or a data-dir file; a missing key, a
refused key, a broken answer and an unreachable Deepgram are each a plain sentence; the app's CSP
lets the browser connect to exactly the configured Deepgram's socket origin.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import Services, build_services
from tests.fakes import FakeSecrets
from tests.fakes.deepgram import SECRET_BODY, TOKEN, VALID_KEY, FakeDeepgram
from tests.livehttp import serve

NO_KEY = "Add a Deepgram key in Settings to dictate."


@dataclass
class Dictating:
    client: httpx.Client
    services: Services
    fake: FakeDeepgram
    secrets: FakeSecrets
    app: object
    data: Path


@pytest.fixture
def dictating(data_dir: Path) -> Iterator[Dictating]:
    data_dir.mkdir(parents=True, exist_ok=True)
    secrets = FakeSecrets()
    services = build_services(DataPaths(data_dir), offline=False, secrets=secrets)
    with FakeDeepgram() as fake:
        app = create_app(services, environ={"LH_DEEPGRAM_API_BASE": fake.url})
        with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:
            yield Dictating(client, services, fake, secrets, app, data_dir)


def _with_key(d: Dictating, key: str = VALID_KEY) -> None:
    response = d.client.put("/api/keys/deepgram", json={"key": key})
    assert response.status_code == 204, response.text


def _assert_key_nowhere(key: str, d: Dictating, caplog: pytest.LogCaptureFixture, *texts: str) -> None:
    for text in texts:
        assert key not in text
    assert key not in caplog.text
    for path in d.data.rglob("*"):
        if path.is_file():
            assert key not in path.read_text(errors="ignore"), path


def test_a_token_is_minted_with_the_learners_key(
    dictating: Dictating, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _with_key(dictating)
    response = dictating.client.post("/api/dictation/token", json={})
    assert response.status_code == 200, response.text
    body = response.json()
    port = dictating.fake.server.server_address[1]
    assert body == {
        "token": TOKEN,
        "expiresIn": 30,
        "websocketUrl": f"ws://127.0.0.1:{port}/v1/listen?model=nova-3&interim_results=true"
        "&smart_format=true&punctuate=true",
    }
    # Deepgram was asked once, with the key in the Authorization header and a 30 s lifetime
    [(method, path, headers, sent)] = dictating.fake.requests
    assert (method, path) == ("POST", "/v1/auth/grant")
    assert headers["authorization"] == f"Token {VALID_KEY}"
    assert json.loads(sent) == {"ttl_seconds": 30}
    # an absent body is the same request
    assert dictating.client.post("/api/dictation/token").status_code == 200
    # the socket origin is the one outside origin the page may connect to
    policy = response.headers["content-security-policy"]
    assert f"connect-src 'self' ws://127.0.0.1:{port};" in policy
    _assert_key_nowhere(VALID_KEY, dictating, caplog, response.text)


def test_the_environment_key_is_used_when_no_key_is_stored(
    dictating: Dictating, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LH_DEEPGRAM_API_KEY", VALID_KEY)
    response = dictating.client.post("/api/dictation/token", json={})
    assert response.status_code == 200, response.text
    assert response.json()["token"] == TOKEN


def test_no_key_asks_for_one_and_calls_nobody(dictating: Dictating) -> None:
    response = dictating.client.post("/api/dictation/token", json={})
    assert response.status_code == 409
    assert response.json() == {"error": "dictation_no_key", "detail": NO_KEY}
    assert dictating.fake.requests == []


def test_a_body_with_fields_is_refused_before_deepgram_is_asked(dictating: Dictating) -> None:
    _with_key(dictating)
    for body in ({"model": "nova-3"}, [1], "x"):
        response = dictating.client.post("/api/dictation/token", json=body)
        assert response.status_code == 400, body
        assert response.json()["error"] == "bad_request"
    assert dictating.fake.requests == []


REFUSED = "Deepgram refused the key (it answered {}). Check the Deepgram key in Settings"
FAILED = "Deepgram answered {} instead of a token; try dictating again"
NO_TOKEN = "Deepgram's answer held no token; try dictating again."


@pytest.mark.parametrize(
    "mode, status, error, detail, logged",
    [
        ("unauthorized", 422, "dictation_key_refused", REFUSED.format(401), 401),
        ("forbidden", 422, "dictation_key_refused", REFUSED.format(403), 403),
        ("error", 502, "dictation_failed", FAILED.format(500), 500),
        ("bad_request", 502, "dictation_failed", FAILED.format(400), 400),
        ("garbage", 502, "dictation_failed", NO_TOKEN, 200),
        ("no_token", 502, "dictation_failed", NO_TOKEN, None),
        ("odd", 502, "dictation_failed", NO_TOKEN, None),
    ],
)
def test_a_refused_key_or_a_broken_answer_is_a_plain_sentence_without_deepgrams_body(
    dictating: Dictating,
    caplog: pytest.LogCaptureFixture,
    mode: str,
    status: int,
    error: str,
    detail: str,
    logged: int | None,
) -> None:
    """A refused key (401/403) is a 422 that points at Settings; any other answer without a token
    is a 502 "try again"; neither carries Deepgram's body or the key; the server logs the status
    Deepgram answered (none when the answer was a 200 the SDK read but held no token)."""
    caplog.set_level(logging.DEBUG)
    _with_key(dictating)
    dictating.fake.mode = mode
    response = dictating.client.post("/api/dictation/token", json={})
    assert response.status_code == status
    body = response.json()
    assert body["error"] == error
    assert body["detail"].startswith(detail), body["detail"]
    for leaked in (SECRET_BODY, "err_msg", "not json"):
        assert leaked not in response.text
    if logged is None:
        assert "token grant answered" not in caplog.text
    else:
        assert f"token grant answered {logged}" in caplog.text  # the server's log lines are captured here
    _assert_key_nowhere(VALID_KEY, dictating, caplog, response.text)


def test_a_wrong_key_is_refused_and_never_echoed(
    dictating: Dictating, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "dg-wrong-key-9876543210"
    _with_key(dictating, wrong)
    response = dictating.client.post("/api/dictation/token", json={})
    assert response.status_code == 422
    assert response.json()["detail"].startswith("Deepgram refused the key")
    assert dictating.fake.requests[0][2]["authorization"] == f"Token {wrong}"
    _assert_key_nowhere(wrong, dictating, caplog, response.text)


def test_deepgram_down_is_a_503(data_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with socket.socket() as closed:  # a loopback port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    data_dir.mkdir(parents=True, exist_ok=True)
    services = build_services(
        DataPaths(data_dir), offline=False, secrets=FakeSecrets({"deepgram": VALID_KEY})
    )
    app = create_app(services, environ={"LH_DEEPGRAM_API_BASE": f"http://127.0.0.1:{port}"})
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        response = client.post("/api/dictation/token", json={})
        assert response.status_code == 503
        assert response.json() == {
            "error": "dictation_unreachable",
            "detail": "Deepgram could not be reached; check the internet connection and try again.",
        }
        assert f"connect-src 'self' ws://127.0.0.1:{port};" in response.headers["content-security-policy"]
    assert VALID_KEY not in caplog.text


def test_a_deepgram_that_does_not_answer_in_time_is_a_503(dictating: Dictating) -> None:
    _with_key(dictating)
    dictating.fake.mode = "slow"
    dictating.app.state.dictation.timeout_s = 0.3  # type: ignore[attr-defined]
    response = dictating.client.post("/api/dictation/token", json={})
    assert response.status_code == 503
    assert response.json()["error"] == "dictation_unreachable"
    assert "did not answer within" in response.json()["detail"]


def test_the_default_deepgram_is_the_socket_the_policy_allows(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    services = build_services(DataPaths(data_dir), offline=False, secrets=FakeSecrets())
    with serve(create_app(services, environ={})) as url, httpx.Client(base_url=url) as client:
        policy = client.get("/api/health").headers["content-security-policy"]
    assert "connect-src 'self' wss://api.deepgram.com;" in policy


def test_a_bad_deepgram_base_stops_the_app_from_being_built(data_dir: Path) -> None:
    services = build_services(DataPaths(data_dir), offline=False, secrets=FakeSecrets())
    with pytest.raises(ValueError, match="LH_DEEPGRAM_API_BASE"):
        create_app(services, environ={"LH_DEEPGRAM_API_BASE": "ftp://example.org"})
