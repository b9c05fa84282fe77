"""Issue 10, defects 4, 5 and 8: hostile or malformed requests get a clear 4xx, never a 500.

Each case here was measured from outside as an unhandled 500 (or as accepted when it must not
be); the app runs in-process over ASGI with a scripted model.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.flows.inprocess import LOOPBACK, scripted_app

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = scripted_app(data_dir)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=LOOPBACK) as c:
        yield c


def assert_refusal(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) >= {"error", "detail"} and body["detail"], body
    for word in words:
        assert word in body["detail"], (word, body)
    return body


def deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


BAD_BODIES = [
    pytest.param("POST", "/api/graph/import", b"{}", id="import-empty-object"),
    pytest.param("POST", "/api/graph/import", b'{"path": 1}', id="import-path-number"),
    pytest.param("POST", "/api/graph/import", b'{"path": ""}', id="import-path-empty"),
    pytest.param("POST", "/api/graph/import", b"{", id="import-not-json"),
    pytest.param("POST", "/api/graph/import", b'{"path": NaN}', id="import-nan"),
    pytest.param("PUT", "/api/graph/positions", deep(1000), id="positions-deep-1000"),
    pytest.param("PUT", "/api/graph/positions", b"[" * 5000 + b"]" * 5000, id="positions-deep-list"),
    pytest.param("PUT", "/api/graph/settings", deep(1000), id="settings-deep-1000"),
    pytest.param(
        "PUT", "/api/graph/positions", b'{"n_a": {"x": 1' + b"0" * 400 + b', "y": 1}}', id="coord-10^400-int"
    ),
    pytest.param("PUT", "/api/graph/positions", b'{"n_a": {"x": 1e400, "y": 1}}', id="coord-1e400"),
    pytest.param("PUT", "/api/graph/positions", b'{"n_a": {"x": NaN, "y": 1}}', id="coord-nan"),
    pytest.param(
        "PUT",
        "/api/graph/positions",
        b'{"n_a": {"x": 1' + b"0" * 5000 + b', "y": 1}}',
        id="coord-5000-digits",
    ),
    pytest.param("PUT", "/api/graph/settings", b'{"labelZoom": 18446744073709551616}', id="labelZoom-2^64"),
    pytest.param("PUT", "/api/graph/settings", b'{"labelZoom": 9007199254740993}', id="labelZoom-2^53+1"),
    pytest.param("PUT", "/api/graph/settings", b'{"labelZoom": NaN}', id="labelZoom-NaN"),
    pytest.param("PUT", "/api/graph/settings", b'{"labelZoom": Infinity}', id="labelZoom-Infinity"),
    pytest.param("PUT", "/api/graph/settings", b'{"labelZoom": -1}', id="labelZoom-negative"),
    pytest.param("PUT", "/api/graph/settings", b'{"labels": null}', id="labels-null"),
    pytest.param("PUT", "/api/graph/settings", b'{"nope": 1}', id="settings-unknown-key"),
    pytest.param("PUT", "/api/settings", deep(1000), id="app-settings-deep"),
    pytest.param("POST", "/api/graph/delete", b'{"ids": [1e400]}', id="delete-1e400"),
    pytest.param("POST", "/api/activity/abort", deep(3000), id="abort-deep"),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_BODIES)
async def test_malformed_bodies_are_400_with_a_reason(
    client: httpx.AsyncClient, method: str, path: str, body: bytes
) -> None:
    response = await client.request(method, path, content=body, headers=JSON)
    assert_refusal(response, 400)


async def test_nan_is_no_longer_stored_as_null(client: httpx.AsyncClient, data_dir: Path) -> None:
    await client.put("/api/graph/settings", content=b'{"labelZoom": NaN}', headers=JSON)
    settings = (await client.get("/api/graph/settings")).json()["settings"]
    assert "labelZoom" not in settings  # the measured bug stored NaN as null
    ok = await client.put("/api/graph/settings", json={"labelZoom": 2.5, "labels": False})
    assert ok.status_code == 200 and ok.json()["settings"]["labelZoom"] == 2.5


async def test_a_chat_part_holding_an_integer_beyond_2_64_is_refused(client: httpx.AsyncClient) -> None:
    chat = (await client.post("/api/chats", json={})).json()["id"]
    body = {
        "id": chat,
        "trigger": "submit-message",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi", "n": 2**64}]}],
    }
    response = await client.post("/api/chat", content=json.dumps(body).encode(), headers=JSON)
    assert_refusal(response, 400)
    assert (await client.get(f"/api/chats/{chat}")).json()["messages"] == []


async def test_a_chat_body_nested_too_deeply_is_400(client: httpx.AsyncClient) -> None:
    chat = (await client.post("/api/chats", json={})).json()["id"]
    part = b'{"type": "text", "text": "hi", "x": ' + deep(5000) + b"}"
    message = b'{"id": "u1", "role": "user", "parts": [%s]}' % part
    body = b'{"id": "%s", "trigger": "submit-message", "messages": [%s]}' % (chat.encode(), message)
    assert_refusal(await client.post("/api/chat", content=body, headers=JSON), 400)


async def test_a_nul_byte_in_a_static_path_is_a_4xx(client: httpx.AsyncClient) -> None:
    response = await client.get("/index.html%00.js")
    assert 400 <= response.status_code < 500, response.text


@pytest.mark.parametrize(
    "origin",
    ["null", "http://127.0.0.1:abc", "http://127.0.0.1:99999", "http://[::1", "http://127.0.0.1:8765:1"],
)
async def test_null_and_malformed_origins_are_refused_with_the_reason(
    client: httpx.AsyncClient, origin: str
) -> None:
    for method, path in (("GET", "/api/health"), ("POST", "/api/graph/import")):
        response = await client.request(method, path, headers={"origin": origin}, json={"path": "/tmp"})
        body = assert_refusal(response, 403)
        assert body["error"] == "forbidden" and "Origin" in body["detail"]


@pytest.mark.parametrize("host", ["127.0.0.1:abc", "127.0.0.1:99999", "[::1", ""])
async def test_malformed_hosts_are_refused(client: httpx.AsyncClient, host: str) -> None:
    response = await client.get("/api/health", headers={"host": host})
    assert_refusal(response, 403)
