"""Issue 16 item 5 (decision 0023): small notes queued together share one extractor call, and
each note still merges as its own: its own nodes, provenance, coverage, run line, version swap and
fingerprint. A failed pack re-runs its notes alone (only what failed); a note that fails alone too
ends with its own error; re-importing unchanged notes stays a no-op; a submit naming a note that
was not given is refused in plain words and corrected.

The notes door, the pipeline and the ledgers are real (in-process, a tmp data dir); the model is a
scripted pydantic-ai FunctionModel that counts its calls.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

from server.core.contracts.graph import CoverageLine, NodeLine, RunLine, SourceLine, VersionLine
from server.core.library.notes import source_id
from server.store.ledger import read_ledger
from tests.flows.graph_pipeline import Pipeline


class PackScript:
    """Extractor: per note (or per lone source), one proposition per `# Name` line, chained in
    order. A pack whose prompt holds `PACKFAIL` breaks down (the same notes alone do not); a note
    holding `FAIL` breaks down however it is sent. `stray` makes the first packed submit name a
    note that was not given. Auditor: links a proposition to a candidate with exactly its name."""

    def __init__(self) -> None:
        self.packs = 0
        self.alone = 0
        self.audits = 0
        self.stray = False
        self.refusals: list[str] = []
        self.gate: asyncio.Event | None = None
        """When set, every call waits for it (a pack held at its model call)."""

    async def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if self.gate is not None:
            await self.gate.wait()
        prompt = "\n".join(
            str(p.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        )
        if any(t.name == "find" for t in info.function_tools):
            self.audits += 1
            return self._audit(prompt)
        retried = [
            str(p.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, RetryPromptPart) or (isinstance(p, ToolReturnPart) and p.outcome == "retried")
        ]
        self.refusals += retried[-1:]
        if '<note id="' not in prompt:
            self.alone += 1
            source = prompt.split("THE SOURCE:\n", 1)[-1]
            if re.search(r"\bFAIL\b", source):
                raise RuntimeError("the model broke down on this note")
            props, chains = self._findings(source, "p", None)
            return _submit({"propositions": props, "chains": chains})
        if not retried:
            self.packs += 1
        if "FAIL" in prompt:  # PACKFAIL or FAIL: the pack breaks down
            raise RuntimeError("the model broke down on this pack")
        props, chains = [], []
        for k, (note, text) in enumerate(
            re.findall(r'<note id="([^"]+)"[^>]*>\n(.*?)\n</note>', prompt, re.S)
        ):
            p, c = self._findings(text, f"n{k}p", note)
            props += p
            chains += c
        if self.stray and not retried:
            props[0] = {**props[0], "note": "src_nowhere"}
        return _submit({"propositions": props, "chains": chains})

    @staticmethod
    def _findings(
        text: str, prefix: str, note: str | None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        names = [line[2:].strip() for line in text.splitlines() if line.startswith("# ")]
        tag = {"note": note} if note else {}
        props = [
            {"id": f"{prefix}{i + 1}", "name": n, "statement": f"{n} is a fact.", **tag}
            for i, n in enumerate(names)
        ]
        chains = [
            {"premises": [f"{prefix}{i}"], "conclusion": f"{prefix}{i + 1}", **tag}
            for i in range(1, len(names))
        ]
        return props, chains

    @staticmethod
    def _audit(prompt: str) -> ModelResponse:
        """Links by equal names; reads the pack's shared form (candidates listed once, named by
        id) and the lone job's (candidate lines under each proposition)."""
        names: dict[str, str] = {}
        wanted: list[tuple[str, list[str]]] = []
        for line in prompt.splitlines():
            head = re.match(r"^- (\S+): (.*?) — ", line)
            if head:
                names[head.group(1)] = head.group(2)
                if not head.group(1).startswith("n_"):
                    wanted.append((head.group(1), []))
                continue
            ids = re.match(r"^\s+(?:same-list )?candidates?[^:]*: (.*)$", line)
            if ids and wanted:
                for part in ids.group(1).split(", "):
                    cand = part.split(":", 1)
                    if len(cand) == 2:  # the lone form: "candidate n_x: Name — statement"
                        names[cand[0]] = cand[1].strip().split(" — ", 1)[0]
                    wanted[-1][1].append(cand[0].strip())
        links = []
        for finding, cands in wanted:
            match = next((c for c in cands if names.get(c) == names[finding]), None)
            if match is not None:
                links.append({"finding": finding, "node": match})
        return _submit({"links": links})


def _submit(args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("submit", json.dumps(args))])


class Door(Pipeline):
    """The graph pipeline over the pack-answering script, with room for a pack (2,000-token chunks)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, PackScript(), chunk_tokens=2000)

    async def imports(self, files: dict[str, str]) -> dict[str, str]:
        """Import the files in one request; wait for every run; returns name -> status."""
        results = self.library.import_files([(n, t.encode()) for n, t in files.items()])
        await self.extraction.wait_all()
        return {r.name: r.status for r in results}

    def ledger(self, name: str, model: type[Any]) -> list[Any]:
        return list(read_ledger(self.root / f"{name}.jsonl", model))


def note(i: int, extra: str = "") -> str:
    return f"# Fact {i} alpha\n# Fact {i} beta\n{extra}\n"


NOTES = {f"vault/note {i}.md": note(i) for i in range(6)}


def test_small_notes_share_one_call_and_each_keeps_its_own_contribution(tmp_path: Path) -> None:
    door = Door(tmp_path)
    statuses = asyncio.run(door.imports(NOTES))
    assert set(statuses.values()) == {"queued"}
    assert door.script.packs == 1 and door.script.alone == 0  # 6 notes, one extractor call
    assert door.script.audits <= 1  # and at most one audit for the pack

    runs = door.ledger("sessions", RunLine)
    assert sorted(r.source for r in runs) == sorted(source_id(n) for n in NOTES)  # one run line each
    assert len({r.job for r in runs}) == len(NOTES)  # each its own job id
    nodes = door.ledger("nodes", NodeLine)
    coverage = door.ledger("coverage", CoverageLine)
    for i, name in enumerate(NOTES):
        src = source_id(name)
        [run] = [r for r in runs if r.source == src]
        mine = [n for n in nodes if n.provenance.source == src]
        assert sorted(n.name for n in mine) == [f"Fact {i} alpha", f"Fact {i} beta"]
        assert {n.provenance.job for n in mine} == {run.job}
        [cov] = [c for c in coverage if c.source == src]
        assert cov.job == run.job and run.added_nodes == 2 and run.added_chains == 1
    chains = door.graph.chains()
    assert len(chains) == len(NOTES) and all(len(c.sources) == 1 for c in chains.values())
    stamped = {s.id: s.fingerprint for s in door.ledger("sources", SourceLine) if s.fingerprint}
    assert set(stamped) == {source_id(n) for n in NOTES}  # each fingerprint stamped
    rows = [r for r in door.extraction.activity() if r["kind"] == "notes"]
    assert len(rows) == len(NOTES) and {r["phase"] for r in rows} == {"done"}
    assert sum(r["usage"]["requests"] for r in rows) == 2  # the pack's calls, shared out

    # one layout settle and view snapshot for the pack, after its last member's merge (issue 28:
    # once per member, they were 30 % of a vault import's CPU)
    assert len(door.landed) == 1, door.landed

    # the same notes again: unchanged, no model call
    assert set(asyncio.run(door.imports(NOTES)).values()) == {"unchanged"}
    assert door.script.packs == 1 and door.script.alone == 0


def test_a_failed_pack_reruns_its_notes_alone(tmp_path: Path) -> None:
    door = Door(tmp_path)
    files = {**NOTES, "vault/note 2.md": note(2, "PACKFAIL is only a pack's trouble")}
    asyncio.run(door.imports(files))
    assert door.script.packs == 1 and door.script.alone == len(files)  # the pack, then each alone
    runs = door.ledger("sessions", RunLine)
    assert sorted(r.source for r in runs) == sorted(source_id(n) for n in files)  # each merged once
    assert {r["phase"] for r in door.extraction.activity() if r["kind"] == "notes"} == {"done"}


def test_a_note_that_fails_alone_too_fails_alone_and_only_it_reruns(tmp_path: Path) -> None:
    door = Door(tmp_path)
    broken = "vault/note 3.md"
    files = {**NOTES, broken: note(3, "FAIL here")}
    asyncio.run(door.imports(files))
    rows = {r["source"]: r for r in door.extraction.activity() if r["kind"] == "notes"}
    assert rows[source_id(broken)]["phase"] == "error"
    assert "broke down on this note" in (rows[source_id(broken)]["error"] or "")
    assert all(r["phase"] == "done" for s, r in rows.items() if s != source_id(broken))
    merged = {r.source for r in door.ledger("sessions", RunLine)}
    assert merged == {source_id(n) for n in files} - {source_id(broken)}

    # importing the folder again: only the failed note is read again
    door.script.alone = door.script.packs = 0
    fixed = {**files, broken: note(3)}
    statuses = asyncio.run(door.imports(fixed))
    assert statuses[broken] == "queued" and sum(s == "unchanged" for s in statuses.values()) == len(files) - 1
    assert door.script.alone == 1 and door.script.packs == 0  # one note is no pack
    assert {r.source for r in door.ledger("sessions", RunLine)} == {source_id(n) for n in files}


def test_edited_notes_in_a_pack_each_replace_their_own_contribution(tmp_path: Path) -> None:
    door = Door(tmp_path)
    asyncio.run(door.imports(NOTES))
    edited = {name: f"# Fact {i} gamma\n" for i, name in enumerate(list(NOTES)[:3])}
    statuses = asyncio.run(door.imports({**NOTES, **edited}))
    assert sum(s == "queued" for s in statuses.values()) == 3
    assert door.script.packs == 2  # the three edited notes shared one call
    versions = door.ledger("versions", VersionLine)
    assert sorted(v.source for v in versions) == sorted(source_id(n) for n in edited)  # a swap each
    names = sorted(n.name for n in door.graph.nodes().values())
    for i in range(6):
        expected = [f"Fact {i} gamma"] if i < 3 else [f"Fact {i} alpha", f"Fact {i} beta"]
        assert [n for n in names if n.startswith(f"Fact {i} ")] == expected


def test_a_finding_naming_a_note_not_given_is_refused_and_resubmitted(tmp_path: Path) -> None:
    door = Door(tmp_path)
    door.script.stray = True
    asyncio.run(door.imports(NOTES))
    assert door.script.packs == 1 and door.script.alone == 0
    assert any(
        "names note 'src_nowhere', which is not one of the notes given" in r for r in door.script.refusals
    )
    assert {r.source for r in door.ledger("sessions", RunLine)} == {source_id(n) for n in NOTES}


def test_the_same_statement_in_two_notes_of_one_pack_is_one_node_with_both_provenances(
    tmp_path: Path,
) -> None:
    door = Door(tmp_path)
    files = {"vault/a.md": "# Shared idea\n# Only in a\n", "vault/b.md": "# Shared idea\n# Only in b\n"}
    asyncio.run(door.imports(files))
    assert door.script.packs == 1
    [shared] = [n for n in door.graph.nodes().values() if n.name == "Shared idea"]
    assert sorted(shared.sources) == sorted(source_id(n) for n in files)
    assert len(door.graph.nodes()) == 3


def test_aborting_one_note_of_a_pack_leaves_the_others_merging(tmp_path: Path) -> None:
    door = Door(tmp_path)
    stopped = source_id("vault/note 1.md")

    async def scenario() -> None:
        door.script.gate = asyncio.Event()
        door.library.import_files([(n, t.encode()) for n, t in NOTES.items()])
        for _ in range(200):
            if any(r["phase"] == "extracting" for r in door.extraction.activity()):
                break
            await asyncio.sleep(0.01)
        assert door.extraction.abort(stopped)
        door.script.gate.set()
        await door.extraction.wait_all()

    asyncio.run(scenario())
    rows = {r["source"]: r["phase"] for r in door.extraction.activity() if r["kind"] == "notes"}
    assert rows.pop(stopped) == "aborted" and set(rows.values()) == {"done"}
    assert door.script.packs == 1 and door.script.alone == 0  # the others were not re-run
    assert {r.source for r in door.ledger("sessions", RunLine)} == {source_id(n) for n in NOTES} - {stopped}
    assert asyncio.run(door.imports(NOTES))["vault/note 1.md"] == "queued"  # read on the next import


def test_a_packs_audit_writes_each_candidate_node_once(tmp_path: Path) -> None:
    door = Door(tmp_path)
    asyncio.run(door.imports({"vault/first.md": "# Shared idea\n"}))
    prompts: list[str] = []
    audit = door.script._audit

    def recording(prompt: str) -> ModelResponse:
        prompts.append(prompt)
        return audit(prompt)

    door.script._audit = recording  # type: ignore[method-assign]
    files = {f"vault/n{i}.md": f"# Shared idea\n# Own idea {i}\n" for i in range(4)}
    asyncio.run(door.imports(files))
    [prompt] = prompts
    [shared] = [n for n in door.graph.nodes().values() if n.name == "Shared idea"]
    assert prompt.count(f"- {shared.id}: Shared idea — ") == 1  # once, though four propositions name it
    assert prompt.count(shared.id) == 1 + 4
    assert sorted(shared.sources) == sorted([source_id("vault/first.md"), *(source_id(n) for n in files)])


def test_finished_packs_leave_nothing_of_theirs_held(tmp_path: Path) -> None:
    """Issue 16 item 2: after an import of several packs ends, the service holds none of their
    objects (packs, the pack extractor's deps, packed submits, packed notes); its run tables are
    empty, the feed's rows bounded, and one pack extractor agent is built for them all."""
    import gc

    from server.agent.library.agent_cache import _agents
    from server.agent.library.extraction import PackDeps, PackExtractor
    from server.core.contracts.graph import PackedFindings
    from server.core.library.packing import PackNote
    from server.services.library.feed import KEEP_ENDED_ROWS
    from server.services.library.packs import Pack

    door = Door(tmp_path)
    files = [(f"vault/many {i}.md", note(i).encode()) for i in range(90)]  # 40 + 40 + 10: three packs

    async def import_all() -> None:  # as the import route does: one import, its summary row
        door.library.import_files(files, door.library.begin_import("Import of vault"))
        await door.extraction.wait_all()

    asyncio.run(import_all())
    assert door.script.packs == 3 and door.script.alone == 0
    assert len(door.ledger("sessions", RunLine)) == 90
    service = door.extraction
    assert not service.tasks and not service._active and not service._queued and not service._packs
    assert len(service.rows) <= KEEP_ENDED_ROWS
    gc.collect()
    kinds = (Pack, PackDeps, PackExtractor, PackedFindings, PackNote)
    held = [o for o in gc.get_objects() if isinstance(o, kinds)]
    assert held == []
    pack_agents = [
        k for k, (model, _) in _agents.items() if k[1] == "pack" and model.function.__self__ is door.script
    ]
    assert len(pack_agents) == 1  # built once, shared by the three packs
