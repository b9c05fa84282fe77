"""The guarded HTTP transport of every model client (issue 10, deliver 2): deadlines and retries.

Provider-agnostic (every provider goes through the OpenAI wire). `GuardedTransport`: a connect
timeout; a first-token deadline (from sending the request to the first streamed bytes, or to a
whole answer); an idle deadline between streamed chunks; a streamed answer must end with
`data: [DONE]` (else it "ended early", `StreamEndedEarly`); and, before anything streamed, retries
of 429 / 5xx / refused connections with backoff that honours `Retry-After` (up to `max_wait_s`; a
longer wait fails at once, saying when). The SDK's own retries are off, so a hang costs one
deadline, not three. A passed deadline raises `ModelDeadline`; a failed response it returns
carries how often it was sent (`ATTEMPTS_HEADER`). `model_guard` turns all of these into plain
words.

Cancelling the task that awaits a request (an abort) cancels it at any moment, the wait for the
first token included: nothing here shields a request from cancellation.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2

from server.core.contracts.models import ModelCallSettings
from server.core.machine_room.model_failures import RETRYABLE_STATUSES, FailureKind, parse_retry_after

log = logging.getLogger("lh.model")

ATTEMPTS_HEADER = "x-lh-attempts"
"""Set by the guarded transport on a failed response it returns: how many times it was sent."""


class ModelDeadline(Exception):
    """A deadline of `ModelCallSettings` passed. `kind` says which; `limit_s` is its length."""

    def __init__(self, kind: FailureKind, limit_s: float) -> None:
        super().__init__(f"{kind.value} after {limit_s:g} s")
        self.kind = kind
        self.limit_s = limit_s


class StreamEndedEarly(Exception):
    """A streamed answer closed without its `data: [DONE]` terminator."""


class _DeadlineStream(httpx2.AsyncByteStream):
    """A response body read under the first-token and idle deadlines; checks the SSE terminator."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, limits: ModelCallSettings, started: float, expect_done: bool
    ) -> None:
        self.inner = inner
        self.limits = limits
        self.started = started
        self.expect_done = expect_done
        self.iterated = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.iterated:  # drained again after an early stop (the SDK does): nothing to check
            async for chunk in self.inner:
                yield chunk
            return
        self.iterated = True
        iterator = self.inner.__aiter__()
        first = True
        tail = b""
        while True:
            if first:
                kind, limit = FailureKind.FIRST_TOKEN_TIMEOUT, self.limits.first_token_s
                budget = max(0.001, self.started + limit - time.monotonic())
            else:
                kind, limit = FailureKind.IDLE_TIMEOUT, self.limits.idle_s
                budget = limit
            try:
                chunk = await asyncio.wait_for(iterator.__anext__(), budget)
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise ModelDeadline(kind, limit) from None
            if chunk:
                first = False
                tail = (tail + chunk)[-256:]
            yield chunk
        if self.expect_done and b"[DONE]" not in tail:
            raise StreamEndedEarly(f"the event stream closed without data: [DONE] (it ended: {tail[-60:]!r})")

    async def aclose(self) -> None:
        await self.inner.aclose()


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """The model client's transport: deadlines and retries (see the module docstring).

    Args:
        limits: the deadlines and retry policy.
        sleep: how to wait between attempts (tests pass a recorder).
    """

    def __init__(
        self,
        limits: ModelCallSettings,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.limits = limits
        self.sleep = sleep

    def prepare(self, request: httpx2.Request) -> httpx2.Request:
        """A hook for subclasses that rewrite requests (the llama.cpp transport)."""
        return request

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request = self.prepare(request)
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                response = await asyncio.wait_for(
                    super().handle_async_request(request), self.limits.first_token_s
                )
            except TimeoutError:
                raise ModelDeadline(FailureKind.FIRST_TOKEN_TIMEOUT, self.limits.first_token_s) from None
            except httpx2.ConnectError:
                if attempt >= self.limits.retries:
                    raise
                attempt += 1
                await self.sleep(_backoff(attempt))
                continue
            if response.status_code in RETRYABLE_STATUSES and attempt < self.limits.retries:
                wait = _retry_after(response)
                if wait is None or wait <= self.limits.max_wait_s:
                    await response.aclose()
                    attempt += 1
                    log.info("model answered %s; attempt %d in %.1f s", response.status_code, attempt + 1,
                             wait if wait is not None else _backoff(attempt))  # fmt: skip
                    await self.sleep(wait if wait is not None else _backoff(attempt))
                    continue
            if response.status_code >= 400:  # how often it failed, for the sentence (the new-user trial)
                response.headers[ATTEMPTS_HEADER] = str(attempt + 1)
            if response.status_code < 400:
                streamed = "text/event-stream" in response.headers.get("content-type", "")
                assert isinstance(response.stream, httpx2.AsyncByteStream)
                response.stream = _DeadlineStream(response.stream, self.limits, started, expect_done=streamed)
            return response


def _retry_after(response: httpx2.Response) -> float | None:
    milliseconds = response.headers.get("retry-after-ms")
    if milliseconds is not None:
        parsed = parse_retry_after(milliseconds)
        if parsed is not None:
            return parsed / 1000
    return parse_retry_after(response.headers.get("retry-after"))


def _backoff(attempt: int) -> float:
    """0.5 s, 1 s, 2 s, … (capped at 8 s) with a little jitter."""
    return float(min(8.0, 0.5 * 2 ** (attempt - 1)) * (1 + random.random() / 4))  # noqa: S311 - jitter


def guarded_client(
    limits: ModelCallSettings, transport: GuardedTransport | None = None
) -> httpx2.AsyncClient:
    """An HTTP client for a model: the guarded transport, the connect timeout, and reads bounded by
    the transport's deadlines (the client's own read timeout is only a backstop)."""
    backstop = max(limits.first_token_s, limits.idle_s) + 5
    return httpx2.AsyncClient(
        transport=transport or GuardedTransport(limits),
        timeout=httpx2.Timeout(backstop, connect=limits.connect_s),
    )
