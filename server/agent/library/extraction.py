"""The extraction pipeline's model stages (seed §6): the extractor and the auditor.

- The extractor sees only the source (teacher prose or a notes chunk) and, from a source's
  second stretch on, THE GRAPH SO FAR for that source (ids verbatim) so it builds on it. It
  submits propositions and chains; a submit that breaks the chain laws goes back to it with the
  reasons (at most 4 turns in all).
- The auditor never sees the source: it gets the findings' propositions with candidate existing
  nodes, may explore the graph read-only (`find`, `list_sessions`, `list_propositions`), and
  submits identity links only.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic_ai import Agent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from server.agent.prompts import load_prompt
from server.core.contracts.graph import Chain, Findings, PackedFindings, Proposition, Verdicts
from server.core.library.candidates import search
from server.core.library.graph import findings_problems
from server.core.library.packing import pack_problems
from server.core.tokens import estimate_tokens

Door = Literal["session", "notes"]
EXTRACTOR_TURNS = 4


def digest(nodes: Mapping[str, Proposition], chains: Mapping[str, Chain], source: str) -> str:
    """THE GRAPH SO FAR for one source: its propositions and the chains among them."""
    own = {nid: n for nid, n in nodes.items() if source in n.sources}
    if not own:
        return ""
    lines = ["THE GRAPH SO FAR (this source's merged propositions and chains; reuse these ids):"]
    lines += [f"- {n.id}: {n.name} — {n.statement}" for n in own.values()]
    for chain in chains.values():
        if source in chain.sources:
            names = " ∧ ".join(chain.premises)
            lines.append(f"- chain {chain.id}: {names} ⟹ {chain.conclusion}")
    return "\n".join(lines)


AGENT_CACHE_SIZE = 8
"""Agents kept built (issue 16): building one costs ≈ 20 ms of schema generation on the event
loop, per job before; an agent holds no run state, so runs share it."""
_agents: dict[tuple[object, ...], tuple[Model, Agent[Any, Any]]] = {}


def _cached_agent(
    key: tuple[object, ...], model: Model, build: Callable[[], Agent[Any, Any]]
) -> Agent[Any, Any]:
    """The agent built for (`model`, `key`), built once per model object; at most
    `AGENT_CACHE_SIZE` kept (the oldest goes). The model is held with it, so its id is not reused."""
    full = (id(model), *key)
    hit = _agents.get(full)
    if hit is not None and hit[0] is model:
        return hit[1]
    agent = build()
    if len(_agents) >= AGENT_CACHE_SIZE:
        _agents.pop(next(iter(_agents)))
    _agents[full] = (model, agent)
    return agent


@dataclass(frozen=True)
class Extractor:
    """An extractor for one job: the shared agent (see `build_extractor`) and the graph's node ids
    its submit's chains may name, given to the run as its deps."""

    agent: Agent[Mapping[str, object], Findings]
    existing: Mapping[str, object]


def _extractor_agent(
    model: Model, door: Door, max_tokens: int | None
) -> Agent[Mapping[str, object], Findings]:
    agent: Agent[Mapping[str, object], Findings] = Agent(
        model,
        deps_type=Mapping[str, object],  # the node ids, per run
        instructions=load_prompt("extraction_core") + "\n\n" + load_prompt(f"extraction_{door}"),
        name="extractor",
        output_type=ToolOutput(Findings, name="submit", description=SUBMIT_DESCRIPTION),
        retries={"tools": EXTRACTOR_TURNS - 1, "output": EXTRACTOR_TURNS - 1},
        model_settings=ModelSettings(max_tokens=max_tokens) if max_tokens else None,
    )

    @agent.output_validator
    def _chain_laws(ctx: RunContext[Mapping[str, object]], findings: Findings) -> Findings:
        problems = findings_problems(findings, ctx.deps)
        if problems:
            raise ModelRetry("The submit was refused: " + "; ".join(problems) + ". Submit again.")
        return findings

    return agent


SUBMIT_DESCRIPTION = "Submit the propositions and chains."


@functools.cache
def extractor_overhead_tokens() -> int:
    """The estimated tokens (`estimate_tokens`) every extractor request carries besides its
    source: the instructions (the larger door's) and the submit tool's name, description and
    JSON schema, as sent. The chunk budget leaves room for them (`fitting_chunk_tokens`)."""
    instructions = max(
        (
            load_prompt("extraction_core") + "\n\n" + load_prompt(f"extraction_{door}")
            for door in get_args(Door)
        ),
        key=len,
    )
    schema = json.dumps(Findings.model_json_schema())
    return estimate_tokens(instructions) + estimate_tokens("submit " + SUBMIT_DESCRIPTION + schema)


def build_extractor(
    model: Model, *, door: Door, existing: Mapping[str, object], max_tokens: int | None = None
) -> Extractor:
    """The extractor for one job. `existing` holds the graph's node ids (valid chain endpoints).
    The agent is built once per (model, door, max_tokens) and shared (`_cached_agent`)."""
    agent = _cached_agent(
        ("extractor", door, max_tokens), model, lambda: _extractor_agent(model, door, max_tokens)
    )
    return Extractor(agent, existing)


@dataclass(frozen=True)
class PackDeps:
    """A pack run's deps: the note ids its submit may name (`src_...`) and the graph's node ids
    (valid chain endpoints)."""

    notes: Collection[str]
    existing: Mapping[str, object]


@dataclass(frozen=True)
class PackExtractor:
    """An extractor for one pack: the shared pack agent (see `build_pack_extractor`) and the
    pack's deps, given to the run."""

    agent: Agent[PackDeps, PackedFindings]
    deps: PackDeps


def _pack_agent(model: Model, max_tokens: int | None) -> Agent[PackDeps, PackedFindings]:
    agent: Agent[PackDeps, PackedFindings] = Agent(
        model,
        deps_type=PackDeps,  # the pack's note ids and the graph's node ids, per run
        instructions="\n\n".join(
            [load_prompt("extraction_core"), load_prompt("extraction_notes"), load_prompt("extraction_pack")]
        ),
        name="extractor",
        output_type=ToolOutput(
            PackedFindings,
            name="submit",
            description="Submit the propositions and chains, each naming its note.",
        ),
        retries={"tools": EXTRACTOR_TURNS - 1, "output": EXTRACTOR_TURNS - 1},
        model_settings=ModelSettings(max_tokens=max_tokens) if max_tokens else None,
    )

    @agent.output_validator
    def _pack_laws(ctx: RunContext[PackDeps], packed: PackedFindings) -> PackedFindings:
        problems = pack_problems(packed, ctx.deps.notes, ctx.deps.existing)
        if problems:
            raise ModelRetry("The submit was refused: " + "; ".join(problems) + ". Submit again.")
        return packed

    return agent


def build_pack_extractor(
    model: Model, *, notes: Collection[str], existing: Mapping[str, object], max_tokens: int | None = None
) -> PackExtractor:
    """The extractor for a pack of small notes (decision 0023): the notes door's instructions plus
    the pack's, and a submit whose every proposition and chain names its note. A submit naming
    a note not in `notes`, or breaking the chain laws, goes back to it with the reasons. The agent
    is built once per (model, max_tokens) and shared (`_cached_agent`; issue 16: one built per
    pack held its schemas and the pack's graph in its validator's closure); `notes` and
    `existing` reach its validator as the run's deps."""
    agent = _cached_agent(("pack", max_tokens), model, lambda: _pack_agent(model, max_tokens))
    return PackExtractor(agent, PackDeps(notes, existing))


def extractor_prompt(source_text: str, graph_so_far: str) -> str:
    parts = [graph_so_far] if graph_so_far else []
    parts.append("THE SOURCE:\n" + source_text)
    return "\n\n".join(parts)


@dataclass
class AuditDeps:
    """The auditor's read-only view of the graph.

    Attributes:
        nodes: every merged proposition.
        sessions: source id -> title (chats and notes files).
    """

    nodes: Mapping[str, Proposition]
    sessions: Mapping[str, str] = field(default_factory=dict)


def _node_row(node: Proposition) -> dict[str, Any]:
    return {"id": node.id, "name": node.name, "statement": node.statement, "aliases": node.aliases}


async def find(ctx: RunContext[AuditDeps], query: str) -> list[dict[str, Any]]:
    """Fuzzy search over existing nodes' names, aliases and statements (at most 8 hits)."""
    return [_node_row(ctx.deps.nodes[i]) for i in search(query, ctx.deps.nodes)]


async def list_sessions(ctx: RunContext[AuditDeps]) -> list[dict[str, Any]]:
    """The graph's birth sessions (lessons and notes files) with how many propositions each has."""
    counts: dict[str, int] = {}
    for node in ctx.deps.nodes.values():
        for source in node.sources:
            counts[source] = counts.get(source, 0) + 1
    return [{"id": s, "title": ctx.deps.sessions.get(s, s), "propositions": n} for s, n in counts.items()]


async def list_propositions(ctx: RunContext[AuditDeps], session: str) -> list[dict[str, Any]]:
    """The propositions a session (a `list_sessions` id) gave the graph."""
    rows = [_node_row(n) for n in ctx.deps.nodes.values() if session in n.sources]
    if not rows:
        raise ModelRetry(f"no session {session!r}; call list_sessions for the ids")
    return rows


def build_auditor(model: Model, *, max_tokens: int | None = None) -> Agent[AuditDeps, Verdicts]:
    """The auditor: identity links only, with read-only graph tools. Built once per (model,
    max_tokens) and shared (`_cached_agent`)."""

    def build() -> Agent[AuditDeps, Verdicts]:
        return Agent(
            model,
            deps_type=AuditDeps,
            instructions=load_prompt("auditor"),
            name="auditor",
            tools=[find, list_sessions, list_propositions],
            output_type=ToolOutput(Verdicts, name="submit", description="Submit the identity links."),
            retries={"tools": 2, "output": 2},
            model_settings=ModelSettings(max_tokens=max_tokens) if max_tokens else None,
        )

    return _cached_agent(("auditor", max_tokens), model, build)


def auditor_prompt(
    findings: Findings,
    candidates: Mapping[str, list[str]],
    nodes: Mapping[str, Proposition],
    batch: Mapping[str, list[str]] | None = None,
    shared: bool = False,
) -> str:
    """The auditor's user prompt: each proposition with its candidate existing nodes and (`batch`:
    finding id -> earlier finding ids) its same-list candidates. `shared` (a pack of notes,
    decision 0023): every candidate node is written once, in a list before the propositions, and
    each proposition names its candidates and same-list candidates by id (a pack's propositions
    share many candidates: each was written up to once per proposition)."""
    by_id = {p.id: p for p in findings.propositions}
    if shared:
        return _shared_auditor_prompt(findings, candidates, nodes, batch or {})
    lines = ["PROPOSITIONS TO JUDGE (with candidate existing nodes):"]
    for prop in findings.propositions:
        lines.append(f"- {prop.id}: {prop.name} — {prop.statement}")
        for node_id in candidates.get(prop.id, []):
            node = nodes[node_id]
            lines.append(f"    candidate {node.id}: {node.name} — {node.statement}")
        twins = [by_id[t] for t in (batch or {}).get(prop.id, []) if t in by_id]
        for twin in twins:
            lines.append(f"    same-list candidate {twin.id}: {twin.name} — {twin.statement}")
        if not candidates.get(prop.id) and not twins:
            lines.append("    (no candidates found)")
    return "\n".join(lines)


def _shared_auditor_prompt(
    findings: Findings,
    candidates: Mapping[str, list[str]],
    nodes: Mapping[str, Proposition],
    batch: Mapping[str, list[str]],
) -> str:
    ids = {p.id for p in findings.propositions}
    listed = list(
        dict.fromkeys(n for p in findings.propositions for n in candidates.get(p.id, []) if n in nodes)
    )
    lines = []
    if listed:
        lines.append("CANDIDATE EXISTING NODES (each written once; the propositions name them by id):")
        lines += [f"- {nodes[n].id}: {nodes[n].name} — {nodes[n].statement}" for n in listed]
        lines.append("")
    lines.append(
        "PROPOSITIONS TO JUDGE (each with its candidates' ids; same-list candidates are earlier "
        "propositions of this list):"
    )
    for prop in findings.propositions:
        lines.append(f"- {prop.id}: {prop.name} — {prop.statement}")
        existing = [n for n in candidates.get(prop.id, []) if n in nodes]
        twins = [t for t in batch.get(prop.id, []) if t in ids]
        if existing:
            lines.append("    candidates: " + ", ".join(existing))
        if twins:
            lines.append("    same-list candidates: " + ", ".join(twins))
        if not existing and not twins:
            lines.append("    (no candidates found)")
    return "\n".join(lines)


async def run_extractor(extractor: Extractor, prompt: str, usage: RunUsage) -> Findings:
    """Run the extractor; `usage` accumulates even when it fails (partial spend is billed)."""
    result = await extractor.agent.run(prompt, deps=extractor.existing, usage=usage)
    return result.output


async def run_pack_extractor(extractor: PackExtractor, prompt: str, usage: RunUsage) -> PackedFindings:
    """Run a pack's extractor; `usage` accumulates even when it fails."""
    result = await extractor.agent.run(prompt, deps=extractor.deps, usage=usage)
    return result.output


async def run_auditor(
    agent: Agent[AuditDeps, Verdicts], prompt: str, deps: AuditDeps, usage: RunUsage
) -> Verdicts:
    result = await agent.run(prompt, deps=deps, usage=usage)
    return result.output
