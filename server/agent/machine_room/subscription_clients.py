"""HTTP adapters of the three subscription logins (issue 19 item 2; seed §8.1).

Each speaks one provider's endpoints and answers in the core's terms (`DeviceCode`,
`PollOutcome`, `Grant`) on the shared base of `subscription_http`; the state machine is
`server.core.machine_room.subscriptions`. No provider body ever
reaches a sentence: failures are described in plain words, tokens are never logged.

- ChatGPT, as the Codex CLI's device code login does it (`codex login --device-auth`,
  openai/codex `codex-rs/login/src/device_code_auth.rs`): `POST {auth}/api/accounts/deviceauth/usercode`
  `{client_id}` -> `{device_auth_id, user_code, interval}`; the learner enters the code at
  `{auth}/codex/device`; `POST {auth}/api/accounts/deviceauth/token` `{device_auth_id, user_code}`
  answers 403/404 while pending, then `{authorization_code, code_verifier, code_challenge}` (the
  PKCE pair the server generated); the code is exchanged at `POST {auth}/oauth/token`
  (form: authorization_code, `redirect_uri={auth}/deviceauth/callback`, the verifier) for
  `{id_token, access_token, refresh_token}`; refresh is `POST {auth}/oauth/token` JSON
  `{client_id, grant_type: refresh_token, refresh_token, scope}`.
- GitHub Copilot: GitHub's device flow (`POST {github}/login/device/code`, poll
  `POST {github}/login/oauth/access_token`), the Copilot editors' client id, scope `read:user`;
  then `GET {api}/copilot_internal/v2/token` with `Authorization: token <github token>` ->
  `{token, expires_at, endpoints: {api}}`. The GitHub token is the durable credential ("refresh
  token"); renewing exchanges it again.
- xAI: a standard RFC 8628 grant at `{auth}/oauth2/device/code` and `{auth}/oauth2/token` (xAI's
  subscription OAuth is not documented; decision 0019 says so).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import httpx

from server.agent.machine_room.subscription_http import (
    ClientBase,
    ProviderUnavailable,
    RefreshFailed,
    RefreshRevoked,
    SubscriptionClient,
    answer_json,
    bases,
    poll_interval,
    token_grant,
)
from server.core.machine_room.subscription_credentials import chatgpt_identity
from server.core.machine_room.subscriptions import (
    DEFAULT_CODE_LIFETIME_S,
    DEFAULT_INTERVAL_S,
    DeviceCode,
    Grant,
    PollOutcome,
    classify_device_error,
)

log = logging.getLogger("lh.subscriptions")

CHATGPT_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
"""The Codex CLI's OAuth client id (openai/codex `codex-rs/login`)."""
COPILOT_CLIENT_ID = "Iv1.b507a08c87ecfe98"
"""The GitHub OAuth app of the Copilot editor plugins."""
XAI_CLIENT_ID_ENV = "LH_XAI_CLIENT_ID"
XAI_DEFAULT_CLIENT_ID = "learning-harness"

COPILOT_HEADERS = {
    "Editor-Version": "vscode/1.99.3",
    "Editor-Plugin-Version": "copilot-chat/0.26.7",
    "Copilot-Integration-Id": "vscode-chat",
    "User-Agent": "GitHubCopilotChat/0.26.7",
}
"""What the Copilot editors send with the token exchange and with chat requests."""


class ChatGPTClient(ClientBase):
    """ChatGPT (Codex CLI device code login)."""

    provider = "chatgpt"

    def __init__(self, auth_base: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.auth = auth_base.rstrip("/")

    async def start(self) -> DeviceCode:
        try:
            response = await self._send(
                "POST", f"{self.auth}/api/accounts/deviceauth/usercode", json={"client_id": CHATGPT_CLIENT_ID}
            )
        except ConnectionError as exc:
            raise ProviderUnavailable(f"Could not reach OpenAI ({exc}); try again") from None
        if response.status_code == 404:
            raise ProviderUnavailable(
                "OpenAI's device code login is not available right now; try again later"
            )
        data = answer_json(response)
        handle, user_code = data.get("device_auth_id"), data.get("user_code") or data.get("usercode")
        if response.status_code != 200 or not isinstance(handle, str) or not isinstance(user_code, str):
            raise ProviderUnavailable(
                f"OpenAI did not start the sign-in (HTTP {response.status_code}); try again"
            )
        return DeviceCode(
            handle=handle,
            user_code=user_code,
            verification_uri=f"{self.auth}/codex/device",
            expires_at=self.clock() + DEFAULT_CODE_LIFETIME_S,
            interval_s=poll_interval(data.get("interval", DEFAULT_INTERVAL_S)),
        )

    async def poll(self, code: DeviceCode) -> PollOutcome:
        try:
            response = await self._send(
                "POST",
                f"{self.auth}/api/accounts/deviceauth/token",
                json={"device_auth_id": code.handle, "user_code": code.user_code},
            )
        except ConnectionError:
            return PollOutcome("pending")  # a blip: the next poll tries again until the code expires
        if response.status_code in (403, 404):
            return PollOutcome("pending")
        if response.status_code == 429:
            return PollOutcome("slow_down")
        data = answer_json(response)
        if response.status_code != 200:
            kind = classify_device_error(data.get("error"))
            return PollOutcome(
                kind, detail=f"OpenAI refused the sign-in (HTTP {response.status_code}); connect again"
            )
        auth_code, verifier = data.get("authorization_code"), data.get("code_verifier")
        if not isinstance(auth_code, str) or not isinstance(verifier, str):
            return PollOutcome("failed", detail="OpenAI's answer could not be read; connect again")
        try:
            exchanged = await self._send(
                "POST",
                f"{self.auth}/oauth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": auth_code,
                    "redirect_uri": f"{self.auth}/deviceauth/callback",
                    "client_id": CHATGPT_CLIENT_ID,
                    "code_verifier": verifier,
                },
            )
        except ConnectionError as exc:
            return PollOutcome("failed", detail=f"Could not finish the sign-in ({exc}); connect again")
        tokens = answer_json(exchanged)
        if exchanged.status_code != 200 or not isinstance(tokens.get("access_token"), str):
            return PollOutcome(
                "failed", detail=f"OpenAI did not issue a login (HTTP {exchanged.status_code}); connect again"
            )
        return PollOutcome("granted", grant=self._grant(tokens, None))

    def _grant(self, tokens: dict[str, Any], previous: Grant | None) -> Grant:
        id_token = tokens.get("id_token") if isinstance(tokens.get("id_token"), str) else None
        account_id, email = chatgpt_identity(id_token, str(tokens["access_token"]))
        return token_grant(tokens, self.clock(), previous, account_id, email)

    async def refresh(self, grant: Grant) -> Grant:
        return await self._renew(
            grant,
            "ChatGPT",
            f"{self.auth}/oauth/token",
            {"client_id": CHATGPT_CLIENT_ID, "grant_type": "refresh_token", "scope": "openid profile email"},
            lambda tokens: self._grant(tokens, grant),
            as_json=True,
        )


class RFC8628Client(ClientBase):
    """A standard device authorization grant (form-encoded, JSON answers)."""

    def __init__(
        self, *, device_url: str, token_url: str, client_id: str, scope: str, name: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.device_url, self.token_url = device_url, token_url
        self.client_id, self.scope, self.name = client_id, scope, name

    async def start(self) -> DeviceCode:
        try:
            response = await self._send(
                "POST",
                self.device_url,
                data={"client_id": self.client_id, "scope": self.scope},
                headers={"Accept": "application/json"},
            )
        except ConnectionError as exc:
            raise ProviderUnavailable(f"Could not reach {self.name} ({exc}); try again") from None
        data = answer_json(response)
        fields = (data.get("device_code"), data.get("user_code"), data.get("verification_uri"))
        if response.status_code != 200 or not all(isinstance(f, str) for f in fields):
            raise ProviderUnavailable(
                f"{self.name} did not start the sign-in (HTTP {response.status_code}); try again"
            )
        lifetime = data.get("expires_in")
        return DeviceCode(
            handle=str(fields[0]),
            user_code=str(fields[1]),
            verification_uri=str(fields[2]),
            expires_at=self.clock()
            + (
                float(lifetime)
                if isinstance(lifetime, int | float) and lifetime > 0
                else DEFAULT_CODE_LIFETIME_S
            ),
            interval_s=poll_interval(data.get("interval", DEFAULT_INTERVAL_S)),
        )

    async def poll(self, code: DeviceCode) -> PollOutcome:
        try:
            response = await self._send(
                "POST",
                self.token_url,
                data={
                    "client_id": self.client_id,
                    "device_code": code.handle,
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                },
                headers={"Accept": "application/json"},
            )
        except ConnectionError:
            return PollOutcome("pending")
        data = answer_json(response)
        if isinstance(data.get("access_token"), str) and response.status_code == 200:
            return await self.granted(data)
        kind = classify_device_error(data.get("error"))
        if response.status_code == 429:
            kind = "slow_down"
        return PollOutcome(
            kind, detail=f"{self.name} refused the sign-in (HTTP {response.status_code}); connect again"
        )

    async def granted(self, tokens: dict[str, Any]) -> PollOutcome:
        _, email = chatgpt_identity(
            tokens.get("id_token") if isinstance(tokens.get("id_token"), str) else None, None
        )
        return PollOutcome("granted", grant=token_grant(tokens, self.clock(), None, account=email))

    async def refresh(self, grant: Grant) -> Grant:
        return await self._renew(
            grant,
            self.name,
            self.token_url,
            {"client_id": self.client_id, "grant_type": "refresh_token"},
            lambda tokens: token_grant(tokens, self.clock(), grant),
            headers={"Accept": "application/json"},
        )


class XaiClient(RFC8628Client):
    provider = "xai-subscription"

    def __init__(self, auth_base: str, client_id: str = XAI_DEFAULT_CLIENT_ID, **kwargs: Any) -> None:
        base = auth_base.rstrip("/")
        super().__init__(
            device_url=f"{base}/oauth2/device/code",
            token_url=f"{base}/oauth2/token",
            client_id=client_id,
            scope="openid offline_access",
            name="xAI",
            **kwargs,
        )


class CopilotClient(RFC8628Client):
    """GitHub's device flow, then the Copilot token exchange (the GitHub token renews it)."""

    provider = "github-copilot-subscription"

    def __init__(self, github_base: str, api_base: str, **kwargs: Any) -> None:
        base = github_base.rstrip("/")
        super().__init__(
            device_url=f"{base}/login/device/code",
            token_url=f"{base}/login/oauth/access_token",
            client_id=COPILOT_CLIENT_ID,
            scope="read:user",
            name="GitHub",
            **kwargs,
        )
        self.api = api_base.rstrip("/")

    async def granted(self, tokens: dict[str, Any]) -> PollOutcome:
        github_token = str(tokens["access_token"])
        try:
            grant = await self._exchange(github_token, account=None)
        except RefreshRevoked:
            return PollOutcome("failed", detail="GitHub refused the sign-in; connect again")
        except RefreshFailed as exc:
            return PollOutcome("failed", detail=f"{exc}; connect again")
        account = None
        try:
            user = await self._send(
                "GET",
                f"{self.api}/user",
                headers={"Authorization": f"token {github_token}", **COPILOT_HEADERS},
            )
            login = answer_json(user).get("login")
            account = login if user.status_code == 200 and isinstance(login, str) else None
        except ConnectionError:
            pass  # the account name only labels the connection
        return PollOutcome("granted", grant=replace(grant, account=account))

    async def _exchange(self, github_token: str, account: str | None) -> Grant:
        try:
            response = await self._send(
                "GET",
                f"{self.api}/copilot_internal/v2/token",
                headers={
                    "Authorization": f"token {github_token}",
                    "Accept": "application/json",
                    **COPILOT_HEADERS,
                },
            )
        except ConnectionError as exc:
            raise RefreshFailed(f"Could not renew the GitHub Copilot login ({exc})") from None
        if response.status_code == 401:
            raise RefreshRevoked("401")
        if response.status_code in (403, 404):
            raise RefreshFailed("This GitHub account has no Copilot subscription")
        data = answer_json(response)
        token, expires = data.get("token"), data.get("expires_at")
        endpoints = data.get("endpoints")
        api = endpoints.get("api") if isinstance(endpoints, dict) else None
        if response.status_code != 200 or not isinstance(token, str):
            raise RefreshFailed(f"Could not renew the GitHub Copilot login (HTTP {response.status_code})")
        return Grant(
            access_token=token,
            refresh_token=github_token,
            expires_at=float(expires)
            if isinstance(expires, int | float) and not isinstance(expires, bool)
            else None,
            account=account,
            base_url=api.rstrip("/") if isinstance(api, str) and api else None,
        )

    async def refresh(self, grant: Grant) -> Grant:
        if not grant.refresh_token:
            raise RefreshRevoked("no GitHub token")
        return await self._exchange(grant.refresh_token, grant.account)


def build_clients(
    environ: Mapping[str, str],
    client: httpx.AsyncClient | None = None,
    clock: Callable[[], float] = time.time,
) -> dict[str, SubscriptionClient]:
    """The three adapters, at the bases `environ` names (defaults: the providers' own)."""
    urls = bases(environ)
    return {
        "chatgpt": ChatGPTClient(urls["chatgpt_auth"], client=client, clock=clock),
        "github-copilot-subscription": CopilotClient(
            urls["github"], urls["github_api"], client=client, clock=clock
        ),
        "xai-subscription": XaiClient(
            urls["xai_auth"],
            environ.get(XAI_CLIENT_ID_ENV) or XAI_DEFAULT_CLIENT_ID,
            client=client,
            clock=clock,
        ),
    }
