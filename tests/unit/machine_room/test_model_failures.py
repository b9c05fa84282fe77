"""Model failures in plain words, and the retry-after arithmetic (issue 10, defect 7)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai import exceptions as pe

from server.agent.machine_room.model_guard import classify, redact
from server.core.machine_room.model_failures import (
    Failure,
    FailureKind,
    failure_in_text,
    learner_words,
    parse_retry_after,
    refusal_code,
)


def said(kind: FailureKind, **facts: object) -> str:
    """`learner_words` of a failure of `kind` with `facts` (the fields of `Failure`)."""
    return learner_words(Failure(kind, **facts))  # type: ignore[arg-type]


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
    text = said(kind, model="m", status=500, retry_after_s=3, limit_s=2, where="h:1")
    assert text and not text.endswith(".") and ".." not in text
    assert text[0].islower(), "it continues a sentence the caller starts"
    for jargon in ("body", "status_code", "Exception", "Error:"):
        assert jargon not in text


def test_rate_limits_say_when() -> None:
    assert said(FailureKind.RATE_LIMITED, model="m", retry_after_s=0.2).endswith("try again in 1 s")
    assert said(FailureKind.RATE_LIMITED, model="m", retry_after_s=3600).endswith("in 60 minutes")
    assert said(FailureKind.RATE_LIMITED, model="m").endswith("wait a minute and try again")


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
    assert said(kind, model="m", limit_s=1).endswith("; what arrived is kept")
    whole = said(kind, model="m", limit_s=1, kept=False)
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
    once = said(FailureKind.SERVER_ERROR, model="m", status=500, offline=True)
    assert once == "the offline model failed on this request (HTTP 500); try again in a moment"
    again = said(FailureKind.SERVER_ERROR, model="m", status=500, offline=True, attempts=3)
    assert again.startswith("the offline model failed on this request (HTTP 500) on all 3 attempts")
    assert "try again" not in again and "provider" not in again
    hosted = said(FailureKind.SERVER_ERROR, model="m", status=502, attempts=3)
    assert (
        hosted
        == "the provider's server failed (HTTP 502) on all 3 attempts; try again later, or choose another "
        "model"
    )
    assert said(FailureKind.SERVER_ERROR, model="m", status=500) == (
        "the provider's server failed (HTTP 500); try again in a moment"
    )


def test_a_tool_calls_raw_validation_errors_become_one_plain_sentence() -> None:
    """Issue 20 item 2: pydantic's error list reached the learner as orange JSON."""
    from server.core.machine_room.model_failures import tool_error_sentence
    from server.services.classroom.turn_stream import plain_tool_error

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


def test_a_run_whose_retries_ran_out_says_so_once_in_the_same_words_everywhere() -> None:
    """Issue 27: the turn (a regex), extraction and practice (a string match) and the Workbench
    (classify) each worded pydantic-ai's "exceeded max retries" themselves; now `failure_in_text`
    reads it and `learner_words` says it."""
    tool = failure_in_text("Tool 'quiz' exceeded max retries count of 1. Consider raising it: https://x")
    assert tool == Failure(FailureKind.GAVE_UP, tool="quiz")
    assert learner_words(tool) == (
        "the model did not produce a valid answer after several tries, making invalid tool calls (quiz); "
        "try again, or choose a stronger model in Settings"
    )
    output = failure_in_text("Exceeded maximum output retries (3)", offline=True)
    assert output is not None and output.tool is None
    assert learner_words(output) == (
        "the model did not produce a valid answer after several tries; try again (small offline models "
        "often do this), or add an API key in Settings for a capable model"
    )
    assert failure_in_text("Exceeded maximum retries (3) for output validation") is not None
    assert failure_in_text("Connection error.") is None
    run = pe.UnexpectedModelBehavior("Exceeded maximum output retries (2)")
    failure = classify(run, "gpt-x")
    assert failure is not None and failure.kind is FailureKind.GAVE_UP
    assert str(failure).startswith("the model did not produce a valid answer after several tries; try again")
    other = classify(pe.UnexpectedModelBehavior("Received empty model response"), "gpt-x")
    assert other is not None and other.kind is FailureKind.MALFORMED


def test_a_subscription_login_refused_says_connect_again_not_check_the_key() -> None:
    exc = pe.ModelHTTPError(401, "gpt-x", {"error": "invalid token"})
    login = "the provider refused the ChatGPT subscription login; connect it again in Settings"
    failure = classify(exc, "gpt-x", refused_login=login)
    assert failure is not None and failure.kind is FailureKind.AUTH and str(failure) == login
    keyed = classify(exc, "gpt-x")
    assert keyed is not None and str(keyed).startswith("the provider refused the API key (HTTP 401)")


# -- properties: the input space is open (any status, any body, any facts) -------------------------
_BODY = "RAW-BODY-7f3a"
"""A marker no sentence could contain unless it repeated the provider's body."""

_facts = st.builds(
    Failure,
    kind=st.sampled_from(list(FailureKind)),
    model=st.text(st.characters(categories=["L", "N"]), max_size=20),
    status=st.none() | st.integers(min_value=100, max_value=599),
    retry_after_s=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    limit_s=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    where=st.none() | st.from_regex(r"[a-z0-9.]{1,12}:[0-9]{1,5}", fullmatch=True),
    kept=st.booleans(),
    offline=st.booleans(),
    attempts=st.integers(min_value=0, max_value=10**6),
    tool=st.none() | st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
)


@given(_facts)
def test_any_failure_is_said_as_one_plain_sentence(failure: Failure) -> None:
    text = learner_words(failure)
    assert text.strip() and text[0].islower() and not text.endswith(".")
    assert "\n" not in text and "None" not in text and "nan" not in text and "inf " not in text


@given(
    status=st.integers(min_value=100, max_value=599),
    body=st.none() | st.text(max_size=200).map(lambda t: f"{_BODY} {t}") | st.just({"error": _BODY}),
    retry_after=st.none() | st.floats(min_value=0, allow_nan=False, allow_infinity=True),
    whole=st.booleans(),
    offline=st.booleans(),
)
def test_any_provider_answer_becomes_a_sentence_never_its_raw_body(
    status: int, body: object, retry_after: float | None, whole: bool, offline: bool
) -> None:
    exc = pe.ModelHTTPError(status, "gpt-x", body)
    exc.retry_after = retry_after
    failure = classify(exc, "gpt-x", "127.0.0.1:8080", whole=whole, offline=offline)
    assert failure is not None, "every HTTP error of a model request is a model failure"
    text = str(failure)
    assert text.strip() and text[0].islower() and not text.endswith(".")
    assert _BODY not in text and "{" not in text


@given(st.text(max_size=300))
def test_any_framework_text_is_a_gave_up_failure_or_none(text: str) -> None:
    failure = failure_in_text(text)
    if failure is not None:
        said_it = learner_words(failure)
        assert said_it.startswith("the model did not produce a valid answer") and text not in said_it


@pytest.mark.parametrize(
    ("where", "hosted"),
    [
        ("openrouter.ai", True),
        ("api.openai.com:443", True),
        ("127.0.0.1:8080", False),
        ("localhost:11434", False),
        ("[::1]:1234", False),
        ("192.168.1.20:8000", False),
        ("gpu-box:8000", False),  # a LAN name without a dot
    ],
)
def test_a_failed_connection_says_what_the_learner_can_check(where: str, hosted: bool) -> None:
    """A hosted provider's server is not the learner's to run or address (a new-user trial was told
    to check that openrouter.ai "runs"): it says to check the internet connection; a server on this
    computer or the local network says to check that it runs and its address."""
    words = said(FailureKind.CONNECTION_FAILED, where=where)
    assert where in words
    assert ("internet connection" in words) is hosted
    assert ("check that it runs and its address in Settings" in words) is not hosted
