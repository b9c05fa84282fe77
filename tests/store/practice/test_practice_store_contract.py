"""The PracticeStore contract: the same assertions against `FilePracticeStore` (real files) and
`tests.fakes.practice.FakePracticeStore`, so the fake cannot drift from the adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.contracts.practice import PracticeChain, PracticeParams, PracticeProposition, ProblemSet
from server.core.ports import PracticeStore
from server.store.practice.sets import FilePracticeStore
from tests.fakes.practice import FakePracticeStore


@pytest.fixture(params=["file", "fake"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> PracticeStore:
    return FilePracticeStore(tmp_path / "practice") if request.param == "file" else FakePracticeStore()


def problem_set(set_id: str, title: str = "Heaps") -> ProblemSet:
    return ProblemSet(
        id=set_id,
        title=title,
        created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-01T00:00:00Z",
        params=PracticeParams(),
        node_ids=["n_1"],
        propositions=[PracticeProposition(id="n_1", name="Heap", statement="A heap is a tree.")],
        chains=[PracticeChain(id="single_n_1", conclusion="n_1")],
    )


def test_a_set_round_trips_and_is_a_value(store: PracticeStore) -> None:
    assert store.get("ps_0000000a") is None and store.list() == []
    store.save(problem_set("ps_0000000a"))
    got = store.get("ps_0000000a")
    assert got == problem_set("ps_0000000a")
    assert got is not None
    got.title = "changed in the caller's hands"
    assert store.get("ps_0000000a") == problem_set("ps_0000000a")


def test_list_is_every_set_by_id(store: PracticeStore) -> None:
    for set_id in ("ps_0000000c", "ps_0000000a", "ps_0000000b"):
        store.save(problem_set(set_id))
    assert [s.id for s in store.list()] == ["ps_0000000a", "ps_0000000b", "ps_0000000c"]


def test_update_writes_what_change_returns(store: PracticeStore) -> None:
    assert store.update("ps_0000000a", lambda s: s) is None  # absent: nothing written
    store.save(problem_set("ps_0000000a"))
    assert store.update("ps_0000000a", lambda s: None) is None  # no change: no write
    renamed = store.update("ps_0000000a", lambda s: s.model_copy(update={"title": "Sorting"}))
    assert renamed is not None and renamed.title == "Sorting"
    assert store.get("ps_0000000a") == problem_set("ps_0000000a", "Sorting")


def test_delete_and_bad_ids(store: PracticeStore) -> None:
    store.save(problem_set("ps_0000000a"))
    assert store.delete("ps_0000000a") is True and store.delete("ps_0000000a") is False
    assert store.get("ps_0000000a") is None
    assert store.get("../etc/passwd") is None and store.delete("../etc/passwd") is False
    with pytest.raises(ValueError):
        store.save(problem_set("../escape"))
