"""The search index file (decision 0044): rows replaced per owner, a common word's window, the
long-prefix narrowing, and a file that is not an index made anew."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.machine_room.search import Entry, fts_query
from server.store.machine_room.search import RANK_ALL, SqliteSearchIndex


def _index(tmp_path: Path) -> SqliteSearchIndex:
    return SqliteSearchIndex(tmp_path / "search" / "index.sqlite", tmp_path)


def _message(chat: str, n: int, text: str) -> Entry:
    return Entry("message", chat, f"m{n}", chat, "", text)


def test_rows_are_replaced_and_dropped_per_owner(tmp_path: Path) -> None:
    index = _index(tmp_path)
    index.replace(
        "lesson",
        {"c1": ("s1", [Entry("lesson", "c1", "", "Heaps", "Heaps", ""), _message("c1", 1, "sift down")])},
    )
    assert [h[:3] for h in index.query('"sift"', 10)] == [("message", "c1", "m1")]
    index.replace(
        "lesson",
        {"c1": ("s2", [Entry("lesson", "c1", "", "Heaps", "Heaps", ""), _message("c1", 2, "bubble up")])},
    )
    assert index.query('"sift"', 10) == []
    assert [h[2] for h in index.query('"bubble"', 10)] == ["m2"]
    assert index.stamps("lesson") == {"c1": "s2"}
    index.replace("lesson", {}, drop=["c1"])
    assert index.query('"bubble"', 10) == [] and index.stamps("lesson") == {}
    assert index.counts()["message"] == 0


def test_a_word_in_more_rows_than_are_ranked_still_finds_titles_first(tmp_path: Path) -> None:
    index = _index(tmp_path)
    owners = {
        f"c{n}": ("s", [_message(f"c{n}", k, f"the derivative of case {n} {k}") for k in range(3)])
        for n in range(RANK_ALL // 3 + 400)
    }
    owners["c_title"] = ("s", [Entry("lesson", "c_title", "", "Derivative", "Derivative", "")])
    index.replace(
        "lesson", dict(sorted(owners.items(), key=lambda o: o[0] != "c_title"))
    )  # the title row oldest
    hits = index.query(fts_query("derivative") or "", 20)
    assert len(hits) == 20 and hits[0][:2] == ("lesson", "c_title")
    assert all("\x02derivative\x03" in h[4] for h in hits[1:])
    # a long last word matched as a prefix asks for the word itself when it is that common
    assert [h[:3] for h in index.query('"derivative"*', 20)] == [
        h[:3] for h in index.query('"derivative"', 20)
    ]
    assert index.query('"derivat"*', 5)  # a shorter prefix is one of the index's prefix lists


def test_a_file_that_is_not_an_index_is_made_anew(tmp_path: Path) -> None:
    path = tmp_path / "search" / "index.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"garbage" * 1000)
    index = _index(tmp_path)
    assert index.stamps("lesson") == {} and index.rebuilt and index.present()
    index.replace("practice", {"ps_1": ("s", [Entry("practice", "ps_1", "", "Heaps", "Heaps", "")])})
    index.close()
    again = _index(tmp_path)
    assert again.stamps("practice") == {"ps_1": "s"} and not again.rebuilt


@pytest.fixture(scope="module")
def common(tmp_path_factory: pytest.TempPathFactory) -> SqliteSearchIndex:
    """An index where a few words are in more rows than are ranked (the window path) and every
    row holds text that looks like query syntax, accents and other scripts."""
    index = _index(tmp_path_factory.mktemp("common"))
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda"
    owners: dict[str, tuple[str, Sequence[Entry]]] = {
        f"c{n}": ("s", [_message(f"c{n}", 0, f'{words} {n} "quoted" AND NEAR* (x) é ß 数学')])
        for n in range(4_100)
    }
    owners["c_t"] = ("s", [Entry("lesson", "c_t", "", "Alphabet", "Alphabet soup", "")])
    index.replace("lesson", owners)
    return index


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_any_text_searches_without_an_error(common: SqliteSearchIndex, text: str) -> None:
    match = fts_query(text)
    if match is not None:
        for hit in common.query(match, 20):
            assert hit[0] in ("lesson", "message")
