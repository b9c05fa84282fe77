"""Model failures in plain words (issue 10, defect 7; seed §5: provider errors reach the learner in
plain words, never as raw bodies).

Pure: the agent layer classifies an exception into a `Failure` (its `FailureKind` and the facts it
knows: HTTP status, `Retry-After`, the model, the host, the deadline), `failure_in_text` reads the
one failure a framework reports only in words (its retries ran out), and `learner_words` says it:
the one function every system uses to put a model failure into learner words (issue 27). The
provider's own body is never part of the sentence (it is logged server-side, keys redacted).
"""

from __future__ import annotations

import email.utils
import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum


class FailureKind(StrEnum):
    """What went wrong with a model request, as a learner can act on it."""

    RATE_LIMITED = "rate_limited"
    QUOTA = "quota_exhausted"
    AUTH = "auth_refused"
    NOT_FOUND = "model_not_found"
    REJECTED = "request_rejected"
    CONTEXT_EXCEEDED = "context_exceeded"
    SERVER_ERROR = "server_error"
    FIRST_TOKEN_TIMEOUT = "first_token_timeout"  # noqa: S105 - not a password
    IDLE_TIMEOUT = "idle_timeout"
    TIMED_OUT = "timed_out"
    CONNECTION_FAILED = "connection_failed"
    CONNECTION_LOST = "connection_lost"
    ENDED_EARLY = "ended_early"
    MALFORMED = "malformed_response"
    GAVE_UP = "gave_up"
    """The model's answers kept failing validation (invalid tool calls or output) until the run's
    retries ran out: told by the framework's text (`failure_in_text`), not on the wire."""


REFUSAL_CODES = {
    FailureKind.RATE_LIMITED: "rate_limited",
    FailureKind.QUOTA: "quota_exhausted",
    FailureKind.AUTH: "auth_refused",
    FailureKind.NOT_FOUND: "model_not_found",
}
"""The API's error code for a turn refused because its model failed this way before replying;
every other failure is `model_unreachable`."""


def refusal_code(kind: str | None) -> str:
    """The API error code of a turn whose model failed with `kind` (a `FailureKind` value, or None
    when the failure was not classified): see `REFUSAL_CODES`."""
    try:
        return REFUSAL_CODES.get(FailureKind(kind), "model_unreachable") if kind else "model_unreachable"
    except ValueError:
        return "model_unreachable"


RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt before anything has streamed."""


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` (delta-seconds or an HTTP date) or `retry-after-ms`
    value; None when absent or unreadable. Never negative."""
    if value is None:
        return None
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        seconds = float(text)
        return seconds if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _seconds(value: float) -> str:
    """A wait or a deadline in words: "3 s", "2 minutes" (`value` finite, in seconds)."""
    whole = max(1, math.ceil(value))
    return f"{whole} s" if whole < 120 else f"{math.ceil(whole / 60)} minutes"


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed model request as facts, the input of `learner_words` (built by the agent layer's
    `classify` from an exception, or by `failure_in_text` from a framework's error text).

    Attributes:
        kind: the classified failure.
        model: the model id, as the learner chose it ("" when unknown).
        status: the HTTP status, when one came back.
        retry_after_s: when the provider said to retry, in seconds.
        limit_s: the deadline that passed, in seconds (timeouts).
        where: the server's host:port (connection failures).
        kept: whether what arrived before a failure mid-answer is kept (a streamed reply is); False
            for a whole answer that is used only complete (extraction, practice): the sentence
            then says to try again instead.
        offline: the model is the app's own offline model (no provider is involved, the new-user trial).
        attempts: how many times the request was sent and failed this way (retries included); a
            failure that repeated on every attempt promises nothing from trying again.
        tool: the tool whose calls kept failing (`GAVE_UP`), when the framework named it.
        refused_login: what a refused credential (`AUTH`) says instead of "check the key": a
            subscription route has no key ("connect it again in Settings", issue 19).
    """

    kind: FailureKind
    model: str = ""
    status: int | None = None
    retry_after_s: float | None = None
    limit_s: float | None = None
    where: str | None = None
    kept: bool = True
    offline: bool = False
    attempts: int = 1
    tool: str | None = None
    refused_login: str | None = None


def learner_words(failure: Failure) -> str:
    """THE one place a model failure becomes learner words (issue 27; seed §5): one sentence,
    lower-case first (it continues a sentence the caller may start), no trailing period, saying
    what failed and what to do. Never the provider's body or a framework's text: only the facts
    of `failure` are said. Pure.
    """
    kind, model = failure.kind, failure.model
    retry_after_s = _finite(failure.retry_after_s)
    limit_s = _finite(failure.limit_s)
    then = "what arrived is kept" if failure.kept else "try again"
    code = f" (HTTP {failure.status})" if failure.status else ""
    if kind is FailureKind.RATE_LIMITED:
        when = (
            f"try again in {_seconds(retry_after_s)}"
            if retry_after_s is not None
            else "wait a minute and try again"
        )
        return f"the provider is rate limiting requests to {model}{code}; {when}"
    if kind is FailureKind.QUOTA:
        return (
            f"the provider says the account's credits or quota for {model} are used up{code}; check your plan"
        )
    if kind is FailureKind.AUTH:
        if failure.refused_login:
            return failure.refused_login
        return f"the provider refused the API key{code}; check the key for this provider in Settings"
    if kind is FailureKind.NOT_FOUND:
        return f"the provider does not know the model '{model}'{code}; check the model name in Settings"
    if kind is FailureKind.CONTEXT_EXCEEDED:
        if failure.offline:
            return (
                f"this request is longer than the offline model can read at once{code}; "
                "an API key in Settings runs a model that can read it"
            )
        return (
            f"this request is longer than {model} can read at once (its context window){code}; "
            "choose a model with a larger context in Settings"
        )
    if kind is FailureKind.REJECTED:
        return (
            f"the provider refused the request to {model}{code}; it will likely refuse this lesson again as "
            "it stands: choose another model for this lesson (its model menu) or in Settings"
        )
    if kind is FailureKind.SERVER_ERROR:
        return _server_error(failure, code)
    if kind is FailureKind.FIRST_TOKEN_TIMEOUT:
        limit = f" within {_seconds(limit_s)}" if limit_s else ""
        return f"the model did not start answering{limit}; try again, or choose another model in Settings"
    if kind is FailureKind.IDLE_TIMEOUT:
        limit = f" for {_seconds(limit_s)}" if limit_s else ""
        return f"the model stopped sending{limit} in the middle of its answer; {then}"
    if kind is FailureKind.TIMED_OUT:
        return f"the request to {model} timed out; try again"
    if kind is FailureKind.CONNECTION_FAILED:
        at = f" at {failure.where}" if failure.where else ""
        if failure.where and not _on_this_computer(failure.where):
            # a hosted provider (openrouter.ai): the learner runs no server and sets no address there
            return (
                f"could not reach the model's server{at}; check this computer's internet connection "
                "(or a proxy or firewall), then try again"
            )
        return f"could not connect to the model's server{at}; check that it runs and its address in Settings"
    if kind is FailureKind.CONNECTION_LOST:
        return f"the connection to the model's server broke off in the middle of its answer; {then}"
    if kind is FailureKind.ENDED_EARLY:
        return f"the model's answer ended before it was finished; {then}"
    if kind is FailureKind.GAVE_UP:
        calls = f", making invalid tool calls ({failure.tool})" if failure.tool else ""
        advice = (
            "try again (small offline models often do this), or add an API key in Settings for a "
            "capable model"
            if failure.offline
            else "try again, or choose a stronger model in Settings"
        )
        return f"the model did not produce a valid answer after several tries{calls}; {advice}"
    return "the model's server sent an answer that could not be read; try again, or choose another model"


def _finite(seconds: float | None) -> float | None:
    """`seconds` when it is a finite number, else None (an unreadable wait is not said)."""
    return seconds if seconds is not None and math.isfinite(seconds) else None


def _server_error(failure: Failure, code: str) -> str:
    offline, attempts = failure.offline, failure.attempts
    who = "the offline model failed on this request" if offline else "the provider's server failed"
    if attempts <= 1:
        return f"{who}{code}; try again in a moment"
    if offline:
        return (
            f"{who}{code} on all {attempts} attempts, so trying again will not help; "
            "an API key in Settings runs a stronger model"
        )
    return f"{who}{code} on all {attempts} attempts; try again later, or choose another model"


_GAVE_UP_TEXT = re.compile(
    r"(?:Tool '(?P<tool>[^']+)' exceeded max retries|exceeded maximum (?:output )?retries)", re.IGNORECASE
)
"""pydantic-ai's texts for an agent run whose model kept failing validation until its retries ran
out: "Tool 'quiz' exceeded max retries count of 1. Consider raising ...", "Exceeded maximum output
retries (3)", "Exceeded maximum retries (3) for output validation"."""


def failure_in_text(text: str, *, kept: bool = True, offline: bool = False) -> Failure | None:
    """The model failure a framework's error `text` reports, for the one failure known by its text
    alone (pydantic-ai's retries ran out: `GAVE_UP`, naming the tool when the text does), else
    None (the text is then not a model failure this module can name). `kept`/`offline` as in
    `Failure`. Pure."""
    match = _GAVE_UP_TEXT.search(text)
    if match is None:
        return None
    return Failure(FailureKind.GAVE_UP, kept=kept, offline=offline, tool=match.group("tool"))


_TOOL_WHAT = {
    "ask_user_question": "a question",
    "quiz": "a quiz",
    "plan_init": "a lesson plan",
    "plan_teach": "a lesson step",
    "probe_done": "an assessment",
}


def tool_error_sentence(tool: str | None, raw: str) -> str:
    """A failed tool call's error in plain words (trial finding 2), no trailing period.

    pydantic-ai reports a tool call whose arguments failed validation as the JSON list of
    pydantic's errors (`[{"type": "json_invalid", "loc": [...], "msg": ..., "input": ...}]`), which
    reached the learner raw. That list becomes one sentence naming what the answer should have been
    (`tool`: the tool's name, None when unknown); any other `raw` (a tool's own refusal, already
    words) is returned unchanged. Pure.
    """
    try:
        errors = json.loads(raw)
    except ValueError:
        return raw
    if (
        not isinstance(errors, list)
        or not errors
        or not all(isinstance(e, dict) and "type" in e for e in errors)
    ):
        return raw
    what = _TOOL_WHAT.get(tool or "", "a tool call")
    kinds = [str(e["type"]) for e in errors]
    if "json_invalid" in kinds:
        return f"its answer could not be read as {what} (invalid JSON)"
    fields = sorted({str(e["loc"][-1]) for e in errors if e.get("loc") and e["type"] == "missing"})
    if fields and len(fields) == len(errors):
        return f"its answer as {what} left out {', '.join(fields)}"
    count = f"{len(errors)} problems" if len(errors) > 1 else "1 problem"
    return f"its answer did not fit {what} ({count})"


_LOCAL_HOSTS = ("127.", "localhost", "[::1]", "::1", "10.", "192.168.")


def _on_this_computer(where: str) -> bool:
    """Whether `where` (host or host:port) names this computer or the local network, where the
    learner runs the server (a loopback address, `localhost`, a private 10./192.168. address, or
    a bare name without a dot such as a LAN host), rather than a hosted provider."""
    host = where.lower()
    return host.startswith(_LOCAL_HOSTS) or "." not in host.split(":", 1)[0].strip("[]")
