"""Issue 11, item 2 for lessons: a lesson whose teacher prose was edited, regenerated or removed
replaces what it gave the graph, as an edited notes file does; a failing re-read retires nothing;
and a chain simplification dropped because a now-retired chain covered it comes back (the pipeline
in-process on real ledgers, scripted model; see `graph_pipeline`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.core.contracts.graph import ChainLine, RunLine
from server.core.library.notes import content_fingerprint
from tests.flows.graph_pipeline import Pipeline, invariants, lesson_pairs, retired_jobs
from tests.flows.library.test_graph_replace import block

SORT_NOTE = "# Arrays\n# Heapsort\n"


def names(pipe: Pipeline) -> list[str]:
    return sorted(n.name for n in pipe.graph.nodes().values())


def prose(*names: str) -> str:
    return "".join(f"# {n}\n" for n in names) + "The teacher explains each of these in plain words."


def test_an_edited_teacher_message_replaces_what_the_lesson_said(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        pipe.lesson("c1", [("m1", prose("Binary heap", "Heap order")), ("m2", prose("Priority queue"))])
        assert await pipe.flush("c1") == "started"
        assert names(pipe) == ["Binary heap", "Heap order", "Priority queue"]
        heap_id = next(n.id for n in pipe.graph.nodes().values() if n.name == "Binary heap")
        # m2 edited: the job that read m1 and m2 no longer stands; both are read again
        pipe.lesson("c1", [("m1", prose("Binary heap", "Heap order")), ("m2", prose("Heapsort"))])
        assert pipe.library.coverage("c1")["uncoveredMessages"] == 2
        assert names(pipe) == ["Binary heap", "Heap order", "Priority queue"]  # until the re-read merged
        assert await pipe.flush("c1") == "started"
        assert names(pipe) == ["Binary heap", "Heap order", "Heapsort"]  # not 6: nothing twice
        assert next(n.id for n in pipe.graph.nodes().values() if n.name == "Binary heap") == heap_id
        assert len(retired_jobs(pipe)) == 1
        assert pipe.library.coverage("c1")["uncoveredMessages"] == 0
        invariants(pipe, set(), {}, {"c1": lesson_pairs(pipe, "c1")})
        runs = len(pipe.ledger("sessions", RunLine))
        assert await pipe.flush("c1") == "covered"  # a true no-op now
        assert len(pipe.ledger("sessions", RunLine)) == runs

    asyncio.run(scenario())


def test_a_regenerated_reply_replaces_the_reply_it_replaced(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        pipe.lesson("c1", [("m1", prose("Binary heap", "Sift-down cost"))])
        await pipe.flush("c1")
        pipe.lesson("c1", [("m1b", prose("Binary heap", "Sift-up cost"))])  # a new reply, a new id
        await pipe.flush("c1")
        assert names(pipe) == ["Binary heap", "Sift-up cost"]
        invariants(pipe, set(), {}, {"c1": lesson_pairs(pipe, "c1")})

    asyncio.run(scenario())


def test_a_removed_message_retires_its_job_without_a_model_call(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        pipe.lesson("c1", [("m1", prose("Binary heap"))])
        await pipe.flush("c1")
        pipe.lesson("c1", [("m1", prose("Binary heap")), ("m2", prose("Priority queue", "Scheduling"))])
        await pipe.flush("c1")
        assert names(pipe) == ["Binary heap", "Priority queue", "Scheduling"]
        runs = len(pipe.ledger("sessions", RunLine))
        pipe.lesson("c1", [("m1", prose("Binary heap"))])
        assert await pipe.flush("c1") == "covered"  # nothing to read; the stale job still retires
        assert names(pipe) == ["Binary heap"]
        assert len(pipe.ledger("sessions", RunLine)) == runs  # no job ran, no model was asked
        invariants(pipe, set(), {}, {"c1": lesson_pairs(pipe, "c1")})

    asyncio.run(scenario())


def test_a_failing_re_read_retires_nothing(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        pipe.lesson("c1", [("m1", prose("Binary heap")), ("m2", prose("Priority queue"))])
        await pipe.flush("c1")
        before = names(pipe)
        old = lesson_pairs(pipe, "c1")
        pipe.lesson("c1", [("m1", prose("Binary heap")), ("m2", prose("FAIL on purpose"))])
        await pipe.flush("c1")
        assert names(pipe) == before
        assert retired_jobs(pipe) == set()
        invariants(pipe, set(), {}, {"c1": old | lesson_pairs(pipe, "c1")})

    asyncio.run(scenario())


def test_a_failed_re_read_counts_for_nothing_and_an_edit_back_completes_it(tmp_path: Path) -> None:
    """m2 is edited to prose the model fails on and a long m3 is added: the re-read's m1 and m3
    jobs merge pending, m2's fails, and the graph shows the old lesson alone. The learner edits m2
    back: nothing is left to read, so the flush completes the version without a model call,
    accepting m3's job and retiring the m1 job that would say m1 twice."""
    pipe = Pipeline(tmp_path / "graph")
    m1, m2 = ("m1", prose("Binary heap")), ("m2", prose("Priority queue"))
    m3 = ("m3", block("Heapsort", "In-place sorting"))  # ~500 tokens: a batch of its own

    async def scenario() -> None:
        pipe.lesson("c1", [m1, m2])
        await pipe.flush("c1")
        before, old = names(pipe), lesson_pairs(pipe, "c1")
        pipe.lesson("c1", [m1, ("m2", block("FAIL on purpose")), m3])
        await pipe.flush("c1")
        assert [r["phase"] for r in pipe.extraction.activity()[:3]].count("error") == 1
        assert len(pipe.graph.pending()) == 2  # m1's and m3's jobs merged, pending
        assert names(pipe) == before  # only the old lesson shows
        invariants(pipe, set(), {}, {"c1": old})
        pipe.lesson("c1", [m1, m2, m3])  # edited back
        runs = len(pipe.ledger("sessions", RunLine))
        assert await pipe.flush("c1") == "covered"
        await pipe.extraction.wait("c1")
        assert len(pipe.ledger("sessions", RunLine)) == runs  # no model call
        assert names(pipe) == sorted([*before, "Heapsort", "In-place sorting"])
        assert pipe.graph.pending() == set() and len(retired_jobs(pipe)) == 1  # m1's pending twin
        invariants(pipe, set(), {}, {"c1": lesson_pairs(pipe, "c1")})

    asyncio.run(scenario())


def test_a_chain_simplified_away_comes_back_when_what_covered_it_is_retired(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        pipe.lesson("c1", [("m1", prose("Arrays", "Binary heap", "Heapsort"))])
        await pipe.flush("c1")  # Arrays => Binary heap => Heapsort
        await pipe.import_note("vault/sort.md", SORT_NOTE)  # Arrays => Heapsort
        by_name = {n.name: n.id for n in pipe.graph.nodes().values()}
        shortcut = ([by_name["Arrays"]], by_name["Heapsort"])
        derived = {(tuple(c.premises), c.conclusion) for c in pipe.graph.chains().values()}
        assert (tuple(shortcut[0]), shortcut[1]) not in derived  # redundant: simplified away
        # the lesson's reply is rewritten: its chains go, and the note's chain is not redundant any more
        pipe.lesson("c1", [("m1", prose("Merge sort"))])
        await pipe.flush("c1")
        assert names(pipe) == ["Arrays", "Heapsort", "Merge sort"]
        derived = {(tuple(c.premises), c.conclusion) for c in pipe.graph.chains().values()}
        assert (tuple(shortcut[0]), shortcut[1]) in derived
        assert any(line.conclusion == shortcut[1] for line in pipe.ledger("chains", ChainLine))
        invariants(
            pipe, set(), {"vault/sort.md": {content_fingerprint(SORT_NOTE)}}, {"c1": lesson_pairs(pipe, "c1")}
        )

    asyncio.run(scenario())


def test_idle_flushes_survive_a_restart_and_a_deleted_lesson_drops_its_timer(tmp_path: Path) -> None:
    """Timers live in memory: at startup every lesson with uncovered prose is re-armed, due
    `lessonIdleSeconds` after its last update; deleting a lesson cancels its timer."""
    pipe = Pipeline(tmp_path / "graph")
    pipe.library.idle_delay_s = 3600.0
    now = 1_767_225_600.0 + 3_000.0  # 2026-01-01T00:50:00Z: the lessons were updated 50 minutes ago
    pipe.library.wall_clock = lambda: now

    async def scenario() -> None:
        pipe.lesson("c1", [("m1", prose("Binary heap"))])
        pipe.lesson("c2", [("m1", prose("Priority queue"))])
        pipe.lesson("c3", [])  # no teacher prose: nothing to arm
        assert pipe.library.resume_pending() == 2
        pending = {p["source"]: p for p in pipe.library.pending()}
        assert set(pending) == {"c1", "c2"}
        assert pending["c1"]["flushAt"] == "2026-01-01T01:00:00Z"  # updatedAt + the idle delay
        pipe.chats.delete("c2")
        pipe.library.lesson_deleted("c2")
        assert [p["source"] for p in pipe.library.pending()] == ["c1"]
        pipe.library.shutdown()
        pipe.library.idle_delay_s = 0.0  # overdue: flushed at once
        assert pipe.library.resume_pending() == 1
        for _ in range(50):
            await asyncio.sleep(0.01)
            if pipe.extraction.tasks.get("c1"):
                break
        await pipe.extraction.wait("c1")
        assert names(pipe) == ["Binary heap"]
        assert pipe.library.pending() == []

    asyncio.run(scenario())
