"""Practice (issue 13) in-process on real files: a graph built by the scripted extraction
pipeline, problem sets in `data/practice/`, scripted partitioner, generators and grader.

Covered: the partition law (duplicates and gaps go back to the model), the echo law, per-problem
failure isolation, one attempt and its instant reveal, grading (schema-refused scores retried),
abort by row shape, deletion while generating, resumption after a restart, and the refusals."""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.function import FunctionModel

from server.core.contracts.models import ResolvedModel
from server.core.contracts.practice import AnswerBody, CreateSet, PracticeParams, Problem, ProblemSet
from server.core.events import EventBus
from server.core.ports import GraphRows, PracticeStore
from server.core.refusals import Refused
from server.services.practice.sets import PracticeService
from server.store.practice.sets import FilePracticeStore
from tests.fakes.graph import FakeGraph
from tests.fakes.practice import FakePracticeStore
from tests.flows.graph_pipeline import Pipeline
from tests.scripts.practice import PracticeScript

HEAP = "# Binary heap\n# Heap order\n# Root is the minimum\n"
SORT = "# Heapsort\n"


class World:
    """Practice over the scripted extraction pipeline's graph and problem sets on files; a test
    where neither is under test passes the fakes (`store`, `graph`)."""

    def __init__(
        self, root: Path, store: PracticeStore | None = None, graph: GraphRows | None = None
    ) -> None:
        self.pipe = Pipeline(root / "graph")
        self.script = PracticeScript()
        self.events = EventBus()
        self.heard: list[str] = []
        self.events.subscribe(lambda e, d: self.heard.append(e))
        model = FunctionModel(function=self.script)
        resolved = ResolvedModel(
            provider="openai-compatible", model="scripted", base_url="http://127.0.0.1:9/v1"
        )

        self.slots: list[str] = []  # every slot a stage asked for

        async def model_for(slot: str) -> tuple[ResolvedModel, FunctionModel]:
            self.slots.append(slot)
            return resolved, model

        self.store = store if store is not None else FilePracticeStore(root / "practice")
        self.service = PracticeService(
            self.store,
            graph if graph is not None else self.pipe.graph,
            model_for,
            self.pipe.extraction.permits,
            self.events,
        )

    async def graph(self) -> list[str]:
        await self.pipe.import_note("vault/heap.md", HEAP)
        await self.pipe.import_note("vault/sort.md", SORT)
        return list(self.pipe.graph.nodes())

    async def settled(self, set_id: str) -> ProblemSet:
        row = self.service.tasks.get(f"{set_id}:partition")
        if row is not None:
            await asyncio.gather(row, return_exceptions=True)
        return self.service.get(set_id)


def run(root: Path, scenario: Any, **world: Any) -> None:
    asyncio.run(scenario(World(root, **world)))


def test_a_set_is_generated_frozen_and_answered_once(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        nodes = await w.graph()
        w.service.wall_clock = lambda: datetime(2026, 12, 1, 10, 0, tzinfo=UTC).timestamp()
        created = await w.service.create(CreateSet(node_ids=nodes, params=PracticeParams(rung=3, cue=2)))
        assert created.status == "partitioning"
        assert created.title == "Practice — 1 Dec 2026"  # no title given: dated by the wall clock
        # the world is frozen: 2 arguments of the heap note + Heapsort on its own
        assert [c.id.split("_")[0] for c in created.chains] == ["arg", "arg", "single"]
        assert {p.name for p in created.propositions} == {
            "Binary heap",
            "Heap order",
            "Root is the minimum",
            "Heapsort",
        }
        done = await w.settled(created.id)
        assert done.status == "ready" and len(done.problems) == 3
        assert all(p.status == "ready" and p.statement for p in done.problems)
        assert sorted(c for p in done.problems for c in p.chain_ids) == sorted(c.id for c in done.chains)
        # the levels reach the agents by name; the generator sees its target and the full set
        first_gen = next(p for p in w.script.prompts if "YOUR TARGET" in p)
        assert "LADDER RUNG 3 — Composition" in first_gen and "CUE DISTANCE 2 — Far context" in first_gen
        assert "THE FULL SET" in first_gen and "Heapsort" in first_gen
        # solution and rubric stay hidden until the answer
        view = done.view()
        assert all(p["solution"] is None and p["rubric"] is None for p in view["problems"])  # type: ignore[index]
        problem = done.problems[0]
        revealed = w.service.answer(
            created.id, AnswerBody(problem_id=problem.id, answer="The root: heap order.")
        )
        assert revealed["solution"] and revealed["rubric"] and revealed["gradeStatus"] == "grading"
        with pytest.raises(Refused) as again:
            w.service.answer(created.id, AnswerBody(problem_id=problem.id, answer="Another try"))
        assert again.value.kind == "invalid" and again.value.code == "already_answered"
        await asyncio.gather(w.service.tasks[f"{created.id}:grade:{problem.id}"])
        graded = w.service.get(created.id).problems[0]
        assert graded.grade_status == "graded" and graded.grade is not None and graded.grade.score == 8
        # grading touches no graph: the ledgers are as they were
        assert list(w.pipe.graph.nodes()) == nodes
        grader_prompt = next(p for p in w.script.prompts if p.startswith("THE PROBLEM:"))
        assert "Heapsort" not in grader_prompt.split("THE LEARNER'S ANSWER")[0] or "Heapsort" in problem.title
        assert "activity-changed" in w.heard
        rows = {r["id"]: r for r in w.service.activity()}
        assert rows[f"{created.id}:partition"]["phase"] == "done"
        assert rows[f"{created.id}:gen:p1"]["label"].startswith("Problem 1/3 — ")
        assert rows[f"{created.id}:grade:p1"]["phase"] == "done"
        # seed §7: each stage asks for its own role's model (the strong slot unless overridden)
        assert set(w.slots) == {"partitioner", "problemGenerator", "grader"}
        assert rows[f"{created.id}:grade:p1"]["usage"]["model"] == "scripted"  # the model that ran

    run(tmp_path, scenario)


def test_the_generator_weighs_the_note_and_avoids_the_5_most_recent_sets_on_its_nodes(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        nodes = await w.graph()
        heap = nodes[0]

        def earlier(i: int, node_ids: list[str], title: str) -> ProblemSet:
            stamp = f"2026-11-{i:02d}T10:00:00.000Z"
            return ProblemSet(
                id=f"ps_{i:08x}",
                title=title,
                status="ready",
                created_at=stamp,
                updated_at=stamp,
                params=PracticeParams(),
                node_ids=node_ids,
                propositions=[],
                chains=[],
                problems=[
                    Problem(
                        id="p1",
                        index=1,
                        title=f"Old problem {i}",
                        chain_ids=["single_x"],
                        status="ready",
                        statement=f"Situation number {i}:\n  a warehouse   of crates.",
                    )
                ],
            )

        for i in range(1, 7):  # six sets sharing a node of the new selection, 1 the oldest
            w.store.save(earlier(i, [heap, "n_gone"], f"Shared {i}"))
        w.store.save(earlier(9, ["n_elsewhere"], "Unrelated"))  # the newest, but shares no node
        note = "  I keep confusing heap order with sortedness; make me face that.  "
        created = await w.service.create(CreateSet(node_ids=nodes, note=note))
        assert created.note == note.strip()
        done = await w.settled(created.id)
        assert done.status == "ready"
        partitioner_prompt = next(
            p for p in w.script.prompts if p.startswith("THE LEVELS") and "YOUR TARGET" not in p
        )
        assert partitioner_prompt.endswith(
            f"THE LEARNER'S NOTE (weigh it; the law of the partition wins):\n{note.strip()}"
        )
        generator_prompts = [p for p in w.script.prompts if "YOUR TARGET" in p]
        assert len(generator_prompts) == len(done.problems)
        for prompt in generator_prompts:
            assert f"THE LEARNER'S NOTE (weigh it):\n{note.strip()}" in prompt
            recent = prompt.split("RECENT PROBLEMS ON THESE PROPOSITIONS", 1)[1]
            # the 5 most recent sharing sets (2..6), newest first, whitespace folded; not set 1
            listed = re.findall(
                r"^- Old problem (\d): Situation number \d: a warehouse of crates\.$", recent, re.M
            )
            assert listed == ["6", "5", "4", "3", "2"]
            assert "Old problem 1" not in recent and "Old problem 9" not in prompt

    run(tmp_path, scenario)


@pytest.mark.parametrize("mistake", ["duplicate", "drop"])
def test_a_partition_that_duplicates_or_drops_a_chain_goes_back_to_the_model(
    tmp_path: Path, mistake: str
) -> None:
    async def scenario(w: World) -> None:
        w.script.partition_first = mistake
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        done = await w.settled(created.id)
        assert done.status == "ready"
        assert sorted(c for p in done.problems for c in p.chain_ids) == sorted(c.id for c in done.chains)
        requests = [p for p in w.script.prompts if p.startswith("THE LEVELS") and "YOUR TARGET" not in p]
        assert len(requests) == 2  # the refused submit, then the true partition, in one run

    run(tmp_path, scenario)


def test_a_partitioner_that_never_submits_a_true_partition_errors_the_set_honestly(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        w.script.partition_always = "drop"
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        failed = await w.settled(created.id)
        assert failed.status == "error" and failed.problems == []
        assert (failed.error or "").startswith(
            "The set could not be divided into problems: the model did not produce a valid answer"
        )
        requests = [p for p in w.script.prompts if p.startswith("THE LEVELS") and "YOUR TARGET" not in p]
        assert len(requests) == 4  # at most 4 turns
        row = next(r for r in w.service.activity() if r["id"] == f"{created.id}:partition")
        assert row["phase"] == "error" and row["usage"]["requests"] == 4
        assert not any(":gen:" in r["id"] for r in w.service.activity())

    run(tmp_path, scenario, store=FakePracticeStore())  # the sets' files are not under test


def test_aborting_while_partitioning_stops_the_set(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        w.script.partition_gate = asyncio.Event()
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        row_id = f"{created.id}:partition"
        while not any(r["id"] == row_id and r["phase"] == "partitioning" for r in w.service.activity()):
            await asyncio.sleep(0.01)
        assert w.service.abort(row_id)
        stopped = await w.settled(created.id)
        assert stopped.status == "error" and stopped.problems == []
        assert stopped.error == "Stopped while it was being divided into problems."
        assert next(r for r in w.service.activity() if r["id"] == row_id)["phase"] == "aborted"
        assert not w.service.abort(row_id)

    run(tmp_path, scenario, store=FakePracticeStore())  # the sets' files are not under test


def test_the_echo_law_and_per_problem_failure_isolation(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        w.script.echo_first_wrong = True
        w.script.fail_names = {"Heapsort"}
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        done = await w.settled(created.id)
        assert done.status == "ready"
        by_status = {p.status for p in done.problems}
        assert by_status == {"ready", "error"}
        failed = next(p for p in done.problems if p.status == "error")
        assert failed.chain_ids[0].startswith("single_") and "could not be written" in (failed.error or "")
        generator_requests = [p for p in w.script.prompts if "YOUR TARGET" in p]
        assert len(generator_requests) == 2 * 2 + 1  # ready ones: a refused echo, then the right one
        with pytest.raises(Refused) as refused:
            w.service.answer(created.id, AnswerBody(problem_id=failed.id, answer="x"))
        assert refused.value.kind == "conflict"

    run(tmp_path, scenario)


def test_a_generator_that_submits_no_rubric_is_sent_back_and_commits_all_three(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        w.script.rubric_first_missing = True
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        done = await w.settled(created.id)
        assert done.status == "ready" and all(p.status == "ready" for p in done.problems)
        assert all(p.statement and p.solution and p.rubric for p in done.problems)
        generator_requests = [p for p in w.script.prompts if "YOUR TARGET" in p]
        assert len(generator_requests) == 2 * len(done.problems)  # the refused submit, then the whole

    run(tmp_path, scenario)


@pytest.mark.parametrize("first", ["8/10", 11, "eight"])
def test_a_grade_that_is_not_an_integer_0_to_10_goes_back_to_the_grader(tmp_path: Path, first: Any) -> None:
    async def scenario(w: World) -> None:
        w.script.grade_first, w.script.score = first, 6
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        await w.settled(created.id)
        w.service.answer(created.id, AnswerBody(problem_id="p1", answer="Because of heap order."))
        await asyncio.gather(w.service.tasks[f"{created.id}:grade:p1"])
        grade = w.service.get(created.id).problems[0].grade
        assert grade is not None and grade.score == 6

    run(tmp_path, scenario)


def test_a_grader_that_answers_in_prose_is_asked_for_its_submit(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        w.script.grade_prose, w.script.score = 1, 7
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        await w.settled(created.id)
        w.service.answer(created.id, AnswerBody(problem_id="p1", answer="Because of heap order."))
        await asyncio.gather(w.service.tasks[f"{created.id}:grade:p1"])
        graded = w.service.get(created.id).problems[0]
        assert graded.grade_status == "graded" and graded.grade is not None and graded.grade.score == 7
        assert len([p for p in w.script.prompts if p.startswith("THE PROBLEM:")]) == 2

    run(tmp_path, scenario)


def test_a_grader_that_never_submits_leaves_an_honest_line_and_the_answer(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        w.script.grade_prose = 99
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        await w.settled(created.id)
        w.service.answer(created.id, AnswerBody(problem_id="p1", answer="Because of heap order."))
        await asyncio.gather(w.service.tasks[f"{created.id}:grade:p1"])
        dropped = w.service.get(created.id).problems[0]
        assert dropped.answer == "Because of heap order." and dropped.grade is None
        assert dropped.grade_status == "error", dropped.grade_error
        assert (dropped.grade_error or "").startswith(
            "The grade could not be given: the model did not produce a valid answer after several tries"
        )
        assert len([p for p in w.script.prompts if p.startswith("THE PROBLEM:")]) == 4  # at most 4 turns
        row = next(r for r in w.service.activity() if r["id"] == f"{created.id}:grade:p1")
        assert row["phase"] == "error" and row["usage"]["requests"] == 4
        with pytest.raises(Refused) as again:  # one attempt, even when the grade is dropped
            w.service.answer(created.id, AnswerBody(problem_id="p1", answer="Second try"))
        assert again.value.code == "already_answered"

    run(tmp_path, scenario)


def test_abort_routes_by_row_shape(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        nodes = await w.graph()
        # a generator row stops its problem only
        w.script.gen_gate = asyncio.Event()
        created = await w.service.create(CreateSet(node_ids=nodes))
        while f"{created.id}:gen:p2" not in w.service.tasks:
            await asyncio.sleep(0.01)
        assert w.service.abort(f"{created.id}:gen:p2")
        w.script.gen_gate.set()
        done = await w.settled(created.id)
        assert done.status == "ready"
        assert [p.status for p in done.problems] == ["ready", "error", "ready"]
        assert not w.service.abort(f"{created.id}:gen:p2")  # nothing runs any more
        # a grade row stops that grade: the answer stands, "interrupted"
        w.script.gate = asyncio.Event()
        w.service.answer(created.id, AnswerBody(problem_id="p1", answer="Heap order."))
        await asyncio.sleep(0.05)
        assert w.service.abort(f"{created.id}:grade:p1")
        await asyncio.gather(w.service.tasks[f"{created.id}:grade:p1"], return_exceptions=True)
        stopped = w.service.get(created.id).problems[0]
        assert stopped.answer == "Heap order." and stopped.grade_status == "interrupted"
        # the partition row stops the whole run
        w.script.gen_gate = asyncio.Event()
        second = await w.service.create(CreateSet(node_ids=nodes))
        while f"{second.id}:gen:p1" not in w.service.tasks:
            await asyncio.sleep(0.01)
        assert w.service.abort(f"{second.id}:partition")
        await asyncio.gather(
            *[t for r, t in w.service.tasks.items() if r.startswith(second.id)], return_exceptions=True
        )
        stopped_set = w.service.get(second.id)
        assert all(p.status == "error" for p in stopped_set.problems)
        # the set settles too (not left `generating`, which no sweep of this process would touch)
        assert stopped_set.status == "error"
        assert stopped_set.error == "Stopped while its problems were being written."

    run(tmp_path, scenario)


def test_deleting_a_set_while_it_generates_leaves_nothing_half_written(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        w.script.gen_gate = asyncio.Event()
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        while f"{created.id}:gen:p1" not in w.service.tasks:
            await asyncio.sleep(0.01)
        await w.service.delete(created.id)
        w.script.gen_gate.set()
        await asyncio.sleep(0.05)
        assert w.store.get(created.id) is None
        assert not (w.store.root / f"{created.id}.json").exists()
        with pytest.raises(Refused) as gone:
            await w.service.delete(created.id)
        assert gone.value.kind == "not_found"

    run(tmp_path, scenario)


def test_a_restart_resumes_what_a_dead_process_left(tmp_path: Path) -> None:
    """Issue 26: a set is accepted work. One left `generating` writes the problems still
    unwritten (a written one keeps its text), one left `partitioning` is divided again, and an
    answer left `grading` is graded; each ends ready or graded, in rows of the feed."""

    async def scenario(w: World) -> None:
        nodes = await w.graph()
        created = await w.service.create(CreateSet(node_ids=nodes))
        await w.settled(created.id)
        left = w.service.get(created.id).model_copy(deep=True)
        kept = left.problems[1].statement
        left.status, left.updated_at = "generating", "2026-01-01T00:00:00Z"
        left.problems[0].status, left.problems[0].statement = "generating", ""
        left.problems[2].status, left.problems[2].statement = "pending", ""
        left.problems[1].answer, left.problems[1].grade_status = "An answer", "grading"
        w.store.save(left)
        divided = w.service.get(created.id).model_copy(deep=True)
        divided.id, divided.status, divided.problems = "ps_00000000deadbeef", "partitioning", []
        w.store.save(divided)
        fresh = PracticeService(w.store, w.pipe.graph, w.service.model_for, w.service.permits, w.events)
        assert fresh.resume() == {"sets": 2, "grades": 1}
        assert fresh.resume() == {"sets": 0, "grades": 0}  # what this process runs is left alone
        while f"{divided.id}:gen:p3" not in fresh.tasks:  # the resumed runs make their rows
            await asyncio.sleep(0.01)
        await asyncio.gather(*fresh.tasks.values())
        rows = {r["id"]: r["phase"] for r in fresh.activity()}
        for row in (f"{created.id}:gen:p1", f"{created.id}:gen:p3", f"{created.id}:grade:p2"):
            assert rows[row] == "done"
        assert f"{created.id}:gen:p2" not in rows  # written before the crash: not written again
        assert rows[f"{divided.id}:partition"] == "done"
        done = fresh.get(created.id)
        assert done.status == "ready" and all(p.status == "ready" and p.statement for p in done.problems)
        assert done.problems[1].statement == kept
        assert done.problems[1].grade_status == "graded" and done.problems[1].answer == "An answer"
        again = fresh.get(divided.id)
        assert again.status == "ready" and len(again.problems) == 3
        await fresh.shutdown()

    run(tmp_path, scenario)


def test_a_resumed_set_without_a_model_ends_with_its_error(tmp_path: Path) -> None:
    """No model any more (the key was removed): the resumed set ends `error`, never left
    `generating`."""

    async def scenario(w: World) -> None:
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        await w.settled(created.id)
        left = w.service.get(created.id).model_copy(deep=True)
        left.status = "generating"
        for p in left.problems:
            p.status, p.statement = "pending", ""
        w.store.save(left)

        async def no_model(slot: str) -> Any:
            raise Refused("unavailable", "models_not_configured", "no model is set up for this slot")

        fresh = PracticeService(w.store, w.pipe.graph, no_model, w.service.permits, w.events)
        assert fresh.resume() == {"sets": 1, "grades": 0}
        await asyncio.gather(*fresh.tasks.values())
        ended = fresh.get(created.id)
        assert ended.status == "error" and ended.error
        assert all(p.status == "error" for p in ended.problems)
        await fresh.shutdown()

    run(tmp_path, scenario)


def test_a_shutdown_leaves_a_running_set_to_resume(tmp_path: Path) -> None:
    """A graceful stop cancels the runs but marks nothing: the next start finishes the set."""

    async def scenario(w: World) -> None:
        w.script.gen_gate = asyncio.Event()
        created = await w.service.create(CreateSet(node_ids=await w.graph()))
        while f"{created.id}:gen:p1" not in w.service.tasks:
            await asyncio.sleep(0.01)
        await w.service.shutdown()
        left = w.service.get(created.id)
        assert left.status == "generating" and not left.error
        w.script.gen_gate.set()
        fresh = PracticeService(w.store, w.pipe.graph, w.service.model_for, w.service.permits, w.events)
        assert fresh.resume()["sets"] == 1
        await asyncio.gather(*fresh.tasks.values())
        assert fresh.get(created.id).status == "ready"
        await fresh.shutdown()

    run(tmp_path, scenario)


def test_refusals(tmp_path: Path) -> None:
    async def scenario(w: World) -> None:
        with pytest.raises(Refused) as empty:
            await w.service.create(CreateSet(node_ids=["n_0000000000000000"]))  # deleted since the selection
        assert empty.value.kind == "invalid" and "select again" in empty.value.detail
        with pytest.raises(Refused) as unknown:
            w.service.get("ps_00000000")
        assert unknown.value.kind == "not_found"
        assert store.writes == []  # a refusal writes nothing

    store = FakePracticeStore()
    run(tmp_path, scenario, store=store, graph=FakeGraph())
    for bad in ({"rung": 2.5}, {"rung": 5}, {"cue": -1}, {"presentation": "story"}, {"rung": "2"}):
        with pytest.raises(ValueError):
            PracticeParams.model_validate(bad)
    for answer in ("", "   ", "x" * 20_001):
        with pytest.raises(ValueError):
            AnswerBody.model_validate({"problemId": "p1", "answer": answer})
    # a note over 2,000 characters is capped, never refused (seed §7; tests/unit/practice/test_note_cap.py)
    assert CreateSet.model_validate({"nodeIds": ["n_1"], "note": "x" * 2_001}).note == "x" * 2_000
    assert json.loads(PracticeParams().model_dump_json(by_alias=True)) == {
        "rung": 2,
        "cue": 1,
        "presentation": "theory",
    }


def test_the_api_refuses_bad_levels_and_serves_the_named_levels(live: Any) -> None:
    levels = live.client.get("/api/practice/levels").json()
    assert [r["name"] for r in levels["rungs"]] == [
        "Worked example",
        "Completion",
        "Direct exercise",
        "Composition",
        "Path-finding",
    ]
    assert levels["defaults"] == {"rung": 2, "cue": 1, "presentation": "theory"}
    for params in ({"rung": 2.5}, {"rung": 7}, {"presentation": "story"}):
        refused = live.client.post("/api/practice/sets", json={"nodeIds": ["n_1"], "params": params})
        assert refused.status_code == 400, refused.text
    empty = live.client.post("/api/practice/sets", json={"nodeIds": ["n_0000000000000000"]})
    assert empty.status_code == 400 and empty.json()["error"] == "empty_selection"
    assert live.client.get("/api/practice/sets").json() == {"sets": []}
    assert live.client.get("/api/practice/sets/ps_00000000").status_code == 404
    assert live.client.delete("/api/practice/sets/ps_00000000").status_code == 404
    bad = live.client.post("/api/practice/sets/ps_00000000/answers", json={"problemId": "p1", "answer": ""})
    assert bad.status_code == 400


def _live_practice(live: Any, tmp_path: Path) -> tuple[list[str], PracticeScript]:
    """Point the live app's practice service at a graph built by the scripted pipeline and at a
    scripted practice model (the live app's own model streams lesson prose only)."""
    pipe = Pipeline(tmp_path / "graph")

    async def build() -> list[str]:
        await pipe.import_note("vault/heap.md", HEAP)
        await pipe.import_note("vault/sort.md", SORT)
        return list(pipe.graph.nodes())

    nodes = asyncio.run(build())
    script = PracticeScript()
    model = FunctionModel(function=script)
    resolved = ResolvedModel(provider="openai-compatible", model="scripted", base_url="http://127.0.0.1:9/v1")

    async def model_for(slot: str) -> tuple[ResolvedModel, FunctionModel]:
        return resolved, model

    live.services.practice.graph = pipe.graph
    live.services.practice.model_for = model_for
    return nodes, script


def _until(check: Any, what: str, timeout_s: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_api_answers_503_without_a_model_and_writes_nothing(live: Any, tmp_path: Path) -> None:
    nodes, _ = _live_practice(live, tmp_path)
    live.services.practice.model_for = live.services.models.model_for_role  # the app's own roles
    (live.data / "settings.json").write_text(json.dumps({"models": {}}))
    refused = live.client.post("/api/practice/sets", json={"nodeIds": nodes})
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"] == "models_not_configured"
    assert live.client.get("/api/practice/sets").json() == {"sets": []}
    assert not any((live.data / "practice").glob("*.json"))


def test_practice_rows_abort_through_the_activity_feed(live: Any, tmp_path: Path) -> None:
    nodes, script = _live_practice(live, tmp_path)

    def rows() -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in live.client.get("/api/activity").json()["rows"]}

    def abort(row_id: str) -> bool:
        response = live.client.post("/api/activity/abort", json={"source": row_id})
        assert response.status_code == 200, response.text
        return bool(response.json()["aborted"])

    # generators held open: a generator row stops that problem, the partition row the rest
    script.gen_gate = asyncio.Event()  # never set: the aborts end them
    created = live.client.post("/api/practice/sets", json={"nodeIds": nodes})
    assert created.status_code == 202, created.text
    held = created.json()["id"]
    _until(
        lambda: all(rows().get(f"{held}:gen:p{i}", {}).get("phase") == "generating" for i in (1, 2, 3)),
        "gens",
    )
    assert abort(f"{held}:gen:p2")
    _until(lambda: rows()[f"{held}:gen:p2"]["phase"] == "aborted", "p2 aborted")
    assert rows()[f"{held}:gen:p1"]["phase"] == "generating"  # the others still run
    assert abort(f"{held}:partition")
    stopped = _until(
        lambda: (s := live.client.get(f"/api/practice/sets/{held}").json())["status"] == "error" and s,
        "the stopped set",
    )
    assert stopped["error"] == "Stopped while its problems were being written."
    assert {rows()[f"{held}:gen:p{i}"]["phase"] for i in (1, 2, 3)} == {"aborted"}
    assert not abort(f"{held}:partition")  # nothing runs any more
    # a grade row stops that grade; the answer stands
    script.gen_gate, script.gate = None, asyncio.Event()
    second = live.client.post("/api/practice/sets", json={"nodeIds": nodes}).json()["id"]
    _until(lambda: live.client.get(f"/api/practice/sets/{second}").json()["status"] == "ready", "ready")
    answered = live.client.post(
        f"/api/practice/sets/{second}/answers", json={"problemId": "p1", "answer": "Heap order."}
    )
    assert answered.status_code == 202, answered.text
    _until(lambda: rows().get(f"{second}:grade:p1", {}).get("phase") == "grading", "grading")
    assert abort(f"{second}:grade:p1")
    problem = _until(
        lambda: (
            (p := live.client.get(f"/api/practice/sets/{second}").json()["problems"][0])["gradeStatus"]
            == "interrupted"
            and p
        ),
        "the interrupted grade",
    )
    assert problem["answer"] == "Heap order." and problem["solution"]
    assert rows()[f"{second}:grade:p1"]["phase"] == "aborted"


def test_a_200_kb_answer_is_a_clear_400_and_the_problem_stays_open(live: Any, tmp_path: Path) -> None:
    nodes, _ = _live_practice(live, tmp_path)
    set_id = live.client.post("/api/practice/sets", json={"nodeIds": nodes}).json()["id"]
    _until(lambda: live.client.get(f"/api/practice/sets/{set_id}").json()["status"] == "ready", "ready")
    huge = live.client.post(
        f"/api/practice/sets/{set_id}/answers", json={"problemId": "p1", "answer": "x" * 200_000}
    )
    assert huge.status_code == 400, huge.text
    detail = huge.json()["detail"]
    assert "the answer is 200,000 characters; the limit is 20,000" in detail, detail
    assert "Value error" not in detail
    problem = live.client.get(f"/api/practice/sets/{set_id}").json()["problems"][0]
    assert problem["answer"] is None and problem["solution"] is None  # nothing saved, nothing revealed
    fine = live.client.post(
        f"/api/practice/sets/{set_id}/answers", json={"problemId": "p1", "answer": "x" * 20_000}
    )
    assert fine.status_code == 202, fine.text  # the limit itself is accepted: the attempt was still open


def test_deleting_a_set_drops_its_rows_from_the_activity_feed(live: Any, tmp_path: Path) -> None:
    nodes, _ = _live_practice(live, tmp_path)

    def row_ids() -> set[str]:
        return {r["id"] for r in live.client.get("/api/activity").json()["rows"]}

    kept, gone = (
        live.client.post("/api/practice/sets", json={"nodeIds": nodes}).json()["id"] for _ in (1, 2)
    )
    for set_id in (kept, gone):
        _until(
            lambda s=set_id: live.client.get(f"/api/practice/sets/{s}").json()["status"] == "ready", "ready"
        )
    answered = live.client.post(
        f"/api/practice/sets/{gone}/answers", json={"problemId": "p1", "answer": "Heap order."}
    )
    assert answered.status_code == 202
    _until(
        lambda: (
            live.client.get(f"/api/practice/sets/{gone}").json()["problems"][0]["gradeStatus"] == "graded"
        ),
        "graded",
    )
    assert {f"{gone}:partition", f"{gone}:gen:p1", f"{gone}:grade:p1"} <= row_ids()
    assert live.client.delete(f"/api/practice/sets/{gone}").status_code == 204
    rows = row_ids()
    assert not any(r.startswith(f"{gone}:") for r in rows)
    assert {f"{kept}:partition", f"{kept}:gen:p1"} <= rows  # another set's rows stay
