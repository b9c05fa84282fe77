"""Issue 11, items 1-3: re-imports weld nothing, an edited note replaces what it said, and a
deletion is never undone by a merge (the pipeline in-process on real ledgers, scripted model)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.core.contracts.graph import ChainLine, NodeLine
from server.core.library.notes import content_fingerprint, source_id
from server.core.refusals import Refused
from server.services.library.imports import NameChoice
from tests.flows.graph_pipeline import Pipeline, invariants, retired_jobs


def block(*names: str) -> str:
    """One chunk's text: exactly 1,990 characters with its line ends, so the budget of 2,000
    (500 estimated tokens) never takes a line of the next block into it."""
    head = "".join(f"# {n}\n" for n in names)
    filler = "".join(f"plain prose line {i} that the scripted extractor ignores.\n" for i in range(40))
    body = (head + filler)[:1989]
    return body[: body.rstrip("\n").rfind("\n") + 1].ljust(1989, "x") + "\n"


HEAP_V1 = block("Binary heap", "Heap order", "Sift-down cost") + block("Priority queue", "Decrease key")
HEAP_V2 = block("Binary heap", "Heap order", "Sift-down cost") + block("Heapsort", "In-place sorting")
QUEUES = block("Priority queue", "Scheduling")


def names(pipe: Pipeline) -> list[str]:
    return sorted(n.name for n in pipe.graph.nodes().values())


def test_an_edited_note_replaces_what_it_said(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        assert await pipe.import_note("vault/heap.md", HEAP_V1) == "queued"
        before = names(pipe)
        assert len(before) == 5
        assert await pipe.import_note("vault/heap.md", HEAP_V2) == "queued"
        after = names(pipe)
        assert after == sorted(
            ["Binary heap", "Heap order", "Sift-down cost", "Heapsort", "In-place sorting"]
        )
        assert len(pipe.graph.nodes()) == 5  # not 10: nothing the old version said is left twice
        invariants(pipe, set(), {"vault/heap.md": {content_fingerprint(HEAP_V2)}})
        lines = len(pipe.ledger("nodes", NodeLine))
        assert await pipe.import_note("vault/heap.md", HEAP_V2) == "unchanged"  # still a true no-op
        assert len(pipe.ledger("nodes", NodeLine)) == lines

    asyncio.run(scenario())


def test_a_replaced_note_leaves_what_another_note_also_says(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        await pipe.import_note("vault/heap.md", HEAP_V1)
        await pipe.import_note("vault/queues.md", block("Priority queue", "Scheduling"))
        await pipe.import_note("vault/heap.md", HEAP_V2)
        nodes = {n.name: n for n in pipe.graph.nodes().values()}
        assert "Decrease key" not in nodes  # only the old heap.md said it
        queues = [s for s in nodes["Priority queue"].sources]
        assert len(queues) == 1 and queues[0] != nodes["Heapsort"].sources[0]  # queues.md's provenance
        invariants(
            pipe,
            set(),
            {
                "vault/heap.md": {content_fingerprint(HEAP_V2)},
                "vault/queues.md": {content_fingerprint(block("Priority queue", "Scheduling"))},
            },
        )

    asyncio.run(scenario())


def test_a_rerun_of_an_unchanged_chunk_that_says_something_else_welds_nothing(tmp_path: Path) -> None:
    """The heap note's first chunk is unchanged, its second edited; the model now names the first
    chunk's first proposition differently. Before the fix the rerun took the old ids and stored
    "Binary heap restated" as an alias of "Binary heap" without any audit."""
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        await pipe.import_note("vault/heap.md", HEAP_V1)
        pipe.script.drift = True
        await pipe.import_note("vault/heap.md", HEAP_V2)
        invariants(pipe, set(), {"vault/heap.md": {content_fingerprint(HEAP_V2)}})
        assert all(n.aliases == [] for n in pipe.graph.nodes().values())

    asyncio.run(scenario())


def test_a_rerun_failing_half_way_retires_nothing_and_merges_nothing(tmp_path: Path) -> None:
    """The edited note's first chunk merges, its second fails: the graph shows the old version
    alone, as before the import (before the fix the merged chunk counted beside it)."""
    pipe = Pipeline(tmp_path / "graph")
    broken = block("Binary heap", "Heap order", "Sift-down cost") + block("FAIL here", "Heapsort")

    async def scenario() -> None:
        await pipe.import_note("vault/heap.md", HEAP_V1)
        before = {k: v.model_dump() for k, v in pipe.graph.nodes().items()}
        chains = set(pipe.graph.chains())
        pipe.script.drift = True  # the merged chunk says something the old version did not
        assert await pipe.import_note("vault/heap.md", broken) == "queued"
        pipe.script.drift = False
        rows = pipe.extraction.activity()
        assert sorted(r["phase"] for r in rows[:2]) == ["done", "error"]
        assert {k: v.model_dump() for k, v in pipe.graph.nodes().items()} == before  # only the old
        assert set(pipe.graph.chains()) == chains
        assert retired_jobs(pipe) == set()
        invariants(pipe, set(), {"vault/heap.md": {content_fingerprint(HEAP_V1)}})
        rows = len(pipe.extraction.activity())
        assert await pipe.import_note("vault/heap.md", broken) == "queued"  # resumes: one job
        assert len(pipe.extraction.activity()) == rows + 1
        assert pipe.extraction.activity()[0]["phase"] == "error"
        assert {k: v.model_dump() for k, v in pipe.graph.nodes().items()} == before
        await pipe.import_note("vault/heap.md", HEAP_V2)  # the learner fixes the note
        invariants(pipe, set(), {"vault/heap.md": {content_fingerprint(HEAP_V2)}})
        assert len(pipe.graph.nodes()) == 5

    asyncio.run(scenario())


def test_a_delete_between_an_audit_and_its_merge_stays_deleted(tmp_path: Path) -> None:
    """Issue 11, item 3. The auditor of queues.md reads the graph, links "Priority queue" to the
    heap note's node, and while it works the learner deletes that node. Before the fix the delete
    ran at once and the merge's link line brought the node back."""
    pipe = Pipeline(tmp_path / "graph")
    outcome: list[object] = []

    async def scenario() -> None:
        await pipe.import_note("vault/heap.md", HEAP_V1)
        [target] = [n.id for n in pipe.graph.nodes().values() if n.name == "Priority queue"]

        async def delete() -> None:
            try:
                result = pipe.service.delete([target])
                outcome.append(await result if asyncio.iscoroutine(result) else result)
            except Refused as exc:
                outcome.append(exc.kind)

        tasks: list[asyncio.Task[None]] = []
        pipe.script.during_audit = lambda: tasks.append(asyncio.get_running_loop().create_task(delete()))
        await pipe.import_note("vault/queues.md", block("Priority queue", "Scheduling"))
        await asyncio.gather(*tasks)
        assert tasks and outcome, "the delete never ran"
        deleted = {target} if isinstance(outcome[0], dict) else set()
        assert deleted, outcome  # the merge landed first, then the delete (queues.md had finished)
        invariants(
            pipe,
            deleted,
            {
                "vault/heap.md": {content_fingerprint(HEAP_V1)},
                "vault/queues.md": {content_fingerprint(block("Priority queue", "Scheduling"))},
            },
        )
        await pipe.import_note("vault/queues.md", block("Priority queue", "Scheduling", "Dijkstra"))
        assert target not in pipe.graph.nodes()  # nor does a later merge bring it back

    asyncio.run(scenario())


def test_a_delete_racing_an_import_of_the_same_source_is_refused(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")
    outcome: list[object] = []

    async def scenario() -> None:
        await pipe.import_note("vault/heap.md", HEAP_V1)
        [target] = [n.id for n in pipe.graph.nodes().values() if n.name == "Decrease key"]

        async def delete() -> None:
            try:
                outcome.append(await pipe.service.delete([target]))
            except Refused as exc:
                outcome.append(exc.kind)

        tasks: list[asyncio.Task[None]] = []
        pipe.script.during_audit = lambda: tasks.append(asyncio.get_running_loop().create_task(delete()))
        # drift: the first chunk's first proposition is reworded, so its job is audited (a statement
        # equal to one the graph has links without the auditor, issue 16) and the delete races it
        pipe.script.drift = True
        await pipe.import_note("vault/heap.md", HEAP_V2)
        await asyncio.gather(*tasks)
        assert outcome == ["conflict"]
        invariants(pipe, set(), {"vault/heap.md": {content_fingerprint(HEAP_V2)}})

    asyncio.run(scenario())


def test_a_version_merged_by_earlier_runs_is_completed_by_a_reimport(tmp_path: Path) -> None:
    """Every chunk of the new content merged, but the run stopped before the replacement (a crash):
    the next import of that content merges nothing and completes the replacement."""
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        await pipe.import_note("vault/heap.md", HEAP_V1)
        real = pipe.extraction.merge.replace

        async def crashed(source: str, version: dict[str, str]) -> bool:
            return False  # as when the retirement line could not be written

        pipe.extraction.merge.replace = crashed  # type: ignore[method-assign]
        before = names(pipe)
        await pipe.import_note("vault/heap.md", HEAP_V2)
        assert names(pipe) == before  # the old version alone counts until the swap is written
        pipe.extraction.merge.replace = real  # type: ignore[method-assign]
        status = await pipe.import_note("vault/heap.md", HEAP_V2)
        assert status == "unchanged" and len(pipe.graph.nodes()) == 5
        invariants(pipe, set(), {"vault/heap.md": {content_fingerprint(HEAP_V2)}})

    asyncio.run(scenario())


def test_a_bare_name_import_that_replaces_other_content_says_so(tmp_path: Path) -> None:
    """Issue 11, item 5, and issue 28, items 5 and 9: a single file picked in the browser carries
    only its name; one whose name matches a note with other content is asked about (`ask`,
    nothing done), and replaces it only when the learner says so, the result saying so. An edit
    of a known path says what it replaces too; an unchanged re-import and a first import say
    nothing of the kind."""
    pipe = Pipeline(tmp_path / "graph")

    async def one(name: str, text: str, choice: NameChoice | None = None) -> tuple[str, str]:
        choices = {name: choice} if choice is not None else None
        [result] = pipe.library.import_files([(name, text.encode())], choices=choices)
        if result.source is not None:
            await pipe.extraction.wait(result.source)
        return result.status, result.view()["replaces"]

    async def scenario() -> None:
        assert await one("notes.md", HEAP_V1) == ("queued", "")
        assert await one("notes.md", HEAP_V1) == ("unchanged", "")
        assert await one("notes.md", HEAP_V2) == ("ask", "")
        assert "Decrease key" in names(pipe)  # asked, not replaced
        first = source_id("notes.md")
        assert await one("notes.md", HEAP_V2, NameChoice("replace", first)) == (
            "queued",
            "replaces what the earlier notes.md said",
        )
        assert "Decrease key" not in names(pipe)  # it did replace it
        assert await one("vault/notes.md", HEAP_V1) == ("queued", "")  # its own source
        assert await one("vault/notes.md", HEAP_V2) == (
            "queued",
            "replaces what the earlier version of notes.md said",
        )  # an edit of a known path

    asyncio.run(scenario())


def test_a_folder_reimport_takes_out_a_deleted_or_renamed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11, bad input: between two imports of a folder one file is deleted and another
    renamed. The deleted file's knowledge goes (only it said "Decrease key"); the renamed file is
    its new path's source and the old path's contribution is retired, so nothing is said twice;
    the file coming back is read again (its fingerprint was cleared)."""
    monkeypatch.setenv("LH_IMPORT_ROOTS", str(tmp_path))
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "heap.md").write_text(HEAP_V1)
    (vault / "queues.md").write_text(QUEUES)
    pipe = Pipeline(tmp_path / "graph")

    async def folder() -> dict[str, str]:
        results = pipe.library.import_folder(str(vault))
        for result in results:
            if result.source:
                await pipe.extraction.wait(result.source)
        return {Path(r.name).name: r.status for r in results}

    def fp(path: Path) -> str:
        return content_fingerprint(path.read_text())

    async def scenario() -> None:
        assert await folder() == {"heap.md": "queued", "queues.md": "queued"}
        assert "Decrease key" in names(pipe)
        (vault / "heap.md").unlink()
        (vault / "queues.md").rename(vault / "lines.md")
        assert await folder() == {"lines.md": "queued", "heap.md": "removed", "queues.md": "removed"}
        assert names(pipe) == ["Priority queue", "Scheduling"]  # once each: lines.md's
        invariants(pipe, set(), {str(vault / "lines.md"): {fp(vault / "lines.md")}})
        assert await folder() == {"lines.md": "unchanged"}  # gone files are retired once
        (vault / "heap.md").write_text(HEAP_V1)  # it comes back: read again, not "unchanged"
        assert await folder() == {"heap.md": "queued", "lines.md": "unchanged"}
        assert "Decrease key" in names(pipe)
        versions = {str(vault / n): {fp(vault / n)} for n in ("heap.md", "lines.md")}
        invariants(pipe, set(), versions)

    asyncio.run(scenario())


def test_a_single_file_renamed_is_a_new_source_and_the_old_name_keeps_its_knowledge(
    tmp_path: Path,
) -> None:
    """A file picked on its own carries only its name: renamed, it is another source (nothing
    tells the server the two are one file). Its knowledge is linked, not doubled, where the
    auditor links the same propositions; the old name's stays until deleted or re-imported."""
    pipe = Pipeline(tmp_path / "graph")

    async def scenario() -> None:
        await pipe.import_note("queues.md", QUEUES)
        await pipe.import_note("lines.md", QUEUES)
        assert names(pipe) == ["Priority queue", "Scheduling"]  # linked by the auditor
        assert all(len(n.sources) == 2 for n in pipe.graph.nodes().values())
        invariants(pipe, set(), {p: {content_fingerprint(QUEUES)} for p in ("queues.md", "lines.md")})

    asyncio.run(scenario())


def test_a_chain_leaning_on_a_retired_node_stops_counting(tmp_path: Path) -> None:
    """Issue 11, "no chain dangles": queues.md leans a chain on "Decrease key", which only the
    heap note's first version says. When heap.md is edited, that node is retired and the chain
    line (still a counted job's) dangles: reads drop it. The invariants recompute the chains from
    the raw ledgers, so a store that kept it (or dropped a whole one) fails them."""
    pipe = Pipeline(tmp_path / "graph")
    leaning = block("Scheduling", "-> Decrease key")

    async def scenario() -> None:
        await pipe.import_note("vault/heap.md", HEAP_V1)
        await pipe.import_note("vault/queues.md", leaning)
        [decrease] = [n.id for n in pipe.graph.nodes().values() if n.name == "Decrease key"]
        [lean] = [c.id for c in pipe.graph.chains().values() if c.premises == [decrease]]
        await pipe.import_note("vault/heap.md", HEAP_V2)
        assert "Decrease key" not in names(pipe)
        assert any(line.id == lean for line in pipe.ledger("chains", ChainLine))  # still written
        assert lean not in pipe.graph.chains()  # but it dangles: it does not count
        versions = {
            "vault/heap.md": {content_fingerprint(HEAP_V2)},
            "vault/queues.md": {content_fingerprint(leaning)},
        }
        invariants(pipe, set(), versions)

    asyncio.run(scenario())
