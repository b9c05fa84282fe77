"""Plain-words failures for every model request (issue 10, deliver 2).

Two layers, both provider-agnostic (every provider goes through the OpenAI wire):

- `GuardedTransport` (`guarded_transport`), the HTTP transport of the model's client: deadlines
  and retries.
- `GuardedModel`, a pydantic-ai `WrapperModel` around the chat model: any failure of a request
  (before or during its stream) becomes a `ModelFailure` whose text is one plain sentence
  (`server.core.machine_room.model_failures`); the raw error, with keys redacted, goes to the server log only.

Cancelling the task that awaits a request (an abort) cancels it at any moment, the wait for the
first token included: nothing here shields a request from cancellation.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import httpx2
from pydantic_ai import exceptions as pe
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from server.agent.machine_room.guarded_transport import ATTEMPTS_HEADER, ModelDeadline, StreamEndedEarly
from server.core.machine_room.model_failures import (
    Failure,
    FailureKind,
    failure_in_text,
    learner_words,
    parse_retry_after,
)

log = logging.getLogger("lh.model")

KEY_PATTERN = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9_\-.]{8,})")
"""Things that look like keys in a provider's error text."""


class ModelFailure(pe.ModelAPIError):
    """A failed model request in plain words: `str()` is the sentence for the learner.

    Attributes:
        kind: the classified failure.
        status: the HTTP status when one came back.
        retry_after_s: when the provider said to retry.
        limit_s: the deadline that passed, in seconds, for the deadline kinds (else None).
        attempts: how many times the request was sent (retries included) before it failed; usage
            counts them as model calls that reported no tokens (trial finding 4).
    """

    def __init__(
        self,
        kind: FailureKind,
        sentence: str,
        model: str,
        status: int | None,
        retry_after_s: float | None,
        limit_s: float | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(model_name=model, message=sentence)
        self.kind = kind
        self.status = status
        self.retry_after_s = retry_after_s
        self.limit_s = limit_s
        self.attempts = attempts

    def __str__(self) -> str:
        return self.message


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with the given secrets and anything shaped like a key replaced by `[redacted]`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return KEY_PATTERN.sub("[redacted]", text)


# -- the model --------------------------------------------------------------------------------------
def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 12:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def model_failure_of(exc: BaseException) -> ModelFailure | None:
    """The guarded model's `ModelFailure` behind `exc` (itself or a cause), or None."""
    return next((link for link in _chain(exc) if isinstance(link, ModelFailure)), None)


def classify(
    exc: BaseException,
    model: str,
    where: str | None = None,
    *,
    whole: bool = False,
    offline: bool = False,
    refused_login: str | None = None,
) -> ModelFailure | None:
    """The plain-words failure for an exception raised by a model request or an agent run, or None
    when the exception is not a model failure (it is then re-raised unchanged): the exception is
    read into a `Failure` and said by `learner_words`. `whole`: the request asked for a whole
    (non-streamed) answer, so nothing of a cut-short one is kept. `offline`: the model is the app's
    offline model (the sentence names it, not a provider). `refused_login`: what a refused
    credential says on a subscription route (see `Failure`)."""
    chain = _chain(exc)
    status: int | None = None
    retry_after: float | None = None
    for link in chain:
        if isinstance(link, ModelFailure):
            return link
        if isinstance(link, pe.ModelHTTPError):
            status = link.status_code
            retry_after = link.retry_after
            break
    kind: FailureKind | None = None
    limit: float | None = None
    for link in chain:  # first pass: what happened on the wire, the most specific cause
        if isinstance(link, ModelDeadline):
            kind, limit = link.kind, link.limit_s
        elif isinstance(link, StreamEndedEarly):
            kind = FailureKind.ENDED_EARLY
        elif isinstance(link, httpx2.ConnectError | httpx2.ConnectTimeout):
            kind = FailureKind.CONNECTION_FAILED
        elif isinstance(link, httpx2.TimeoutException):
            kind = FailureKind.TIMED_OUT
        elif isinstance(link, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
            kind = FailureKind.CONNECTION_LOST
        elif isinstance(link, json.JSONDecodeError):
            kind = FailureKind.MALFORMED
        if kind is not None:
            break
    for link in chain if kind is None else ():  # second pass: what the provider said
        if isinstance(link, pe.ModelContextWindowExceededError):  # a 400 that says what to change
            kind = FailureKind.CONTEXT_EXCEEDED
        elif isinstance(link, pe.ModelRateLimitError):
            kind = FailureKind.RATE_LIMITED
        elif isinstance(link, pe.ModelQuotaExceededError):
            kind = FailureKind.QUOTA
        elif isinstance(link, pe.ModelAuthenticationError):
            kind = FailureKind.AUTH
        elif isinstance(link, pe.ModelNotFoundError):
            kind = FailureKind.NOT_FOUND
        elif isinstance(link, pe.ModelServerError | pe.ModelUnavailableError):
            kind = FailureKind.SERVER_ERROR
        elif isinstance(link, pe.ModelHTTPError):
            kind = _by_status(link.status_code)
        elif isinstance(link, pe.ModelTimeoutError):
            kind = FailureKind.TIMED_OUT
        elif isinstance(link, pe.ModelConnectionError):
            kind = FailureKind.CONNECTION_FAILED
        elif isinstance(link, pe.UnexpectedModelBehavior):
            gave_up = failure_in_text(str(link), kept=not whole, offline=offline)
            if gave_up is not None:  # its retries ran out: told by the framework's words alone
                return _failure(replace(gave_up, model=model))
            kind = FailureKind.MALFORMED
        elif isinstance(link, pe.ModelAPIError):
            kind = _by_status(status) if status else FailureKind.MALFORMED
        if kind is not None:
            break
    if kind is None:
        return None
    if kind is FailureKind.RATE_LIMITED and retry_after is None:
        retry_after = _header_retry_after(exc)
    facts = Failure(kind, model, status, retry_after, limit, where, kept=not whole, offline=offline,
                    attempts=_attempts(exc), refused_login=refused_login)  # fmt: skip
    return _failure(facts)


def _failure(facts: Failure) -> ModelFailure:
    """`facts` said in learner words (`learner_words`), as the `ModelFailure` raised."""
    return ModelFailure(facts.kind, learner_words(facts), facts.model, facts.status, facts.retry_after_s,
                        facts.limit_s, facts.attempts)  # fmt: skip


def _by_status(status: int | None) -> FailureKind:
    if status == 429:
        return FailureKind.RATE_LIMITED
    if status in (401, 403):
        return FailureKind.AUTH
    if status == 404:
        return FailureKind.NOT_FOUND
    if status is not None and status >= 500:
        return FailureKind.SERVER_ERROR
    return FailureKind.REJECTED


def _attempts(exc: BaseException) -> int:
    """How many times the failed request was sent (`ATTEMPTS_HEADER`), 1 when unknown."""
    for link in _chain(exc):
        headers = getattr(getattr(link, "response", None), "headers", None)
        if headers is not None and str(headers.get(ATTEMPTS_HEADER, "")).isdigit():
            return int(headers[ATTEMPTS_HEADER])
    return 1


def _header_retry_after(exc: BaseException) -> float | None:
    for link in _chain(exc):
        headers = getattr(getattr(link, "response", None), "headers", None)
        if headers is not None:
            value = parse_retry_after(headers.get("retry-after"))
            if value is not None:
                return value
    return None


class GuardedModel(WrapperModel):
    """Turns every failure of the wrapped model's requests into a `ModelFailure` (plain words).

    Args:
        wrapped: the chat model.
        where: the server's host:port, named in connection failures.
        secrets: the API key(s) to redact from anything logged.
        auth_sentence: what a refused credential (HTTP 401/403) says instead of "check the key"
            (subscription routes have no key: "connect it again in Settings", issue 19).
        offline: the wrapped model is the app's offline model (failures name it, the new-user trial).
    """

    def __init__(
        self,
        wrapped: Any,
        where: str | None = None,
        secrets: Iterable[str | None] = (),
        auth_sentence: str | None = None,
        offline: bool = False,
    ) -> None:
        super().__init__(wrapped)
        self.where = where
        self.secrets = tuple(secrets)
        self.auth_sentence = auth_sentence
        self.offline = offline

    def _failure(self, exc: BaseException, whole: bool = False) -> ModelFailure | None:
        failure = classify(exc, self.wrapped.model_name, self.where, whole=whole, offline=self.offline,
                           refused_login=self.auth_sentence)  # fmt: skip
        if failure is not None and failure is not exc:
            log.warning(
                "model %s failed (%s): %s", self.wrapped.model_name, failure.kind.value,
                redact(f"{type(exc).__name__}: {exc}", self.secrets),
            )  # fmt: skip
        return failure

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        try:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        except Exception as exc:
            failure = self._failure(exc, whole=True)
            if failure is None:
                raise
            raise failure from exc

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as response:
                yield response
        except Exception as exc:
            failure = self._failure(exc)
            if failure is None:
                raise
            raise failure from exc
