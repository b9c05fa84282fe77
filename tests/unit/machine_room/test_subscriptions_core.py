"""The subscription login state machine, refresh-ahead timing and status projection (issue 19)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest

from server.core.machine_room.subscription_credentials import (
    chatgpt_identity,
    credential_record,
    grant_from_record,
    jwt_claims,
    jwt_expiry,
)
from server.core.machine_room.subscriptions import (
    DEFAULT_INTERVAL_S,
    DISCONNECTED,
    SLOW_DOWN_STEP_S,
    SUBSCRIPTION_PROVIDERS,
    DeviceCode,
    Grant,
    Login,
    PollOutcome,
    ScopedAuth,
    auth_problem,
    classify_device_error,
    connected,
    failed,
    next_poll_delay,
    on_poll,
    pending,
    refresh_delay,
    refresh_due,
    status_view,
)

CODE = DeviceCode(
    "device-handle-secret", "ABCD-1234", "https://example.test/device", expires_at=1000.0, interval_s=5.0
)
GRANT = Grant("access-secret", "refresh-secret", 5000.0, "acct", "me@example.test", None)


def jwt(claims: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"e30.{body}.sig"


def test_pending_carries_the_code_and_its_expiry() -> None:
    login = pending(CODE)
    assert (login.state, login.code, login.interval_s, login.expires_at) == ("pending", CODE, 5.0, 1000.0)
    assert pending(replace(CODE, interval_s=0)).interval_s == DEFAULT_INTERVAL_S


def test_authorization_pending_keeps_waiting() -> None:
    login = pending(CODE)
    assert on_poll(login, PollOutcome("pending"), now=10) == login


def test_slow_down_adds_five_seconds_each_time() -> None:
    login = on_poll(pending(CODE), PollOutcome("slow_down"), now=10)
    assert login.state == "pending" and login.interval_s == 5.0 + SLOW_DOWN_STEP_S
    login = on_poll(login, PollOutcome("slow_down"), now=20)
    assert login.interval_s == 15.0
    assert on_poll(login, PollOutcome("pending"), now=30).interval_s == 15.0  # for good


def test_expired_token_and_a_code_past_its_expiry_end_in_error() -> None:
    assert on_poll(pending(CODE), PollOutcome("expired"), now=10) == failed(
        "The code expired before it was entered; connect again"
    )
    late = on_poll(pending(CODE), PollOutcome("pending"), now=1000)
    assert late.state == "error" and "expired" in (late.error or "")
    assert on_poll(pending(CODE), PollOutcome("slow_down"), now=1001).state == "error"


def test_access_denied_ends_in_error() -> None:
    login = on_poll(pending(CODE), PollOutcome("denied"), now=10)
    assert login.state == "error" and login.error == "The sign-in was declined; connect again"


def test_granted_connects_with_the_tokens_expiry_and_account() -> None:
    login = on_poll(pending(CODE), PollOutcome("granted", grant=GRANT), now=10)
    assert login == Login(state="connected", expires_at=5000.0, account="me@example.test")


def test_failed_carries_plain_words() -> None:
    login = on_poll(pending(CODE), PollOutcome("failed", detail="OpenAI refused (HTTP 500)"), now=10)
    assert login.error == "OpenAI refused (HTTP 500)"
    assert on_poll(pending(CODE), PollOutcome("failed"), now=10).error == "The sign-in failed; connect again"


def test_a_login_no_longer_pending_ignores_late_polls() -> None:
    for login in (DISCONNECTED, connected(GRANT), failed("x")):
        assert on_poll(login, PollOutcome("granted", grant=GRANT), now=10) == login


def test_next_poll_delay_never_passes_the_codes_expiry() -> None:
    assert next_poll_delay(pending(CODE), now=0) == 5.0
    assert next_poll_delay(pending(CODE), now=998) == 2.0
    assert next_poll_delay(pending(CODE), now=2000) == 0.0
    assert next_poll_delay(DISCONNECTED, now=0) is None


def test_refresh_ahead_timing() -> None:
    assert not refresh_due(1000.0, now=600, lead_s=300)
    assert refresh_due(1000.0, now=700, lead_s=300)
    assert refresh_due(1000.0, now=5000, lead_s=300)
    assert not refresh_due(None, now=10**9)
    assert refresh_delay(1000.0, now=600, lead_s=300) == 100.0
    assert refresh_delay(1000.0, now=900, lead_s=300) == 0.0
    assert refresh_delay(None, now=0) is None


def test_status_projection_never_holds_a_token() -> None:
    view = status_view(
        False,
        {
            "chatgpt": connected(GRANT),
            "github-copilot-subscription": pending(CODE),
            "xai-subscription": failed("x"),
        },
    )
    assert view["mode"] == "web" and set(view["providers"]) == set(SUBSCRIPTION_PROVIDERS)
    assert view["providers"]["chatgpt"] == {
        "state": "connected",
        "userCode": None,
        "verificationUri": None,
        "expiresAt": 5000.0,
        "account": "me@example.test",
        "error": None,
    }
    assert view["providers"]["github-copilot-subscription"]["userCode"] == "ABCD-1234"
    assert view["providers"]["github-copilot-subscription"]["expiresAt"] == 1000.0
    assert view["providers"]["xai-subscription"] == {
        "state": "error",
        "userCode": None,
        "verificationUri": None,
        "expiresAt": None,
        "account": None,
        "error": "x",
    }
    text = json.dumps(view)
    assert "secret" not in text  # neither the tokens nor the device handle
    assert status_view(True, {})["mode"] == "desktop"
    assert status_view(True, {})["providers"]["chatgpt"]["state"] == "disconnected"


def test_scoped_auth_repr_hides_the_token() -> None:
    assert "access-secret" not in repr(ScopedAuth("access-secret", 1.0, "acct"))


def test_auth_problem_words() -> None:
    assert auth_problem("chatgpt", None, 0, desktop=True) == (
        "Your ChatGPT subscription is not connected. Connect it in Settings."
    )
    expired = ScopedAuth("t", 100.0)
    assert auth_problem("chatgpt", expired, 100, desktop=True) == (
        "Your ChatGPT subscription login expired; the app is renewing it, try again"
    )
    assert "connect it again" in (auth_problem("xai-subscription", expired, 200, desktop=False) or "")
    assert auth_problem("chatgpt", expired, 99, desktop=True) is None
    assert auth_problem("chatgpt", ScopedAuth("t", None), 10**9, desktop=False) is None


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("authorization_pending", "pending"),
        ("slow_down", "slow_down"),
        ("expired_token", "expired"),
        ("access_denied", "denied"),
        ("invalid_client", "failed"),
        (None, "failed"),
        (42, "failed"),
    ],
)
def test_rfc8628_errors(error: Any, kind: str) -> None:
    assert classify_device_error(error) == kind


def test_jwt_claims_and_chatgpt_identity() -> None:
    id_token = jwt(
        {"email": "me@example.test", "https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}}
    )
    access = jwt({"exp": 1234, "https://api.openai.com/profile": {"email": "p@example.test"}})
    assert chatgpt_identity(id_token, access) == ("acct-1", "me@example.test")
    assert chatgpt_identity(None, access) == (None, "p@example.test")
    assert jwt_expiry(access) == 1234.0
    for junk in (None, "", "not-a-jwt", "a.!!!.c", "a.bnVsbA.c", jwt({"exp": True})):
        assert jwt_expiry(junk) is None
    assert jwt_claims("a.bnVsbA.c") == {}


def test_credential_record_round_trip_and_refusals() -> None:
    record = credential_record("chatgpt", GRANT, 1.0)
    assert grant_from_record("chatgpt", json.loads(json.dumps(record))) == GRANT
    for bad, why in [
        ([], "not a JSON object"),
        ({**record, "provider": "xai-subscription"}, "belongs to"),
        ({**record, "accessToken": ""}, "no access token"),
        ({**record, "refreshToken": 5}, "refreshToken is not text"),
        ({**record, "expiresAt": "soon"}, "expiresAt is not a number"),
        ({**record, "expiresAt": True}, "expiresAt is not a number"),
    ]:
        with pytest.raises(ValueError, match=why):
            grant_from_record("chatgpt", bad)
