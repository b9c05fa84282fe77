"""What a turn accepts into the record (seed §5)."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from server.core.classroom.turns import learner_message, title_after, upsert_message
from server.core.contracts.chat import ChatRequest
from server.core.refusals import Refused


def request(*messages: dict) -> ChatRequest:
    return ChatRequest.model_validate({"id": "c_1", "messages": list(messages)})


def user(text: str, mid: str = "u1") -> dict:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}


def test_last_user_message_is_the_learner_message() -> None:
    assert learner_message(request(user("a", "u0"), user("b")))["id"] == "u1"


@pytest.mark.parametrize(
    "last",
    [
        pytest.param(
            {"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "x"}]}, id="assistant"
        ),
        pytest.param(user("   "), id="blank"),
        pytest.param({"id": "u", "role": "user", "parts": [{"type": "file", "url": "x"}]}, id="no-text"),
        pytest.param(user("x" * 100_001), id="too-long"),
    ],
)
def test_refused_learner_messages(last: dict) -> None:
    with pytest.raises(Refused) as info:
        learner_message(request(last))
    assert info.value.kind == "invalid" and info.value.detail


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"id": "c_1", "messages": []}, id="no-messages"),
        pytest.param({"id": "../etc", "messages": [user("x")]}, id="path-id"),
        pytest.param(
            {"id": "c_1", "messages": [{"id": "u", "role": "user", "parts": [{"text": "x"}]}]},
            id="part-without-type",
        ),
        pytest.param({"id": "c_1", "messages": [user("x")], "trigger": "nonsense"}, id="bad-trigger"),
    ],
)
def test_malformed_requests_fail_validation(body: dict) -> None:
    with pytest.raises(ValueError):
        ChatRequest.model_validate(body)


def test_upsert_replaces_by_id_and_never_duplicates() -> None:
    messages = [user("a", "u0")]
    once = upsert_message(messages, user("b"))
    twice = upsert_message(once, user("b2"))
    assert [m["id"] for m in twice] == ["u0", "u1"]
    assert twice[1]["parts"][0]["text"] == "b2"
    assert messages == [user("a", "u0")]  # input untouched


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=20))
def test_upsert_keeps_ids_unique(ids: list[str]) -> None:
    messages: list[dict] = []
    for mid in ids:
        messages = upsert_message(messages, user("t", mid))
    assert len({m["id"] for m in messages}) == len(messages) == len(set(ids))


def test_title_from_first_learner_line() -> None:
    assert title_after("New lesson", [user("What is a group?\nmore")]) == "What is a group?"
    long = title_after("New lesson", [user("x" * 80)])
    assert len(long) == 60 and long.endswith("…")
    assert title_after("Chosen", [user("What")]) == "Chosen"
    assert title_after("New lesson", []) == "New lesson"


def test_accepting_an_answered_message_again_is_refused() -> None:
    from server.core.classroom.turns import accept_learner_message

    reply = {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "x"}]}
    with pytest.raises(Refused) as info:
        accept_learner_message([user("q"), reply], user("q"))
    assert info.value.kind == "conflict"
    assert accept_learner_message([user("q")], user("q again")) == [user("q again")]


def test_regenerate_replaces_the_replies_after_the_message() -> None:
    from server.core.classroom.turns import accept_learner_message

    reply = {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "partial"}]}
    assert accept_learner_message([user("q"), reply], user("q"), regenerate=True) == [user("q")]
    later = [user("q"), reply, user("next", "u2")]
    with pytest.raises(Refused):
        accept_learner_message(later, user("q"), regenerate=True)


def test_framework_errors_reach_the_learner_in_plain_words() -> None:
    from server.services.classroom.turn_stream import learner_facing

    raw = {
        "type": "error",
        "errorText": "Tool 'quiz' exceeded max retries count of 1. Consider raising it: https://x",
    }
    said = learner_facing(raw)["errorText"]
    assert "invalid tool calls (quiz)" in said and "Settings" in said and "https" not in said
    failed = {"type": "error", "errorText": "Connection error.", "failure": {"kind": "unreachable"}}
    assert learner_facing(failed) == {"type": "error", "errorText": "Connection error."}  # the model's
    app_error = {"type": "error", "errorText": "<class 'pydantic_ai.X'> KeyError"}  # issue 26: the app's
    assert learner_facing(app_error)["errorText"].startswith("the turn failed because of an error in the app")
    assert learner_facing({"type": "text-delta", "delta": "x"}) == {"type": "text-delta", "delta": "x"}


def test_awaits_continuation_mirrors_the_browser() -> None:
    from server.core.transcript import awaits_continuation

    quiz = {"type": "tool-quiz", "toolCallId": "q1", "state": "output-available", "input": {}, "output": {}}
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    answered = {"id": "a1", "role": "assistant", "parts": [{"type": "step-start"}, quiz]}
    assert awaits_continuation([user, answered])
    assert awaits_continuation([user, {**answered, "parts": [*answered["parts"], {"type": "step-start"}]}])
    went_on = {**answered, "parts": [*answered["parts"], {"type": "text", "text": "Right."}]}
    assert not awaits_continuation([user, went_on])
    pending = {**answered, "parts": [{**quiz, "state": "input-available"}]}
    assert not awaits_continuation([user, pending])
    assert not awaits_continuation([user])
    assert not awaits_continuation([])


def _accept_reference(messages: list[dict], message: dict, regenerate: bool) -> list[dict] | None:
    """The acceptance rule as first written (a list of every id, then a second scan)."""
    ids = [m.get("id") for m in messages]
    if regenerate and message.get("id") in ids:
        at = ids.index(message.get("id"))
        if all(m.get("role") == "assistant" for m in messages[at + 1 :]):
            messages, ids = messages[: at + 1], ids[: at + 1]
    if message.get("id") in ids and ids[-1] != message.get("id"):
        return None
    if message.get("id") in ids and messages[ids.index(message.get("id"))].get("role") != "user":
        return None  # issue 26, item 2: a learner's id never replaces the teacher's reply
    return upsert_message(messages, message)


@given(
    roles=st.lists(st.sampled_from(["user", "assistant"]), max_size=8),
    pick=st.integers(0, 9),
    regenerate=st.booleans(),
)
def test_accepting_a_message_scans_once_and_decides_as_before(
    roles: list[str], pick: int, regenerate: bool
) -> None:
    """Issue 15: one scan from the end (no list of every id); the decisions are unchanged."""
    from server.core.classroom.turns import accept_learner_message

    messages = [{"id": f"m{i}", "role": role, "parts": []} for i, role in enumerate(roles)]
    message = user("again", f"m{pick}")
    expected = _accept_reference(messages, message, regenerate)
    if expected is None:
        with pytest.raises(Refused):
            accept_learner_message(messages, message, regenerate=regenerate)
    else:
        got = accept_learner_message(messages, message, regenerate=regenerate)
        assert got == expected and all(a is b for a, b in zip(got, expected, strict=True))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["accept", "regenerate", "reply", "outside"]),
            st.sampled_from(["a", "b", "c", "d"]),
        ),
        max_size=30,
    )
)
@example([("accept", "a"), ("reply", "a"), ("regenerate", "a"), ("reply", "a")])  # a cut, then a reply
@example([("accept", "a"), ("outside", "b"), ("accept", "b")])  # a list the index did not make
def test_a_message_index_carried_from_turn_to_turn_decides_as_a_scan(steps: list[tuple[str, str]]) -> None:
    """Issue 15: accepting and placing by the lesson's `MessageIndex` (which follows the list each
    step returns, and is rebuilt for a list it did not make) gives the same lists and the same
    refusals as scanning."""
    from server.core.classroom.turns import MessageIndex, accept_learner_message

    index = MessageIndex()
    scanned: list[dict] = []
    indexed: list[dict] = []
    for kind, mid in steps:
        if kind == "outside":  # a list made elsewhere (a wake's steers, an edit): rebuilt from it
            scanned = indexed = [*indexed, {"id": mid, "role": "user", "parts": []}]
            continue
        if kind == "reply":
            reply = {"id": f"r{mid}", "role": "assistant", "parts": [{"type": "text", "text": mid}]}
            scanned, indexed = upsert_message(scanned, reply), upsert_message(indexed, reply, index)
        else:
            outcomes = []
            for messages, given_index in ((scanned, None), (indexed, index)):
                try:
                    got = accept_learner_message(
                        messages, user(mid, mid), regenerate=kind == "regenerate", index=given_index
                    )
                    outcomes.append(got)
                except Refused as exc:
                    outcomes.append(exc.code)
            assert outcomes[0] == outcomes[1]
            if isinstance(outcomes[0], list):
                scanned, indexed = outcomes  # type: ignore[assignment]
        assert scanned == indexed
