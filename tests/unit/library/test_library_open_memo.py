"""The Library's per-turn coverage check diffs only what is new (issue 15): whatever happens to a
lesson (messages added, edited, removed, coverage lines added by a merge or retired), the
uncovered views and their tokens equal a fresh diff of the whole transcript."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from server.core.contracts.chat import ChatRecord, ModelRef
from server.core.contracts.graph import CoverageLine
from server.core.contracts.models import Settings
from server.core.library.coverage import message_views, uncovered
from server.core.library.graph import covered_by, version_jobs
from server.services.library.library import LibraryService
from tests.fakes import FakeChatStore, FakeIntakeStore, FakeSettingsStore
from tests.unit.library.test_coverage_and_notes import PROBE_DONE


class Graph:
    """The graph port as the check reads it: the lesson's coverage lines, the very same list
    object until a merge or a retirement replaces it (as the graph store's cache does)."""

    def __init__(self) -> None:
        self.lines: list[CoverageLine] = []

    def coverage(self, source: str) -> list[CoverageLine]:
        return self.lines


def library_of(graph: Graph) -> LibraryService:
    """A Library over `graph` alone (no extraction runs here; the lessons are handed in)."""
    return LibraryService(
        graph,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        FakeSettingsStore(Settings()),
        chats=FakeChatStore(),
        intake=FakeIntakeStore(),
    )


def fresh(messages: list[dict[str, Any]], lines: list[CoverageLine]) -> list[Any]:
    views = message_views(messages)
    return uncovered(
        views, covered_by(lines, version_jobs(lines, {v.message_id: v.fingerprint for v in views}))
    )


def record(messages: list[dict[str, Any]]) -> ChatRecord:
    """A record holding these very message objects (as the chat store's cached records do;
    validating would copy them)."""
    at = "2026-01-01T00:00:00Z"
    ref = ModelRef(provider="openai-compatible", model="m")
    empty = ChatRecord(id="c1", title="t", created_at=at, updated_at=at, model=ref, messages=[])
    return empty.model_copy(update={"messages": messages})


def teacher(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "assistant", "parts": [{"type": "text", "text": text}]}


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 3)),
        st.tuples(st.just("edit"), st.integers(0, 10**6)),
        st.tuples(st.just("cut"), st.integers(1, 3)),
        st.tuples(st.just("readd"), st.just(0)),
        st.tuples(st.just("merge"), st.integers(1, 4)),
        st.tuples(st.just("retire"), st.integers(0, 10**6)),
        st.tuples(st.just("stale"), st.integers(0, 10**6)),
        st.tuples(st.just("same"), st.just(0)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(STEPS)
@example([("add", 2), ("merge", 2), ("stale", 0)])  # a coverage list as long, one line changed
@example([("add", 1), ("merge", 1), ("cut", 1), ("readd", 0)])  # a covered message back again
def test_the_incremental_check_equals_a_fresh_diff(steps: list[tuple[str, int]]) -> None:
    graph = Graph()
    library = library_of(graph)
    messages: list[dict[str, Any]] = [
        {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Teach me heaps"}]},
        {"id": "a0", "role": "assistant", "parts": [PROBE_DONE]},
    ]
    made = 0
    removed: list[dict[str, Any]] = []
    for kind, n in steps:
        messages = list(messages)  # records are immutable values: each change is a new list
        if kind == "add":
            for _ in range(n):
                made += 1
                messages.append(teacher(f"m{made}", f"Heaps, part {made}."))
        elif kind == "edit" and len(messages) > 2:
            at = 2 + n % (len(messages) - 2)
            messages[at] = teacher(messages[at]["id"], f"Edited {n}.")
        elif kind == "cut":
            removed = messages[max(2, len(messages) - n) :] + removed
            messages = messages[: max(2, len(messages) - n)]
        elif kind == "readd" and removed:  # a cut message back, the same id and prose
            messages.append(dict(removed.pop(0)))
        elif kind == "merge":  # a run covers the oldest open views: new coverage lines, a new list
            job = f"j{len(graph.lines)}"
            graph.lines = [
                *graph.lines,
                *(
                    CoverageLine(
                        source="c1", message=v.message_id, fingerprint=v.fingerprint, job=job, at="t"
                    )
                    for v in fresh(messages, graph.lines)[:n]
                ),
            ]
        elif kind == "retire" and graph.lines:
            job = graph.lines[n % len(graph.lines)].job
            graph.lines = [line for line in graph.lines if line.job != job]
        elif kind == "stale" and graph.lines:  # as many lines, one now of an older version
            at, lines = n % len(graph.lines), graph.lines
            graph.lines = [*lines[:at], lines[at].model_copy(update={"fingerprint": "old"}), *lines[at + 1 :]]
        views, tokens = library.lessons._open(record(messages))
        expected = fresh(messages, graph.lines)
        assert views == expected and tokens == sum(v.tokens for v in expected)


def test_a_turn_that_adds_a_message_diffs_only_the_new_view(monkeypatch: Any) -> None:
    library = library_of(Graph())
    messages = [
        {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Hi"}]},
        {"id": "a0", "role": "assistant", "parts": [PROBE_DONE]},
        *(teacher(f"m{i}", f"Prose {i}.") for i in range(200)),
    ]
    first, _ = library.lessons._open(record(messages))
    diffed: list[int] = []

    def counting(views: Any, covered: Any) -> list[Any]:
        views = list(views)
        diffed.append(len(views))
        return uncovered(views, covered)

    monkeypatch.setattr("server.services.library.lessons.uncovered", counting)
    views, tokens = library.lessons._open(record([*messages, teacher("m-new", "New prose.")]))
    assert diffed == [1] and views[:-1] == first and views[-1].message_id == "m-new"
    assert tokens == sum(v.tokens for v in views)
