"""Model failures in plain words, and the retry-after arithmetic (issue 10, defect 7)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic_ai import exceptions as pe

from server.agent.machine_room.model_guard import classify, redact
from server.core.machine_room.model_failures import (
    FailureKind,
    failure_sentence,
    parse_retry_after,
    refusal_code,
)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("1", 1.0), ("2.5", 2.5), (" 30 ", 30.0), (None, None), ("soon", None), ("-3", None)],
)
def test_retry_after_seconds(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value) == seconds


def test_retry_after_http_date_is_seconds_from_now_never_negative() -> None:
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("Tue, 01 Dec 2026 12:00:45 GMT", now) == 45.0
    assert parse_retry_after("Tue, 01 Dec 2026 11:00:00 GMT", now) == 0.0


@pytest.mark.parametrize("kind", list(FailureKind))
def test_every_sentence_is_plain_one_sentence_without_a_trailing_period(kind: FailureKind) -> None:
    text = failure_sentence(kind, model="m", status=500, retry_after_s=3, limit_s=2, where="h:1")
    assert text and not text.endswith(".") and ".." not in text
    assert text[0].islower(), "it continues a sentence the caller starts"
    for jargon in ("body", "status_code", "Exception", "Error:"):
        assert jargon not in text


def test_rate_limits_say_when() -> None:
    assert failure_sentence(FailureKind.RATE_LIMITED, model="m", retry_after_s=0.2).endswith(
        "try again in 1 s"
    )
    assert failure_sentence(FailureKind.RATE_LIMITED, model="m", retry_after_s=3600).endswith("in 60 minutes")
    assert failure_sentence(FailureKind.RATE_LIMITED, model="m").endswith("wait a minute and try again")


def test_keys_are_redacted_from_what_is_logged() -> None:
    text = "bad request from Bearer sk-live-abcdefgh12345678 for key my-own-secret-key"
    cleaned = redact(text, ["my-own-secret-key"])
    assert (
        "sk-live" not in cleaned and "my-own-secret-key" not in cleaned and cleaned.count("[redacted]") == 2
    )


@pytest.mark.parametrize(
    "kind", [FailureKind.IDLE_TIMEOUT, FailureKind.CONNECTION_LOST, FailureKind.ENDED_EARLY]
)
def test_an_answer_cut_short_says_what_is_kept(kind: FailureKind) -> None:
    """A streamed reply keeps what arrived; a whole answer (extraction, practice) keeps nothing."""
    assert failure_sentence(kind, model="m", limit_s=1).endswith("; what arrived is kept")
    whole = failure_sentence(kind, model="m", limit_s=1, kept=False)
    assert whole.endswith("; try again") and "kept" not in whole


def test_a_refused_turn_names_its_failure() -> None:
    assert refusal_code("rate_limited") == "rate_limited"
    assert refusal_code("auth_refused") == "auth_refused"
    assert refusal_code("model_not_found") == "model_not_found"
    assert refusal_code("quota_exhausted") == "quota_exhausted"
    for other in ("server_error", "first_token_timeout", "connection_failed", None, "", "no-such-kind"):
        assert refusal_code(other) == "model_unreachable", other


def test_the_offline_model_is_named_and_a_repeated_failure_promises_nothing() -> None:
    """Issue 20 item 2: no provider is involved offline, and "try again" is false advice when the
    request failed the same way on every attempt."""
    once = failure_sentence(FailureKind.SERVER_ERROR, model="m", status=500, offline=True)
    assert once == "the offline model failed on this request (HTTP 500); try again in a moment"
    again = failure_sentence(FailureKind.SERVER_ERROR, model="m", status=500, offline=True, attempts=3)
    assert again.startswith("the offline model failed on this request (HTTP 500) on all 3 attempts")
    assert "try again" not in again and "provider" not in again
    hosted = failure_sentence(FailureKind.SERVER_ERROR, model="m", status=502, attempts=3)
    assert (
        hosted
        == "the provider's server failed (HTTP 502) on all 3 attempts; try again later, or choose another "
        "model"
    )
    assert failure_sentence(FailureKind.SERVER_ERROR, model="m", status=500) == (
        "the provider's server failed (HTTP 500); try again in a moment"
    )


def test_a_tool_calls_raw_validation_errors_become_one_plain_sentence() -> None:
    """Issue 20 item 2: pydantic's error list reached the learner as orange JSON."""
    from server.core.machine_room.model_failures import tool_error_sentence
    from server.services.classroom.turn import plain_tool_error

    raw = '[{"type":"json_invalid","loc":[],"msg":"Invalid JSON: EOF","input":"{ \\"question\\""}]'
    assert (
        tool_error_sentence("ask_user_question", raw)
        == "its answer could not be read as a question (invalid JSON)"
    )
    missing = '[{"type":"missing","loc":["explanation"],"msg":"Field required","input":{}}]'
    assert tool_error_sentence("quiz", missing) == "its answer as a quiz left out explanation"
    other = (
        '[{"type":"too_short","loc":["options"],"msg":"x"},{"type":"int_type","loc":["correct"],"msg":"y"}]'
    )
    assert tool_error_sentence(None, other) == "its answer did not fit a tool call (2 problems)"
    assert tool_error_sentence("plan_init", "the plan names no node") == "the plan names no node"
    names: dict[str, str] = {}
    plain_tool_error({"type": "tool-input-start", "toolCallId": "c1", "toolName": "quiz"}, names)
    out = plain_tool_error({"type": "tool-output-error", "toolCallId": "c1", "errorText": raw}, names)
    assert out["errorText"] == "its answer could not be read as a quiz (invalid JSON)"
    assert "{" not in out["errorText"] and "json_invalid" not in out["errorText"]


def test_a_request_longer_than_the_context_says_so_and_what_to_do() -> None:
    """llama.cpp's 400 `context_length_exceeded` (seen when the offline model read a note in the
    new-user check: 4,175 tokens for a 4,096-token context) names the cause, not a bare refusal."""
    body = {"message": "maximum context length is 4096 tokens", "code": "context_length_exceeded"}
    exc = pe._HTTPModelContextWindowExceededError(400, "SmolLM2-135M-Instruct", body)
    offline = classify(exc, "SmolLM2-135M-Instruct", whole=True, offline=True)
    assert offline is not None and offline.kind is FailureKind.CONTEXT_EXCEEDED
    assert str(offline) == (
        "this request is longer than the offline model can read at once (HTTP 400); "
        "an API key in Settings runs a model that can read it"
    )
    hosted = classify(exc, "gpt-x")
    assert hosted is not None and "longer than gpt-x can read at once" in str(hosted)
    assert "maximum context length" not in str(hosted)  # the provider's body stays in the log
