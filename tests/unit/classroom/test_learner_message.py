"""Issue 26, item 1: the learner message's one shape (`LearnerMessage`), and what the model reads of
a user message an older build let other parts into."""

from __future__ import annotations

import base64
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.agent.classroom.history import ModelHistory
from server.agent.classroom.ui_messages import learner_parts_for_model, message_problem, usable_for_model
from server.core.contracts.chat import LEARNER_IMAGE_TYPES, learner_problem, plain_problem

FILES = {
    "image/png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 8,
    "image/jpeg": b"\xff\xd8\xff\xe0" + b"\x00" * 8,
    "image/gif": b"GIF89a" + b"\x00" * 8,
    "image/webp": b"RIFF\x10\x00\x00\x00WEBPVP8 ",
}


def image(media_type: str, data: bytes | None = None, url_type: str | None = None) -> dict:
    payload = base64.b64encode(FILES[media_type] if data is None else data).decode()
    return {"type": "file", "mediaType": media_type, "url": f"data:{url_type or media_type};base64,{payload}"}


def message(*parts: dict, **extra: object) -> dict:
    return {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi"}, *parts], **extra}


@pytest.mark.parametrize("media_type", sorted(LEARNER_IMAGE_TYPES))
def test_text_and_each_readable_image_are_a_learner_message(media_type: str) -> None:
    sent = message(image(media_type))
    assert learner_problem(sent) is None
    assert message_problem(sent) is None, "every learner message is one the agent runs on"
    assert learner_parts_for_model(sent) is sent


@pytest.mark.parametrize(
    ("part", "words"),
    [
        ({"type": "reasoning", "text": "x"}, "part 1 (reasoning) is not something"),
        ({"type": "step-start"}, "part 1 (step-start) is not something"),
        ({"type": "data-x", "data": {}}, "part 1 (data-x) is not something"),
        (
            {"type": "tool-quiz", "toolCallId": "t", "state": "input-available", "input": {}},
            "part 1 (tool-quiz)",
        ),
        (image("image/png", url_type="image/jpeg"), "base64 data URL starting 'data:image/png;base64,'"),
        (image("image/png", data=b"GIF89a"), "is not a image/png file"),
        (image("image/webp", data=b"RIFF\x00\x00\x00\x00AVI "), "is not a image/webp file"),
        (
            {"type": "file", "mediaType": "image/svg+xml", "url": "data:image/svg+xml;base64,PHN2Zz4="},
            "not one",
        ),
        ({"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,@@"}, "not valid base64"),
        ({"type": "file", "mediaType": "image/png", "url": "file:///etc/passwd"}, "base64 data URL"),
        ({"type": "text", "text": "a\udc80"}, "lone surrogate (\\udc80)"),
        ({"type": "text", "text": "x", "providerMetadata": {}}, "providerMetadata: is not a field"),
        ({"type": "text", "text": 5}, "part 1 (text): text: should be a string"),
        ("text", "part 1 is not an object"),
    ],
)
def test_anything_else_is_named_by_index_and_type(part: object, words: str) -> None:
    problem = learner_problem(message(part))  # type: ignore[arg-type]
    assert problem is not None and words in problem, problem


def test_message_fields_role_and_text_are_checked() -> None:
    assert "metadata: is not a field" in str(learner_problem(message(metadata={"steer": True})))
    assert "role: Input should be 'user'" in str(learner_problem({**message(), "role": "assistant"}))
    assert "no text" in str(learner_problem({"id": "u", "role": "user", "parts": [image("image/png")]}))
    assert "limit is 100,000" in str(
        learner_problem({"id": "u", "role": "user", "parts": [{"type": "text", "text": "x" * 100_001}]})
    )
    odd_id = {**message(), "id": "\ud800"}
    assert "id: is not text (it holds a lone surrogate)" in str(learner_problem(odd_id))


@given(st.dictionaries(st.sampled_from(["type", "text", "mediaType", "url", "x"]), st.integers() | st.text()))
def test_a_problem_never_names_a_python_class(part: dict) -> None:
    problem = learner_problem(message(part)) or ""
    assert "<class" not in problem and "instance of" not in problem and "Learner" not in problem
    assert plain_problem(
        {"type": "model_type", "loc": ("x",), "msg": "Input should be ... instance of Foo"}
    ) == ("x: should be an object")


def test_the_model_reads_of_a_user_message_only_what_a_learner_may_send(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="lh.turn")
    steer = {
        "id": "s1",
        "role": "user",
        "metadata": {"steer": True},
        "parts": [{"type": "text", "text": "[job done]"}, {"type": "data-subagent-artifact", "data": {}}],
    }
    poisoned = message(
        {"type": "reasoning", "text": "secret"},
        {"type": "tool-quiz", "toolCallId": "t", "state": "input-available", "input": {}},
    )
    only_odd = {"id": "u9", "role": "user", "parts": [{"type": "step-start"}]}
    plain = message()
    usable = usable_for_model([steer, poisoned, only_odd, plain])
    assert [m["id"] for m in usable] == ["s1", "u1", "u1"]
    assert usable[0]["parts"] == [{"type": "text", "text": "[job done]"}]
    assert usable[1]["parts"] == [{"type": "text", "text": "Hi"}]
    assert usable[2] is plain, "a message with nothing left out is the very object"
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "part 1 (reasoning), part 2 (tool-quiz)" in said and "u9 skipped" in said
    assert "part 1 (data-subagent-artifact)" not in said, "a steer's artifact is left out quietly"
    assert poisoned["parts"][1]["type"] == "reasoning", "the record's message is not changed"


def test_a_message_the_adapter_cannot_load_is_loaded_without_the_failing_parts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The net under the history: a user message holding a part pydantic-ai's adapter raises for
    (it reached the history without `usable_for_model`) is loaded without it, never raising."""
    caplog.set_level(logging.WARNING, logger="lh.turn")
    held = message({"type": "reasoning", "text": "secret"})
    loaded = ModelHistory().convert([held])
    assert "Hi" in str(loaded) and "secret" not in str(loaded)
    assert any("part 1 (reasoning)" in r.getMessage() for r in caplog.records)
