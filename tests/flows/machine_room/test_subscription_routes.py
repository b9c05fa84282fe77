"""Subscription logins over HTTP (issue 19 item 2): the web-mode routes, the desktop-only scoped-auth
push (secret required, refresh tokens never accepted, nothing written to the data dir), and lesson
turns whose model call carries the login's scoped auth, through `python -m server` against loopback
fakes of the providers (nothing reaches the internet)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from tests.fakes import FakeSecrets
from tests.fakes.subscription_providers import ACCOUNT_ID, FakeState, create_fake_providers, provider_env
from tests.livehttp import serve
from tests.procs import learner_turn, start_server, write_settings

TOKEN = "t" * 64
SECRET = "5" * 64
DESKTOP = {"x-lh-token": TOKEN}
SHELL = {**DESKTOP, "x-lh-shell-secret": SECRET}
NOT_CONNECTED = "Your ChatGPT subscription is not connected. Connect it in Settings."


@pytest.fixture
def fake() -> Iterator[tuple[str, FakeState]]:
    state = FakeState()
    with serve(create_fake_providers(state)) as url:
        yield url, state


def wait_for(client: httpx.Client, provider: str, state: str, headers: dict[str, str] | None = None) -> Any:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        view = client.get("/api/subscriptions", headers=headers or {}).json()["providers"][provider]
        if view["state"] == state:
            return view
        time.sleep(0.02)
    raise AssertionError(f"{provider} never became {state}: {view}")


def test_web_routes(fake: tuple[str, FakeState], data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, state = fake
    for name, value in provider_env(url).items():
        monkeypatch.setenv(name, value)
    state.polls["chatgpt"] = ["pending", "pending", "granted"]
    services = build_services(DataPaths(data_dir), offline=False, secrets=FakeSecrets())
    with serve(create_app(services)) as base, httpx.Client(base_url=base, timeout=10) as client:
        status = client.get("/api/subscriptions").json()
        assert status["mode"] == "web"
        assert {v["state"] for v in status["providers"].values()} == {"disconnected"}
        started = client.post("/api/subscriptions/chatgpt/login", json={})
        assert started.status_code == 200
        view = started.json()["providers"]["chatgpt"]
        assert view["state"] == "pending" and view["userCode"] == "CHAT-1234"
        assert view["verificationUri"] == f"{url}/codex/device"
        again = client.post("/api/subscriptions/chatgpt/login", json={}).json()["providers"]["chatgpt"]
        assert again["userCode"] == "CHAT-1234" and state.code_requests["chatgpt"] == 1
        connected = wait_for(client, "chatgpt", "connected")
        assert connected["account"] == "learner@example.test"
        saved = json.loads((data_dir / "subscriptions" / "chatgpt.json").read_text())
        assert saved["accessToken"] not in json.dumps(client.get("/api/subscriptions").json())

        bad = client.post("/api/subscriptions/chatgpt/login", json={"provider": "x"})
        assert bad.status_code == 400 and bad.json()["error"] == "bad_request"
        unknown = client.post("/api/subscriptions/openai/login", json={})
        assert unknown.status_code == 400 and "chatgpt" in unknown.json()["detail"]
        assert client.post("/api/subscriptions/xai-subscription/cancel", json={}).status_code == 200

        gone = client.delete("/api/subscriptions/chatgpt").json()["providers"]["chatgpt"]
        assert gone["state"] == "disconnected"
        assert not (data_dir / "subscriptions" / "chatgpt.json").exists()
        push = client.put("/api/shell/subscription-auth/chatgpt", json={"accessToken": "x", "expiresAt": 1})
        assert push.status_code == 404  # web mode has no shell route


def test_desktop_routes_take_scoped_auth_from_the_shell_only(
    fake: tuple[str, FakeState], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = fake
    for name, value in {**provider_env(url), "LH_API_TOKEN": TOKEN, "LH_SHELL_SECRET": SECRET}.items():
        monkeypatch.setenv(name, value)
    services = build_services(DataPaths(data_dir), offline=False, secrets=FakeSecrets())
    good = {
        "accessToken": "pushed-access",
        "expiresAt": time.time() + 3600,
        "accountId": "a",
        "baseUrl": None,
    }
    with serve(create_app(services, token=TOKEN)) as base, httpx.Client(base_url=base, timeout=10) as client:
        for method, path in [
            ("GET", "/api/subscriptions"),
            ("POST", "/api/subscriptions/chatgpt/login"),
            ("POST", "/api/subscriptions/chatgpt/cancel"),
            ("DELETE", "/api/subscriptions/chatgpt"),
        ]:
            refused = client.request(method, path, headers=DESKTOP, json={} if method == "POST" else None)
            assert refused.status_code == 409, path
            assert refused.json()["detail"] == "the desktop app keeps subscription logins; use Settings"

        path = "/api/shell/subscription-auth/chatgpt"
        assert client.put(path, json=good).status_code == 403  # no app token either
        assert client.put(path, json=good, headers=DESKTOP).status_code == 403
        wrong = client.put(path, json=good, headers={**DESKTOP, "x-lh-shell-secret": "6" * 64})
        assert wrong.status_code == 403 and "desktop shell" in wrong.json()["detail"]
        assert client.put(path, json={"junk": 1}, headers=DESKTOP).status_code == 403  # secret first
        with_refresh = client.put(path, json={**good, "refreshToken": "r"}, headers=SHELL)
        assert with_refresh.status_code == 400 and "refreshToken" in with_refresh.json()["detail"]
        for bad in ({**good, "expiresAt": -1}, {**good, "accessToken": ""}, {**good, "baseUrl": "ftp://x"}):
            assert client.put(path, json=bad, headers=SHELL).status_code == 400
        assert client.put("/api/shell/subscription-auth/openai", json=good, headers=SHELL).status_code == 400
        assert client.put(path, json=good, headers=SHELL).status_code == 204
        assert services.subscriptions.connected("chatgpt")
        assert client.delete(path, headers=DESKTOP).status_code == 403
        assert client.delete(path, headers=SHELL).status_code == 204
        assert not services.subscriptions.connected("chatgpt")
    assert not (data_dir / "subscriptions").exists()
    assert "pushed-access" not in "".join(
        p.read_text(errors="replace") for p in data_dir.rglob("*") if p.is_file()
    )


def _turn(client: httpx.Client, headers: dict[str, str] | None = None) -> tuple[str, httpx.Response]:
    created = client.post("/api/chats", json={}, headers=headers or {})
    assert created.status_code == 201, created.text
    chat_id = created.json()["id"]
    return chat_id, client.post(
        "/api/chat", json=learner_turn(chat_id, "Teach me limits"), headers=headers or {}
    )


def test_a_lesson_turn_on_the_chatgpt_subscription_carries_its_scoped_auth(
    fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    write_settings(data_dir, {"provider": "chatgpt", "model": "gpt-5-codex"})
    server = start_server(data_dir, env=provider_env(url))
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            refused = client.post("/api/chats", json={})
            assert refused.status_code == 503 and NOT_CONNECTED in refused.json()["detail"]
            assert client.post("/api/subscriptions/chatgpt/login", json={}).status_code == 200
            wait_for(client, "chatgpt", "connected")
            chat_id, turn = _turn(client)
            assert turn.status_code == 200, turn.text
            record = client.get(f"/api/chats/{chat_id}").json()
            said = [p.get("text") for m in record["messages"] for p in m["parts"] if p.get("type") == "text"]
            assert "Hello from your subscription." in said
    finally:
        assert server.stop() == 0
    access = json.loads((data_dir / "subscriptions" / "chatgpt.json").read_text())["accessToken"]
    calls = [(p, h, b) for p, h, b in state.seen if p == "/codex/responses"]
    assert calls, "the model call reached the ChatGPT endpoint"
    for _, headers, body in calls:
        assert headers["authorization"] == f"Bearer {access}"
        assert headers["chatgpt-account-id"] == ACCOUNT_ID
        assert body["store"] is False
    assert not [p for p, _, _ in state.seen if p.endswith("/chat/completions")]  # no other route


def test_desktop_turns_use_what_main_pushed_and_never_fall_back(  # Copilot, then xAI
    fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    write_settings(data_dir, {"provider": "github-copilot-subscription", "model": "gpt-4o"})
    env = {
        **provider_env(url),
        "LH_API_TOKEN": TOKEN,
        "LH_SHELL_SECRET": SECRET,
        "LH_OPENAI_API_KEY": "sk-fallback-key",
    }
    server = start_server(data_dir, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            refused = client.post("/api/chats", json={}, headers=DESKTOP)
            assert refused.status_code == 503
            assert "Your GitHub Copilot subscription is not connected" in refused.json()["detail"]
            push = {
                "accessToken": "pushed-copilot",
                "expiresAt": time.time() + 3600,
                "baseUrl": f"{url}/copilot/v1",
            }
            path = "/api/shell/subscription-auth/github-copilot-subscription"
            assert client.put(path, json=push, headers=SHELL).status_code == 204
            chat_id, turn = _turn(client, DESKTOP)
            assert turn.status_code == 200, turn.text

            expired = {**push, "expiresAt": time.time() - 1}
            assert client.put(path, json=expired, headers=SHELL).status_code == 204
            again = learner_turn(chat_id, "And again", message_id="u2")
            record = client.get(f"/api/chats/{chat_id}", headers=DESKTOP).json()
            again["messages"] = [*record["messages"], again["messages"][0]]
            late = client.post("/api/chat", json=again, headers=DESKTOP)
            assert late.status_code == 503
            assert late.json()["detail"].endswith(
                "Your GitHub Copilot subscription login expired; the app is renewing it, try again"
            )

            xai = {
                "accessToken": "pushed-xai",
                "expiresAt": time.time() + 3600,
                "accountId": None,
                "baseUrl": None,
            }
            assert (
                client.put(
                    "/api/shell/subscription-auth/xai-subscription", json=xai, headers=SHELL
                ).status_code
                == 204
            )
            slots = {"models": {"strong": {"provider": "xai-subscription", "model": "grok-4"}}}
            assert client.put("/api/settings", json=slots, headers=DESKTOP).status_code == 200
            _, turn = _turn(client, DESKTOP)
            assert turn.status_code == 200, turn.text
    finally:
        assert server.stop() == 0
    calls = [(h, b) for p, h, b in state.seen if p == "/copilot/v1/chat/completions"]
    assert calls
    for headers, _ in calls:
        assert headers["authorization"] == "Bearer pushed-copilot"
        assert headers["copilot-integration-id"] == "vscode-chat" and headers["editor-version"].startswith(
            "vscode/"
        )
    xai_calls = [h for p, h, _ in state.seen if p == "/xai/v1/chat/completions"]
    assert xai_calls and all(h["authorization"] == "Bearer pushed-xai" for h in xai_calls)
    assert all("sk-fallback-key" not in json.dumps(h) for _, h, _ in state.seen)
    assert not (data_dir / "subscriptions").exists()
