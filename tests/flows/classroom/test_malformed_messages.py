"""A malformed learner message never breaks its lesson (issue 10, defect 1).

Before: a part `{"type": "text", "text": null}` (or 0, true, an object; or a tool part with a
numeric `toolCallId`) answered 500 after the write-ahead had saved it, and every later turn of the
lesson answered 500. Now the whole message is checked against the UIMessage schema before anything
is written, and a record that already holds such a message still continues.
"""

from __future__ import annotations

import json

import pytest

from tests.flows.conftest import Live, sse_chunks, turn_body


def body_with_parts(chat_id: str, parts: list) -> dict:
    return {"id": chat_id, "messages": [{"id": "u1", "role": "user", "parts": parts}]}


BAD_PARTS = [
    pytest.param({"type": "text", "text": None}, "part 1 (text): text", id="text-null"),
    pytest.param({"type": "text", "text": 0}, "part 1 (text): text", id="text-zero"),
    pytest.param({"type": "text", "text": True}, "part 1 (text): text", id="text-true"),
    pytest.param({"type": "text", "text": {"a": 1}}, "part 1 (text): text", id="text-object"),
    pytest.param(  # issue 26: a tool part is not something a learner sends at all
        {"type": "tool-quiz", "toolCallId": 7, "state": "input-available", "input": {}},
        "part 1 (tool-quiz) is not something a learner message may hold",
        id="numeric-tool-call-id",
    ),
    pytest.param(
        {"type": "text", "text": "x", "n": 2**64}, "part 1 (text): n: is not a field", id="integer-2^64"
    ),
]


@pytest.mark.parametrize(("bad", "words"), BAD_PARTS)
def test_a_malformed_part_is_refused_before_anything_is_written(live: Live, bad: dict, words: str) -> None:
    chat_id = live.new_chat()
    before = live.record(chat_id)
    response = live.client.post(
        "/api/chat", json=body_with_parts(chat_id, [{"type": "text", "text": "Teach me fractions."}, bad])
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "bad_request" and words in body["detail"], body
    assert "nothing was saved" in body["detail"]
    assert live.record(chat_id) == before
    # the lesson is not broken: the next, well-formed message is a normal turn
    ok = live.client.post("/api/chat", json=turn_body(chat_id, "Teach me fractions.", mid="u2"))
    assert ok.status_code == 200 and sse_chunks(ok.text)[-1] == "[DONE]"


def test_nan_inside_a_part_is_refused(live: Live) -> None:
    chat_id = live.new_chat()
    part = '{"type": "text", "text": "hi", "providerMetadata": {"x": {"y": NaN}}}'
    raw = f'{{"id": "{chat_id}", "messages": [{{"id": "u1", "role": "user", "parts": [{part}]}}]}}'
    response = live.client.post("/api/chat", content=raw, headers={"content-type": "application/json"})
    detail = response.json()["detail"]
    assert response.status_code == 400 and "part 0 (text): providerMetadata" in detail, response.text


def test_a_record_that_already_holds_an_invalid_message_still_continues(live: Live, caplog) -> None:
    chat_id = live.new_chat()
    path = live.data / "chats" / f"{chat_id}.json"
    record = json.loads(path.read_text())
    record["messages"] = [
        {
            "id": "old1",
            "role": "user",
            "parts": [{"type": "text", "text": "Hello"}, {"type": "text", "text": None}],
        },
        {
            "id": "old2",
            "role": "assistant",
            "parts": [{"type": "tool-quiz", "toolCallId": 3, "state": "weird"}],
        },
    ]
    path.write_text(json.dumps(record))
    response = live.client.post("/api/chat", json=turn_body(chat_id, "And now?", mid="u3"))
    assert response.status_code == 200, response.text
    assert sse_chunks(response.text)[-1] == "[DONE]"
    seen = live.script.seen[-1]
    texts = [getattr(p, "content", None) for m in seen for p in getattr(m, "parts", [])]
    assert "Hello" in texts and "And now?" in texts, "the valid parts reach the model"
    assert any("left out for the model" in r.message for r in caplog.records)
    assert any("skipped for the model" in r.message for r in caplog.records)
    saved = live.record(chat_id)
    assert [m["id"] for m in saved["messages"]][:3] == ["old1", "old2", "u3"], "the record keeps everything"
