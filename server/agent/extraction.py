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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import Agent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from server.agent.prompts import load_prompt
from server.core.candidates import search
from server.core.contracts.graph import Chain, Findings, Proposition, Verdicts
from server.core.graph import findings_problems

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


def build_extractor(
    model: Model, *, door: Door, existing: Mapping[str, object], max_tokens: int | None = None
) -> Agent[None, Findings]:
    """The extractor for one job. `existing` holds the graph's node ids (valid chain endpoints)."""
    agent: Agent[None, Findings] = Agent(
        model,
        instructions=load_prompt("extraction_core") + "\n\n" + load_prompt(f"extraction_{door}"),
        name="extractor",
        output_type=ToolOutput(Findings, name="submit", description="Submit the propositions and chains."),
        retries={"tools": EXTRACTOR_TURNS - 1, "output": EXTRACTOR_TURNS - 1},
        model_settings=ModelSettings(max_tokens=max_tokens) if max_tokens else None,
    )

    @agent.output_validator
    def _chain_laws(findings: Findings) -> Findings:
        problems = findings_problems(findings, existing)
        if problems:
            raise ModelRetry("The submit was refused: " + "; ".join(problems) + ". Submit again.")
        return findings

    return agent


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
    """The auditor: identity links only, with read-only graph tools."""
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


def auditor_prompt(
    findings: Findings,
    candidates: Mapping[str, list[str]],
    nodes: Mapping[str, Proposition],
    batch: Mapping[str, list[str]] | None = None,
) -> str:
    """The auditor's user prompt: each proposition with its candidate existing nodes and (`batch`:
    finding id -> earlier finding ids) its same-list candidates."""
    by_id = {p.id: p for p in findings.propositions}
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


async def run_extractor(agent: Agent[None, Findings], prompt: str, usage: RunUsage) -> Findings:
    """Run the extractor; `usage` accumulates even when it fails (partial spend is billed)."""
    result = await agent.run(prompt, usage=usage)
    return result.output


async def run_auditor(
    agent: Agent[AuditDeps, Verdicts], prompt: str, deps: AuditDeps, usage: RunUsage
) -> Verdicts:
    result = await agent.run(prompt, deps=deps, usage=usage)
    return result.output
