"""The notes door, the lesson trigger seam, the extraction pipeline and the graph service on a real
ledger directory, driven in-process with a scripted extractor and auditor (no HTTP), and the graph
invariants of issue 11.

A lesson here is a record in an in-memory chat store: a probe that handed over, then one assistant
message per `(message id, teacher prose)` pair; its prose uses the same `# Name` lines as notes.

Extractor: one proposition per `# Name` line of its chunk (a statement from the name), chains
`p1 ⟹ p2 ⟹ p3`, and `existing ⟹ p1` for the first id of THE GRAPH SO FAR, and `X ⟹ p1` for each
`# -> Name` line whose name is a node of the graph the run sees (`lean_on`: a chain leaning on what
another source said, which dangles when that source's node is retired). With `drift` on it says
something else for the same text (the first name changes), as a real model does on a rerun. A chunk
holding `FAIL` makes it raise (a job that fails).
Auditor: links a proposition to a candidate with exactly its name; every link it submits is
recorded. `during_audit`, when set, runs once while the audit holds the merge section (a race).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.core.contracts.chat import ChatRecord
from server.core.contracts.graph import (
    ChainLine,
    CoverageLine,
    DeletionLine,
    NodeLine,
    Proposition,
    RetireLine,
    RunLine,
    VersionLine,
)
from server.core.contracts.models import ModelRef, ResolvedModel, Settings
from server.core.fanout import FanOut, MergeLanded
from server.core.library.candidates import statement_key
from server.core.library.coverage import message_views
from server.core.library.notes import source_id
from server.core.library.view_derive import derive_view
from server.services.library.extraction import ExtractionService
from server.services.library.graph import GraphService, MergeGate
from server.services.library.library import LibraryService
from server.store.ledger import read_ledger
from server.store.library.graph import FileGraphStore
from tests.fakes import FakeChatStore, FakeIntakeStore, FakeSettingsStore
from tests.flows.classroom.test_lesson_extraction import PROBE_DONE


def _prompt(messages: list[ModelMessage]) -> str:
    return "\n".join(
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )


class Script:
    def __init__(self) -> None:
        self.drift = False
        self.links: set[tuple[str, str]] = set()  # (proposition name, node id) the auditor linked
        self.during_audit: Callable[[], object] | None = None
        self.lean_on: Callable[[], dict[str, Proposition]] = dict
        """The nodes a `-> Name` line may lean on (the pipeline sets the graph's nodes)."""

    def extract(self, messages: list[ModelMessage]) -> ModelResponse:
        prompt = _prompt(messages)
        source = prompt.split("THE SOURCE:\n", 1)[-1]
        if "FAIL" in source:
            raise RuntimeError("the model broke down on this chunk")
        heads = [line[2:].strip() for line in source.splitlines() if line.startswith("# ")]
        names = [h for h in heads if not h.startswith("-> ")][:3]
        if self.drift and names:
            names[0] = f"{names[0]} restated"
        props = [{"id": f"p{i + 1}", "name": n, "statement": f"{n} holds."} for i, n in enumerate(names)]
        chains = [{"premises": [f"p{i}"], "conclusion": f"p{i + 1}"} for i in range(1, len(props))]
        existing = re.search(r"^- (n_[0-9a-f]{16}):", prompt, re.M)
        if existing and props:
            chains.append({"premises": [existing.group(1)], "conclusion": "p1"})
        leaned = {h[3:].strip() for h in heads if h.startswith("-> ")}
        for node in self.lean_on().values() if leaned and props else ():
            if node.name in leaned:
                chains.append({"premises": [node.id], "conclusion": "p1"})
        return ModelResponse(
            parts=[ToolCallPart("submit", json.dumps({"propositions": props, "chains": chains}))]
        )

    async def audit(self, messages: list[ModelMessage]) -> ModelResponse:
        if self.during_audit is not None:
            hook, self.during_audit = self.during_audit, None
            hook()
            for _ in range(20):  # let whatever the hook started run now, mid-audit
                await asyncio.sleep(0)
        links: list[dict[str, str]] = []
        current: tuple[str, str] | None = None
        for line in _prompt(messages).splitlines():
            head = re.match(r"^- (p\d+): (.*?) — ", line)
            if head:
                current = (head.group(1), head.group(2))
                continue
            cand = re.match(r"^\s+candidate (n_[0-9a-f]+): (.*?) — ", line)
            if (
                cand
                and current
                and cand.group(2) == current[1]
                and all(x["finding"] != current[0] for x in links)
            ):
                links.append({"finding": current[0], "node": cand.group(1)})
                self.links.add((current[1], cand.group(1)))
        return ModelResponse(parts=[ToolCallPart("submit", json.dumps({"links": links}))])

    async def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(t.name == "find" for t in info.function_tools):
            return await self.audit(messages)
        return self.extract(messages)


class Pipeline:
    """One data dir's graph, its pipeline, and the notes door (chunks of at most 500 tokens)."""

    def __init__(self, root: Path, script: Any = None, chunk_tokens: int = 500) -> None:
        """`script`: the scripted model's answers (a `Script` by default); `chunk_tokens`: the
        notes door's chunk budget."""
        self.root = root
        self.script = script if script is not None else Script()
        self.graph = FileGraphStore(root)
        self.script.lean_on = self.graph.nodes
        model = FunctionModel(function=self.script.model)
        resolved = ResolvedModel(
            provider="openai-compatible", model="scripted", base_url="http://127.0.0.1:9/v1"
        )
        ticks = iter(range(10**9))

        async def model_for() -> tuple[ResolvedModel, FunctionModel]:
            return resolved, model

        def clock() -> str:
            return f"2026-01-01T{next(ticks):09d}"

        self.landed: list[str] = []
        """Each `MergeLanded`'s label, in order (the layout settle runs once per message)."""
        fanout = FanOut({MergeLanded: [lambda m: self.landed.append(m.label)]})
        self.extraction = ExtractionService(self.graph, model_for, clock=clock, fanout=fanout)
        graph_settings = {"graph": {"extractionChunkTokens": chunk_tokens}}
        settings = FakeSettingsStore(Settings.model_validate(graph_settings))
        self.chats = FakeChatStore()
        self.intake = FakeIntakeStore()
        """The accepted queue (its file is not what these flows are about)."""
        self.library = LibraryService(
            self.graph,
            self.extraction,
            settings,
            chats=self.chats,
            intake=self.intake,
            events=self.extraction.events,
        )
        gate = MergeGate(self.extraction.merge_section, self.extraction.running)
        self.service = GraphService(self.graph, self.chats, gate, events=self.extraction.events, clock=clock)

    async def import_note(self, name: str, text: str) -> str:
        [result] = self.library.import_files([(name, text.encode())])
        assert result.source is not None, result
        await self.extraction.wait(result.source)
        return result.status

    def lesson(self, chat_id: str, prose: list[tuple[str, str]]) -> None:
        """Write the lesson's record: the probe's hand-over, then one teacher message per pair."""
        messages: list[dict[str, Any]] = [
            {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "Teach me heaps"}]},
            {"id": "a0", "role": "assistant", "parts": [PROBE_DONE]},
        ]
        for mid, text in prose:
            messages.append({"id": mid, "role": "assistant", "parts": [{"type": "text", "text": text}]})
        at = "2026-01-01T00:00:00Z"
        self.chats.save(
            ChatRecord(
                id=chat_id,
                title=f"Lesson {chat_id}",
                created_at=at,
                updated_at=at,
                model=ModelRef(provider="openai-compatible", model="scripted"),
                messages=messages,
            )
        )

    async def flush(self, chat_id: str) -> str:
        """ "Add to my graph now", then wait for the lesson's run (a retirement-only run too)."""
        outcome = self.library.flush(chat_id)
        await self.extraction.wait(chat_id)
        return outcome.status

    def ledger(self, name: str, model: type[Any]) -> list[Any]:
        return list(read_ledger(self.root / f"{name}.jsonl", model))


def retired_jobs(pipe: Pipeline) -> set[str]:
    """Every job a version line (or a legacy retirement line) retired, read from the raw ledgers."""
    legacy = {r.job for r in pipe.ledger("retired", RetireLine)}
    return legacy | {job for v in pipe.ledger("versions", VersionLine) for job in v.retired}


def committed_jobs(pipe: Pipeline) -> set[str]:
    """The jobs whose lines count, from the raw ledgers: a run line that is not pending or that a
    version line accepted, and not retired."""
    accepted = {job for v in pipe.ledger("versions", VersionLine) for job in v.accepted}
    runs = pipe.ledger("sessions", RunLine)
    return {r.job for r in runs if not r.pending or r.job in accepted} - retired_jobs(pipe)


def lesson_pairs(pipe: Pipeline, chat_id: str) -> set[tuple[str, str]]:
    """The lesson's current (message id, teacher-prose fingerprint) pairs."""
    record = pipe.chats.get(chat_id)
    return {(v.message_id, v.fingerprint) for v in message_views(record.messages)} if record else set()


def invariants(
    pipe: Pipeline,
    deleted: set[str],
    versions: dict[str, set[str]],
    lessons: dict[str, set[tuple[str, str]]] | None = None,
) -> None:
    """Issue 11's invariants, checked against the raw ledgers.

    Args:
        deleted: every id a deletion answered 200 for.
        versions: notes path -> fingerprints of the contents whose jobs may count: the last content
            that merged whole (and, while no content ever did, a first import that failed
            part-way). A re-run that failed part-way counts for nothing beside the old version.
        lessons: lesson id -> the (message id, fingerprint) pairs a job of it may stand on (those
            current when its last whole run merged, plus those a run that replaced nothing read
            since; a re-read of edited or regenerated prose counts only once it merged whole).
    """
    nodes, chains = pipe.graph.nodes(), pipe.graph.chains()
    lines = pipe.ledger("nodes", NodeLine)
    # 1. no proposition is linked that the auditor did not link, except an exact statement match
    # (issue 16: a statement equal, once normalized, to one the node already carries links
    # without the model)
    seen: dict[str, set[str]] = {}
    for line in lines:
        if line.id in seen:
            exact = statement_key(line.statement) in seen[line.id]
            audited = (line.name, line.id) in pipe.script.links
            assert audited or exact, f"unaudited link: {line.name!r} -> {line.id}"
        seen.setdefault(line.id, set()).add(statement_key(line.statement))
    # 2. every node has a live provenance from a current version of its source
    retired = retired_jobs(pipe)
    committed = committed_jobs(pipe)
    allowed = {(source_id(path), fp[:16]) for path, fps in versions.items() for fp in fps}
    coverage = [c for c in pipe.ledger("coverage", CoverageLine) if c.job not in retired]
    current = {c.job for c in coverage if (c.source, c.message.split(":")[0]) in allowed}
    for chat_id, pairs in (lessons or {}).items():
        mine = [c for c in coverage if c.source == chat_id]
        for job in {c.job for c in mine}:
            if all((c.message, c.fingerprint) in pairs for c in mine if c.job == job):
                current.add(job)
    for nid in nodes:
        jobs = {line.provenance.job for line in lines if line.id == nid} & committed
        assert jobs & current, f"{nid} ({nodes[nid].name}) lives only on replaced or uncommitted runs: {jobs}"
    # 2b. nothing half-merged: every counted job of a tracked source read one of its allowed
    # versions (a re-run that failed part-way counts for nothing beside the old version)
    tracked = {source_id(path) for path in versions} | set(lessons or {})
    for job in {c.job for c in coverage if c.source in tracked and c.job in committed}:
        assert job in current, f"{job} counts but read no allowed version of its source"
    # 3. no deleted node returns
    assert not deleted & set(nodes) and not deleted & set(chains)
    # 4. no chain dangles, in the fold and in the view; and the fold is what the raw lines of
    # the counted jobs say (read here from the ledgers, not through the store's own fold, which
    # already drops dangling chains): every counted chain line whose members are all counted
    # nodes is a chain, and no other
    for chain in chains.values():
        assert {*chain.premises, chain.conclusion} <= set(nodes), chain
    gone = {i for line in pipe.ledger("deleted", DeletionLine) for i in line.ids}
    live = {line.id for line in lines if line.provenance.job in committed and line.id not in gone}
    assert set(nodes) == live, set(nodes) ^ live
    counted = [
        c for c in pipe.ledger("chains", ChainLine) if c.provenance.job in committed and c.id not in gone
    ]
    whole = {c.id for c in counted if {*c.premises, c.conclusion} <= live}
    assert set(chains) == whole, set(chains) ^ whole
    view = derive_view(nodes, chains, {}, {})
    ids = {n["id"] for n in view["nodes"]}
    assert all(link["source"] in ids and link["target"] in ids for link in view["links"])
