"""A streamed chunk is JSON-encoded once on its way to the browser (issue 27), and the bytes the
browser reads are the very bytes the old path wrote: the adapter's `chunk.encode(6)`, decoded,
and encoded again (`orjson.dumps(orjson.loads(...))`)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.ui.vercel_ai import response_types as rt

from server.agent.classroom.lesson import SDK_VERSION, chunk_data
from server.services.classroom.turn_stream import sse_event

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()  # past 64 bits too: the old path read them back as floats
    | st.floats()  # inf and NaN too: written as null
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
"""Any JSON-shaped value a tool's output or a chunk's data may hold."""


def made(cls: type[rt.BaseChunk]) -> Any:
    """`cls` called with exactly the fields given (hypothesis infers none of the others)."""
    return lambda **fields: cls(**fields)


CHUNKS = st.one_of(
    st.builds(made(rt.TextDeltaChunk), id=st.text(max_size=8), delta=st.text()),
    st.builds(made(rt.ReasoningDeltaChunk), id=st.text(max_size=8), delta=st.text()),
    st.builds(
        made(rt.ToolInputStartChunk),
        tool_call_id=st.text(max_size=8),
        tool_name=st.text(max_size=12),
        provider_metadata=st.none() | st.just({"openai": {"itemId": "x"}}),
    ),
    st.builds(made(rt.ToolInputDeltaChunk), tool_call_id=st.text(max_size=8), input_text_delta=st.text()),
    st.builds(
        made(rt.ToolInputAvailableChunk),
        tool_call_id=st.text(max_size=8),
        tool_name=st.text(max_size=12),
        input=JSON,
    ),
    st.builds(made(rt.ToolOutputAvailableChunk), tool_call_id=st.text(max_size=8), output=JSON),
    st.builds(made(rt.ToolOutputErrorChunk), tool_call_id=st.text(max_size=8), error_text=st.text()),
    st.builds(made(rt.MessageMetadataChunk), message_metadata=JSON),
    st.builds(made(rt.StartChunk), message_id=st.none() | st.text(max_size=8), message_metadata=JSON),
    st.builds(made(rt.FinishChunk), finish_reason=st.sampled_from(["stop", "length", "tool-calls", "error"])),
    st.builds(made(rt.ErrorChunk), error_text=st.text()),
)


def old_wire(chunk: rt.BaseChunk) -> bytes:
    """What the browser read before: encoded by the adapter, decoded, encoded again."""
    return b"data: " + orjson.dumps(orjson.loads(chunk.encode(SDK_VERSION))) + b"\n\n"


@given(CHUNKS)
def test_the_wire_is_byte_for_byte_what_the_double_encode_wrote(chunk: rt.BaseChunk) -> None:
    try:
        before = old_wire(chunk)
    except Exception:  # a lone surrogate: the old path had its own repair, tested below
        return
    data = chunk_data(chunk)
    assert data is not None
    folded, line = sse_event(data)
    assert line == before
    assert orjson.loads(line[6:]) == folded  # what is folded and saved is what the browser reads


def test_the_terminator_is_not_a_chunk() -> None:
    assert chunk_data(rt.DoneChunk()) is None


def test_one_encode_per_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """No JSON encode before the turn's own, and one there: the adapter's chunk becomes a dict
    without being written (the pydantic encoder is not called at all)."""
    import pydantic_core

    calls: list[str] = []
    real = orjson.dumps

    def counting(value: Any, *args: Any, **kwargs: Any) -> bytes:
        calls.append("orjson")
        return real(value, *args, **kwargs)

    monkeypatch.setattr("server.services.classroom.turn_stream.orjson.dumps", counting)
    monkeypatch.setattr(pydantic_core, "to_json", lambda *a, **k: calls.append("pydantic") or b"null")
    for written in ("encode", "model_dump_json"):  # the adapter's own encode
        monkeypatch.setattr(
            rt.ToolOutputAvailableChunk, written, lambda *a, **k: calls.append("adapter") or "{}"
        )
    chunk = rt.ToolOutputAvailableChunk(tool_call_id="c1", output={"ok": True, "plan": {"nodes": [1, 2]}})
    data = chunk_data(chunk)
    assert data is not None and calls == []
    sse_event(data)
    assert calls == ["orjson"]


@pytest.mark.parametrize(
    ("chunk", "said"),
    [
        (rt.TextDeltaChunk(id="t", delta="a\udc80b"), {"type": "text-delta", "delta": "a\ufffdb", "id": "t"}),
        (
            rt.ToolInputAvailableChunk(
                tool_call_id="c", tool_name="quiz", input={"q": ["\ud800", {"a": "\udfff"}]}
            ),
            {
                "type": "tool-input-available",
                "toolCallId": "c",
                "toolName": "quiz",
                "input": {"q": ["\ufffd", {"a": "\ufffd"}]},
            },
        ),
    ],
)
def test_a_lone_surrogate_from_the_model_is_written_as_u_fffd(
    chunk: rt.BaseChunk, said: dict[str, Any]
) -> None:
    """Issue 26, item 3: no encoder writes a lone surrogate; the chunk streams and is saved with
    U+FFFD in its place (what the old path did after the adapter's encode failed)."""
    data = chunk_data(chunk)
    assert data is not None
    folded, line = sse_event(data)
    assert folded == said
    assert line == b"data: " + orjson.dumps(said) + b"\n\n"
