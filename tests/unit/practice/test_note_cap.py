"""The learner's practice note is trimmed and capped, never refused (seed §7, issue 30 item 5):
`CreateSet.note` is `cap_note` of what was sent, whatever its length or whitespace."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.core.contracts.practice import MAX_NOTE, CreateSet, cap_note

NOTES = st.text(
    alphabet=st.one_of(st.characters(), st.sampled_from([" ", "\n", "\t", "\u3000"])), max_size=3 * MAX_NOTE
)


@given(NOTES)
def test_any_note_is_accepted_trimmed_and_capped(note: str) -> None:
    body = CreateSet.model_validate({"nodeIds": ["n_1"], "note": note})
    kept = body.note
    assert kept == cap_note(note)
    assert kept is not None and len(kept) <= MAX_NOTE
    assert kept == kept.strip()  # no whitespace at either end, the cut's included
    assert note.strip().startswith(kept)  # the note's beginning, never rewritten
    if len(note.strip()) <= MAX_NOTE:
        assert kept == note.strip()  # a note within the cap is only trimmed


def test_a_long_note_keeps_its_first_2000_characters() -> None:
    note = "  " + "a" * 1_500 + " " + "b" * 3_000 + "\n"
    kept = CreateSet.model_validate({"nodeIds": ["n_1"], "note": note}).note
    assert kept == ("a" * 1_500 + " " + "b" * 3_000)[:MAX_NOTE] and len(kept) == MAX_NOTE
    cut_at_a_space = "x" * (MAX_NOTE - 1) + " " + "y" * 10
    assert cap_note(cut_at_a_space) == "x" * (MAX_NOTE - 1)  # the cut's trailing space dropped


def test_no_note_stays_none() -> None:
    assert CreateSet.model_validate({"nodeIds": ["n_1"]}).note is None
