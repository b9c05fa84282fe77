"""Coverage views and batches; the notes front door's decoding and chunking (seed §6)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.library.coverage import MessageView, batch_uncovered, message_views, uncovered
from server.core.library.notes import NoteRefused, chunk_note, decode_note, source_id
from server.core.tokens import estimate_tokens
from tests.shared import NOTES

PROBE_DONE = {
    "type": "tool-probe_done",
    "toolCallId": "p",
    "state": "output-available",
    "input": {},
    "output": "ok",
}


def assistant(mid: str, *parts: dict) -> dict:
    return {"id": mid, "role": "assistant", "parts": list(parts)}


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def test_views_are_teacher_prose_only() -> None:
    messages = [
        {"id": "u1", "role": "user", "parts": [text("learner words")]},
        assistant(
            "a1",
            text("prober words"),
            PROBE_DONE,
            text("Teacher: limits."),
            {"type": "tool-quiz", "toolCallId": "q", "state": "input-available", "input": {"question": "?"}},
            {"type": "reasoning", "text": "thinking"},
        ),
        assistant("a2", text("More teaching."), text("  "), text("Second paragraph.")),
    ]
    views = message_views(messages)
    assert [(v.message_id, v.text) for v in views] == [
        ("a1", "Teacher: limits."),
        ("a2", "More teaching.\n\nSecond paragraph."),
    ]
    assert message_views([*messages[:1], assistant("a0", text("prober only"))]) == []


def test_only_a_prose_edit_reopens_a_message() -> None:
    messages = [assistant("a1", PROBE_DONE, text("Teach."))]
    [view] = message_views(messages)
    assert uncovered([view], {"a1": {view.fingerprint}}) == []
    messages[0]["parts"].append({"type": "tool-quiz", "toolCallId": "q", "state": "output-available"})
    assert uncovered(message_views(messages), {"a1": {view.fingerprint}}) == []
    messages[0]["parts"].append(text("Edited."))
    assert len(uncovered(message_views(messages), {"a1": {view.fingerprint}})) == 1


def view(mid: str, tokens: int) -> MessageView:
    return MessageView(mid, "x" * tokens * 4, mid, tokens)


def test_batches_are_greedy_oldest_first() -> None:
    batches = batch_uncovered([view("a", 300), view("b", 300), view("c", 900), view("d", 100)], 600)
    assert [[v.message_id for v in b] for b in batches] == [["a", "b"], ["c"], ["d"]]
    with pytest.raises(ValueError, match="floor"):
        batch_uncovered([], 499)


@given(st.lists(st.integers(1, 3000), max_size=30), st.integers(500, 5000))
def test_batches_keep_order_and_budget(sizes: list[int], budget: int) -> None:
    views = [view(str(i), s) for i, s in enumerate(sizes)]
    batches = batch_uncovered(views, budget)
    assert [v for b in batches for v in b] == views
    assert all(sum(v.tokens for v in b) <= budget or len(b) == 1 for b in batches)


@pytest.mark.parametrize(
    "name, words",
    [
        pytest.param("empty.md", "empty", id="empty"),
        pytest.param("whitespace-only.md", "empty", id="whitespace-only"),
        pytest.param("binary-disguised.md", "binary", id="binary"),
        pytest.param("latin1-invalid-utf8.md", "not valid UTF-8 at line 1, column 6", id="invalid-utf8"),
        pytest.param("one-huge-line.md", "2 MB", id="too-large"),
    ],
)
def test_edge_files_are_refused_with_a_reason(name: str, words: str) -> None:
    with pytest.raises(NoteRefused, match=words):
        decode_note(name, (NOTES / "edge" / name).read_bytes())


@pytest.mark.parametrize("name", ["broken-front-matter.md", "crlf.md", "unbalanced-math.md"])
def test_odd_but_textual_edge_files_import(name: str) -> None:
    note = decode_note(name, (NOTES / "edge" / name).read_bytes())
    assert note.strip() and "\r" not in note
    assert chunk_note(note, 500)


def test_wrong_suffix_is_refused() -> None:
    with pytest.raises(NoteRefused, match=r"\.md"):
        decode_note("photo.png", b"text")


def test_the_large_note_chunks_at_line_boundaries_under_budget() -> None:
    note = decode_note("big.md", (NOTES / "system-design-primer.large.en.md").read_bytes())
    chunks = chunk_note(note, 8192)
    assert len(chunks) >= 3
    assert all(c.tokens <= 8192 for c in chunks)
    assert "\n".join(c.text for c in chunks).split() == note.split()
    assert chunks[0].first_line == 1
    assert all(a.last_line < b.first_line for a, b in itertools.pairwise(chunks))


def test_a_line_longer_than_the_budget_is_split() -> None:
    chunks = chunk_note("short\n" + "y" * 5000 + "\nend", 500)
    assert all(c.tokens <= 500 for c in chunks)
    assert "".join(c.text.replace("\n", "") for c in chunks) == "short" + "y" * 5000 + "end"


def test_source_ids_are_deterministic_in_the_path() -> None:
    assert source_id("notes/a.md") == source_id("notes/a.md") != source_id("notes/b.md")
    assert source_id("notes/a.md").startswith("src_") and len(source_id("x")) == 20


def test_token_estimate() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
