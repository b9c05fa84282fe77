"""Subscription logins against loopback fakes of the providers (issue 19 item 2): device code,
polling (pending -> slow_down -> granted), refresh, expiry, revocation, two logins at once, and
credential files that are garbage or readable by others. Nothing reaches the internet."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.machine_room.subscription_clients import build_clients
from server.config import DataPaths
from server.core.events import EventBus
from server.core.machine_room.subscriptions import SLOW_DOWN_STEP_S
from server.services.machine_room.subscriptions import SubscriptionService
from server.services.stores import build_stores
from tests.fakes.subscription_providers import (
    ACCOUNT_ID,
    EMAIL,
    FakeState,
    create_fake_providers,
    provider_env,
)
from tests.livehttp import serve

PROVIDERS = {"chatgpt": "chatgpt", "github-copilot-subscription": "github", "xai-subscription": "xai"}


@pytest.fixture
def fake() -> Iterator[tuple[str, FakeState]]:
    state = FakeState()
    with serve(create_fake_providers(state)) as url:
        yield url, state


class Owner:
    """A web-mode owner over a data dir, with recorded waits and events."""

    def __init__(self, url: str, data: Path, lead_s: float = 300.0) -> None:
        self.sleeps: list[float] = []
        self.events: list[str] = []
        bus = EventBus()
        bus.subscribe(lambda event, _: self.events.append(event))
        self.paths = DataPaths(data)

        async def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)
            await asyncio.sleep(0.001)

        self.service = SubscriptionService(
            build_stores(self.paths).subscriptions,
            build_clients(provider_env(url)),
            bus,
            desktop=False,
            sleep=sleep,
            lead_s=lead_s,
        )

    async def settle(self, provider: str, timeout: float = 5.0) -> dict[str, Any]:
        for _ in range(int(timeout / 0.01)):
            view = self.service.status()["providers"][provider]
            if view["state"] != "pending":
                return view
            await asyncio.sleep(0.01)
        raise AssertionError(f"{provider} still pending")


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_device_flow_pending_slow_down_granted(
    provider: str, fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    state.polls[PROVIDERS[provider]] = ["pending", "slow_down", "pending", "granted"]
    owner = Owner(url, data_dir)
    started = (await owner.service.login(provider))["providers"][provider]
    assert started["state"] == "pending" and started["userCode"] and started["verificationUri"]
    assert started["expiresAt"] > 0 and started["error"] is None
    view = await owner.settle(provider)
    assert view["state"] == "connected", view
    assert owner.sleeps == pytest.approx([0.01, 0.01, 0.01 + SLOW_DOWN_STEP_S, 0.01 + SLOW_DOWN_STEP_S])
    assert view["account"] == {"github-copilot-subscription": "octo-learner"}.get(provider, EMAIL)
    assert view["expiresAt"] > 0 and view["userCode"] is None
    assert "subscriptions-changed" in owner.events
    path = owner.paths.subscriptions / f"{provider}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = json.loads(path.read_text())
    assert saved["refreshToken"] and saved["accessToken"]
    assert saved["accessToken"] not in json.dumps(owner.service.status())
    auth = await owner.service.current(provider)
    assert auth is not None and auth.access_token == saved["accessToken"]
    if provider == "chatgpt":
        assert auth.account_id == ACCOUNT_ID
    if provider == "github-copilot-subscription":
        assert saved["refreshToken"] == "gho_fake_github_token" and auth.base_url == f"{url}/copilot/v1"


async def test_two_logins_at_once_run_one_flow(fake: tuple[str, FakeState], data_dir: Path) -> None:
    url, state = fake
    state.polls["chatgpt"] = ["pending"] * 5 + ["granted"]
    owner = Owner(url, data_dir)
    first, second = await asyncio.gather(owner.service.login("chatgpt"), owner.service.login("chatgpt"))
    assert first == second and first["providers"]["chatgpt"]["state"] == "pending"
    assert state.code_requests["chatgpt"] == 1
    assert (await owner.settle("chatgpt"))["state"] == "connected"
    assert len(state.paths("/api/accounts/deviceauth/token")) == 6


@pytest.mark.parametrize(
    ("step", "words"),
    [("expired", "The code expired before it was entered; connect again"), ("denied", "declined")],
)
async def test_expired_or_declined_code_is_an_error(
    step: str, words: str, fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    state.polls["xai"] = ["pending", step]
    owner = Owner(url, data_dir)
    await owner.service.login("xai-subscription")
    view = await owner.settle("xai-subscription")
    assert view["state"] == "error" and words in view["error"]
    assert not (owner.paths.subscriptions / "xai-subscription.json").exists()


async def test_cancel_stops_polling_and_logout_forgets(fake: tuple[str, FakeState], data_dir: Path) -> None:
    url, state = fake
    state.polls["github"] = ["pending"]
    owner = Owner(url, data_dir)
    await owner.service.login("github-copilot-subscription")
    await asyncio.sleep(0.05)
    view = (await owner.service.cancel("github-copilot-subscription"))["providers"][
        "github-copilot-subscription"
    ]
    assert view["state"] == "disconnected"
    # The loop is gone at once: no wait after the cancel. A poll already on the wire when the
    # cancel came may still reach the fake a moment later (CI saw it), but nothing after it.
    waits, sent = len(owner.sleeps), len(state.paths("/login/oauth/access_token"))
    await asyncio.sleep(0.1)
    settled = len(state.paths("/login/oauth/access_token"))
    assert settled <= sent + 1
    await asyncio.sleep(0.1)
    assert len(owner.sleeps) == waits and len(state.paths("/login/oauth/access_token")) == settled

    state.polls["github"] = ["granted"]
    await owner.service.login("github-copilot-subscription")
    assert (await owner.settle("github-copilot-subscription"))["state"] == "connected"
    gone = await owner.service.logout("github-copilot-subscription")
    assert gone["providers"]["github-copilot-subscription"]["state"] == "disconnected"
    assert not (owner.paths.subscriptions / "github-copilot-subscription.json").exists()
    assert await owner.service.current("github-copilot-subscription") is None


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_refresh_ahead_is_serialized_per_provider(
    provider: str, fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    state.lifetime_s = 60  # within the 300 s lead: every use renews
    owner = Owner(url, data_dir)
    await owner.service.login(provider)
    await owner.settle(provider)
    before = json.loads((owner.paths.subscriptions / f"{provider}.json").read_text())["accessToken"]
    state.lifetime_s = 3600
    refreshes = {
        "chatgpt": "/oauth/token",
        "github-copilot-subscription": "/copilot_internal/v2/token",
        "xai-subscription": "/oauth2/token",
    }[provider]
    count = len(state.paths(refreshes))
    auths = await asyncio.gather(*(owner.service.current(provider) for _ in range(5)))
    assert len(state.paths(refreshes)) == count + 1  # one renewal; the others waited for it
    assert {a.access_token for a in auths if a} != {before} and len({a.access_token for a in auths if a}) == 1
    saved = json.loads((owner.paths.subscriptions / f"{provider}.json").read_text())
    assert saved["accessToken"] == auths[0].access_token if auths[0] else False
    assert saved["refreshToken"]


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_a_revoked_login_is_an_error_not_a_crash(
    provider: str, fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    state.lifetime_s = 60
    owner = Owner(url, data_dir)
    await owner.service.login(provider)
    await owner.settle(provider)
    state.refresh[PROVIDERS[provider]] = "revoked"
    assert await owner.service.current(provider) is None
    view = owner.service.status()["providers"][provider]
    assert view["state"] == "error" and view["error"].endswith("revoked; connect again")
    assert owner.service.error(provider) == view["error"]
    assert not (owner.paths.subscriptions / f"{provider}.json").exists()


@pytest.mark.parametrize(
    ("content", "mode", "words"),
    [
        (b"{not json", 0o600, "is not valid JSON"),
        (b'{"provider": "chatgpt"}', 0o600, "no access token"),
        (b"[]", 0o600, "not a JSON object"),
        (None, 0o644, "could be read by other users"),
    ],
)
async def test_a_bad_credential_file_is_set_aside_with_plain_words(
    content: bytes | None, mode: int, words: str, fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, _ = fake
    folder = DataPaths(data_dir).subscriptions
    folder.mkdir(parents=True)
    path = folder / "chatgpt.json"
    good = {"version": 1, "provider": "chatgpt", "accessToken": "a", "refreshToken": "r", "expiresAt": None}
    path.write_bytes(content if content is not None else json.dumps(good).encode())
    os.chmod(path, mode)
    owner = Owner(url, data_dir)
    view = owner.service.status()["providers"]["chatgpt"]
    assert view["state"] == "error" and words in view["error"] and "Connect again" in view["error"]
    assert not path.exists()
    aside = [p for p in folder.iterdir() if p.name.startswith("chatgpt.json.set-aside-")]
    assert len(aside) == 1  # kept for the learner, never read again
    assert await owner.service.current("chatgpt") is None
    assert owner.service.status()["providers"]["xai-subscription"]["state"] == "disconnected"


async def test_desktop_owner_holds_only_what_main_pushed(fake: tuple[str, FakeState], data_dir: Path) -> None:
    from server.core.machine_room.subscriptions import ScopedAuth

    url, _ = fake
    events: list[str] = []
    bus = EventBus()
    bus.subscribe(lambda event, _: events.append(event))
    service = SubscriptionService(
        build_stores(DataPaths(data_dir)).subscriptions, build_clients(provider_env(url)), bus, desktop=True
    )
    assert service.store is None
    assert service.status()["mode"] == "desktop"
    assert await service.current("chatgpt") is None and not service.connected("chatgpt")
    service.push("chatgpt", ScopedAuth("pushed", 10**10, "acct"))
    assert (await service.current("chatgpt")) == ScopedAuth("pushed", 10**10, "acct")
    assert service.status()["providers"]["chatgpt"]["state"] == "connected"
    service.withdraw("chatgpt")
    assert await service.current("chatgpt") is None
    assert events == ["subscriptions-changed", "subscriptions-changed"]
    assert not DataPaths(data_dir).subscriptions.exists()


async def test_a_refresh_that_fails_for_now_keeps_the_connection(
    fake: tuple[str, FakeState], data_dir: Path
) -> None:
    url, state = fake
    state.lifetime_s = 60
    owner = Owner(url, data_dir)
    await owner.service.login("chatgpt")
    await owner.settle("chatgpt")
    saved = json.loads((owner.paths.subscriptions / "chatgpt.json").read_text())
    state.refresh["chatgpt"] = "down"
    auth = await owner.service.current("chatgpt")
    assert auth is not None and auth.access_token == saved["accessToken"]  # still valid for a minute
    assert owner.service.status()["providers"]["chatgpt"]["state"] == "connected"
    assert owner.service.error("chatgpt") is None
    state.refresh["chatgpt"] = "ok"
    renewed = await owner.service.current("chatgpt")
    assert renewed is not None and renewed.access_token != saved["accessToken"]
