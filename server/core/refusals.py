"""The app's one refusal: a request that cannot be accepted, in plain words, with nothing written.

Every system raises `Refused` (a lesson turn that cannot start, a graph edit on an unknown node, a
problem set answered twice, a folder outside the import roots, a dictation token that cannot be
minted). The core knows no HTTP: a refusal carries its `kind`, and the transport layer maps kinds
to statuses (`server.api.errors.STATUS_OF`). Shared by every system, so it lives at the core's root.
"""

from __future__ import annotations

from typing import Literal, get_args

RefusalKind = Literal[
    "invalid",
    "forbidden",
    "not_found",
    "conflict",
    "refused_by_provider",
    "provider_failed",
    "unavailable",
]
"""What sort of refusal, in the transport's order of statuses:

- `invalid`: the request itself is wrong (a malformed message, an empty selection); resend it mended.
- `forbidden`: the caller may not do this (a folder outside the import roots).
- `not_found`: what it names does not exist (an unknown lesson, set, node).
- `conflict`: not now (a turn is running, a question is pending); retry after it ends.
- `refused_by_provider`: an outside provider refused our credential (dictation key refused).
- `provider_failed`: an outside provider answered wrongly (no token in its answer).
- `unavailable`: nothing can serve it now (no model set up, the offline model did not start).
"""

REFUSAL_KINDS: tuple[RefusalKind, ...] = get_args(RefusalKind)


class Refused(Exception):
    """A request that cannot be accepted. Nothing was written.

    Attributes:
        kind: what sort of refusal (RefusalKind); the API layer answers it with a status.
        code: a stable machine code, e.g. "bad_request", "turn_running", "set_not_found".
        detail: a sentence saying what was wrong and what to do.
        retry_after_s: seconds after which trying again may succeed (a provider's rate limit), or
            None when no time is known; the transport answers it as `Retry-After`.

    Raises ValueError at construction for a kind outside RefusalKind (a programming error).
    """

    def __init__(self, kind: RefusalKind, code: str, detail: str, retry_after_s: float | None = None) -> None:
        if kind not in REFUSAL_KINDS:
            raise ValueError(f"unknown refusal kind {kind!r}; one of {', '.join(REFUSAL_KINDS)}")
        super().__init__(f"{code}: {detail}")
        self.kind: RefusalKind = kind
        self.code = code
        self.detail = detail
        self.retry_after_s = retry_after_s
