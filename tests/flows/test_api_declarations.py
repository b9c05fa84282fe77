"""Issue 26 item 7: the API says what it answers. Every operation declares the refusals it can
give with the `{error, detail}` body (403 everywhere, 400 where it takes input, 413 where it
takes a body, never FastAPI's unused 422 validation answer); a method a path does not offer is
405 with `Allow`; `graphTools` is a strict boolean and a position's coordinates strict numbers.
The full conformance run is `test_fuzz_api.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.flows.inprocess import LOOPBACK, scripted_app

pytestmark = pytest.mark.anyio
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=scripted_app(data_dir), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=LOOPBACK) as c:
        yield c


async def test_every_operation_declares_its_refusals(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    assert "HTTPValidationError" not in str(spec)
    operations = [(m, p, op) for p, item in spec["paths"].items() for m, op in item.items() if m in METHODS]
    assert len(operations) >= 25
    for method, path, op in operations:
        label = f"{method.upper()} {path}"
        responses: dict[str, Any] = op["responses"]
        assert "422" not in responses or "dictation" in path, label
        assert "403" in responses, label
        params = op.get("parameters", [])
        checked = [p for p in params if p["in"] == "query" or "enum" in p["schema"]]  # a plain str can't fail
        if checked or op.get("requestBody"):
            assert "400" in responses, label
        if op.get("requestBody"):
            assert "413" in responses, label
        if any(p["in"] == "path" and p["name"].endswith("_id") for p in op.get("parameters", [])):
            assert "404" in responses, label
        for status, answer in responses.items():
            if status[0] in "45":
                schema = answer["content"]["application/json"]["schema"]
                assert schema["required"] == ["error", "detail"], (label, status)


@pytest.mark.parametrize(
    "method, path, allow",
    [
        ("POST", "/api/chats/c_1", "GET, PATCH, DELETE"),
        ("GET", "/api/chat", "POST"),
        ("DELETE", "/api/graph/positions", "PUT"),
        ("PATCH", "/api/health", "GET"),
        ("OPTIONS", "/api/chats", "GET, POST"),
    ],
)
async def test_a_method_the_path_does_not_offer_is_405_with_allow(
    client: httpx.AsyncClient, method: str, path: str, allow: str
) -> None:
    response = await client.request(method, path)
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == allow
    body = response.json()
    assert body["error"] == "method_not_allowed" and allow in body["detail"]


async def test_an_unknown_api_path_is_404_whatever_the_method(client: httpx.AsyncClient) -> None:
    for method in ("GET", "POST", "DELETE"):
        response = await client.request(method, "/api/no-such-thing")
        assert response.status_code == 404 and response.json()["error"] == "not_found"
        assert "allow" not in response.headers


@pytest.mark.parametrize("value", [0, 1, "true", "false", None, [], {}])
async def test_graph_tools_is_a_strict_boolean(client: httpx.AsyncClient, value: object) -> None:
    before = (await client.get("/api/library/settings")).json()
    response = await client.put("/api/library/settings", json={"graphTools": value})
    if value is None:  # null means "leave it": the key is optional
        assert response.status_code == 200
    else:
        assert response.status_code == 400 and "graphTools" in response.json()["detail"], response.text
    assert (await client.get("/api/library/settings")).json() == before
    assert (await client.put("/api/library/settings", json={"graphTools": True})).json()["graphTools"] is True


@pytest.mark.parametrize(
    "body",
    [
        {"k": [False, None]},
        {"k": [True, 1]},
        {"k": ["1", 2]},
        {"k": {"x": False, "y": 1}},
        {"k": {"x": 1, "y": "2"}},
        {"ok": [1, 2], "k": [None, True]},
    ],
)
async def test_a_position_is_made_of_numbers(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.put("/api/graph/positions", json=body)
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert 'position "k"' in detail and '{"x": number, "y": number}' in detail


async def test_numbers_and_nulls_are_positions(client: httpx.AsyncClient) -> None:
    response = await client.put("/api/graph/positions", json={"a": [1, 2.5], "b": {"x": None, "y": -3}})
    assert response.status_code == 200 and response.json() == {"saved": 0}  # unknown ids are skipped
