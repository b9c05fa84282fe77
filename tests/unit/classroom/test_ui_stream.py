"""The server's fold of UI message stream chunks equals what useChat shows (seed §5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.classroom.ui_stream import AssistantMessageFold


def fold(chunks: list[dict]) -> dict | None:
    f = AssistantMessageFold("fallback")
    for chunk in chunks:
        f.add(chunk)
    return f.message()


def test_text_reply_folds_into_one_done_text_part() -> None:
    message = fold(
        [
            {"type": "start", "messageId": "m1"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hello "},
            {"type": "text-delta", "id": "t", "delta": "$x^2$"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ]
    )
    assert message == {
        "id": "m1",
        "role": "assistant",
        "parts": [{"type": "step-start"}, {"type": "text", "text": "Hello $x^2$", "state": "done"}],
    }


def test_aborted_text_is_kept_as_it_stood() -> None:
    message = fold(
        [
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "half a sent"},
        ]
    )
    assert message is not None
    assert message["id"] == "fallback"
    assert message["parts"] == [{"type": "text", "text": "half a sent", "state": "done"}]


@pytest.mark.parametrize(
    "chunks",
    [
        pytest.param([], id="nothing"),
        pytest.param([{"type": "start"}, {"type": "start-step"}], id="only-preamble"),
        pytest.param([{"type": "start"}, {"type": "error", "errorText": "boom"}], id="error-before-content"),
    ],
)
def test_no_content_means_nothing_to_save(chunks: list[dict]) -> None:
    assert fold(chunks) is None


def test_tool_call_lifecycle() -> None:
    message = fold(
        [
            {"type": "start", "messageId": "m"},
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "quiz"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"q": 1'},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "}"},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "quiz", "input": {"q": 1}},
            {"type": "tool-output-available", "toolCallId": "c1", "output": {"ok": True}},
        ]
    )
    assert message is not None
    assert message["parts"] == [
        {
            "type": "tool-quiz",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"q": 1},
            "output": {"ok": True},
        }
    ]


def test_half_streamed_tool_input_is_dropped_unless_parseable() -> None:
    broken = fold(
        [
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "x"},
            {"type": "tool-input-start", "toolCallId": "c", "toolName": "quiz"},
            {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"q": '},
        ]
    )
    assert broken is not None and [p["type"] for p in broken["parts"]] == ["text"]
    whole = fold(
        [
            {"type": "tool-input-start", "toolCallId": "c", "toolName": "quiz"},
            {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"q": 2}'},
        ]
    )
    assert whole is not None and whole["parts"][0]["input"] == {"q": 2}
    assert whole["parts"][0]["state"] == "input-available"


def test_metadata_merges_from_start_metadata_and_finish() -> None:
    message = fold(
        [
            {"type": "start", "messageMetadata": {"a": 1}},
            {"type": "text-start", "id": "t"},
            {"type": "message-metadata", "messageMetadata": {"b": 2}},
            {"type": "finish", "messageMetadata": {"a": 3}},
        ]
    )
    assert message is not None and message["metadata"] == {"a": 3, "b": 2}


def test_unknown_and_malformed_chunks_are_ignored() -> None:
    message = fold(
        [
            {"type": "text-start", "id": "t"},
            {"no": "type"},
            {"type": "future-chunk"},
            {"type": "text-delta", "id": "other", "delta": "lost"},
            {"type": "text-delta", "id": "t", "delta": "kept"},
        ]
    )
    assert message is not None and message["parts"][0]["text"] == "kept"


@given(st.lists(st.text(max_size=20), max_size=30))
def test_text_deltas_concatenate_in_order(deltas: list[str]) -> None:
    chunks = (
        [{"type": "text-start", "id": "t"}]
        + [{"type": "text-delta", "id": "t", "delta": d} for d in deltas]
        + [{"type": "text-end", "id": "t"}]
    )
    message = fold(chunks)
    assert message is not None
    assert message["parts"][0]["text"] == "".join(deltas)


def test_a_continuation_extends_the_message_it_continues() -> None:
    initial = {
        "id": "m1",
        "role": "assistant",
        "metadata": {"a": 1},
        "parts": [
            {"type": "tool-quiz", "toolCallId": "c1", "state": "output-available", "input": {}, "output": {}}
        ],
    }
    f = AssistantMessageFold("unused", initial=initial)
    for chunk in [
        {"type": "start", "messageId": "m1"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "next"},
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"again": True}},
    ]:
        f.add(chunk)
    message = f.message()
    assert message is not None and message["id"] == "m1" and len(message["parts"]) == 2
    assert message["parts"][0]["output"] == {"again": True}  # known calls are found, not duplicated
    assert initial["parts"][0]["output"] == {}  # the input is not mutated
