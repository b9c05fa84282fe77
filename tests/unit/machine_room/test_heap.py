"""The garbage-collector policy (server/services/machine_room/heap.py): what it freezes, and that a cycle that
died while frozen is reclaimed by a compaction and only then."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from server.services.machine_room import heap


class Node:
    """A tracked object that can sit in a reference cycle and be watched with a weakref."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> tuple[weakref.ref[Node], list[Node]]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a), [a, b]


@pytest.fixture
def policy() -> Iterator[None]:
    before = gc.get_threshold()
    heap.install()
    try:
        yield
    finally:
        heap.uninstall()
        gc.set_threshold(*before)


def test_nothing_happens_until_installed() -> None:
    heap.uninstall()
    frozen = gc.get_freeze_count()
    heap.survivors_settled()
    assert heap.compact(force=True) == 0
    assert gc.get_freeze_count() == frozen == 0
    assert not heap.installed()


def test_install_raises_the_young_threshold_and_freezes_what_lives(policy: None) -> None:
    assert gc.get_threshold()[0] == heap.GEN0_THRESHOLD
    assert gc.get_freeze_count() > 0
    assert heap.stats()["freezes"] == 1


def test_a_settled_structure_is_frozen_and_survives_collections(policy: None) -> None:
    keep = [Node() for _ in range(5_000)]  # tracked (a dict of ints alone would not be)
    before = gc.get_freeze_count()
    heap.survivors_settled()
    assert gc.get_freeze_count() >= before + len(keep)
    gc.collect()
    assert keep[4_999].other is None


def test_a_cycle_that_dies_frozen_waits_for_the_compaction(policy: None) -> None:
    watch, pair = cycle()
    heap.survivors_settled()  # the pair is frozen now
    del pair
    gc.collect()  # a full collection does not traverse the permanent generation
    assert watch() is not None
    found = heap.compact(force=True)
    assert watch() is None
    assert found >= 2
    assert heap.stats()["compactions"] == 1
    assert gc.get_freeze_count() > 0  # the survivors are frozen again


def test_acyclic_garbage_is_freed_at_once_even_frozen(policy: None) -> None:
    node = Node()
    watch = weakref.ref(node)
    heap.survivors_settled()
    del node
    assert watch() is None  # reference counting does not care about generations


def test_compaction_waits_until_the_frozen_set_grew_by_a_quarter(policy: None) -> None:
    watch, pair = cycle()
    heap.survivors_settled()
    del pair
    assert heap.compact() == 0  # grown by two objects: not worth a full pause
    assert watch() is not None
    grown = [[i] for i in range(int(gc.get_freeze_count() * (heap.GROWTH - 1)) + 1_000)]
    heap.survivors_settled()
    assert heap.compact() >= 2
    assert watch() is None
    del grown
