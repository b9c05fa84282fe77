"""Subscription credentials, pure (seed §8.1; issue 19 item 2): what a token says (a JWT's claims,
its expiry, the ChatGPT account it names) and the owner-only credential file's record of a
`Grant` (`credential_record` / `grant_from_record`, web mode). The login's state machine is in
`subscriptions`.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from server.core.machine_room.subscriptions import Grant


def jwt_claims(token: str | None) -> dict[str, Any]:
    """The claims of a JWT's payload, unverified (the token came straight from the issuer over
    TLS; its claims only label the account); {} for anything that is not a JWT."""
    if not token or token.count(".") != 2:
        return {}
    payload = token.split(".")[1]
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        claims = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return {}
    return claims if isinstance(claims, dict) else {}


OPENAI_AUTH_CLAIM = "https://api.openai.com/auth"
OPENAI_PROFILE_CLAIM = "https://api.openai.com/profile"


def chatgpt_identity(id_token: str | None, access_token: str | None) -> tuple[str | None, str | None]:
    """(account id, e-mail) from OpenAI's tokens: the id token's `https://api.openai.com/auth`
    claim carries `chatgpt_account_id` (the access token's too); the e-mail is `email`."""
    account_id: str | None = None
    email: str | None = None
    for token in (id_token, access_token):
        claims = jwt_claims(token)
        auth = claims.get(OPENAI_AUTH_CLAIM)
        if account_id is None and isinstance(auth, dict) and isinstance(auth.get("chatgpt_account_id"), str):
            account_id = auth["chatgpt_account_id"]
        profile = claims.get(OPENAI_PROFILE_CLAIM)
        if email is None and isinstance(claims.get("email"), str):
            email = claims["email"]
        if email is None and isinstance(profile, dict) and isinstance(profile.get("email"), str):
            email = profile["email"]
    return account_id, email


def jwt_expiry(token: str | None) -> float | None:
    """A JWT's `exp` claim (epoch seconds), or None."""
    exp = jwt_claims(token).get("exp")
    return float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None


CREDENTIAL_VERSION = 1


def credential_record(provider: str, grant: Grant, saved_at: float) -> dict[str, Any]:
    """The owner-only credential file's JSON (`<data dir>/subscriptions/<id>.json`, web mode)."""
    return {
        "version": CREDENTIAL_VERSION,
        "provider": provider,
        "accessToken": grant.access_token,
        "refreshToken": grant.refresh_token,
        "expiresAt": grant.expires_at,
        "accountId": grant.account_id,
        "account": grant.account,
        "baseUrl": grant.base_url,
        "savedAt": saved_at,
    }


def grant_from_record(provider: str, data: Any) -> Grant:
    """Read a credential file's JSON back. Raises ValueError in plain words when it is not one."""
    if not isinstance(data, dict):
        raise ValueError("it is not a JSON object")
    if data.get("provider") != provider:
        raise ValueError(f"it belongs to {data.get('provider')!r}, not {provider!r}")
    access = data.get("accessToken")
    if not isinstance(access, str) or not access:
        raise ValueError("it has no access token")

    def text(name: str) -> str | None:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"its {name} is not text")
        return value

    expires = data.get("expiresAt")
    if expires is not None and (isinstance(expires, bool) or not isinstance(expires, int | float)):
        raise ValueError("its expiresAt is not a number")
    return Grant(
        access_token=access,
        refresh_token=text("refreshToken"),
        expires_at=float(expires) if expires is not None else None,
        account_id=text("accountId"),
        account=text("account"),
        base_url=text("baseUrl"),
    )
