"""The extraction pipeline's auditor (seed §6): it never sees the source; it gets the findings'
propositions with candidate existing nodes, may explore the graph read-only (`find`,
`list_sessions`, `list_propositions`), and submits identity links only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from server.agent.library.agent_cache import cached_agent
from server.agent.prompts import load_prompt
from server.core.contracts.graph import Findings, Proposition, Verdicts
from server.core.library.candidates import search


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
    max_tokens) and shared (`cached_agent`)."""

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

    return cached_agent(("auditor", max_tokens), model, build)


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


async def run_auditor(
    agent: Agent[AuditDeps, Verdicts], prompt: str, deps: AuditDeps, usage: RunUsage
) -> Verdicts:
    result = await agent.run(prompt, deps=deps, usage=usage)
    return result.output
