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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, get_args

from pydantic_ai import Agent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from server.agent.prompts import load_prompt
from server.core.contracts.graph import Chain, Findings, PackedFindings, Proposition, SourceKind, Verdicts
from server.core.library.candidates import search
from server.core.library.graph import findings_problems
from server.core.library.packing import pack_problems
from server.core.tokens import estimate_tokens

EXTRACTOR_TURNS = 4
INSTRUCTIONS: dict[SourceKind, str] = {"chat": "extraction_session", "notes": "extraction_notes"}
"""The prompt each kind of source's extractor reads after `extraction_core`: a lesson's (a
session's teacher prose) or a notes file's."""


def _instructions(kind: SourceKind) -> str:
    return load_prompt("extraction_core") + "\n\n" + load_prompt(INSTRUCTIONS[kind])


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


RETRY_ANSWER_TOKENS = 512
"""A windowed model's least answer room on a retry (its own tokens): a retry keeps the first
request whole and cuts the failed answer it carries back, and its retry prompt, to leave this."""
CUT_NOTE = "(cut to fit the model's context window)"


@dataclass(frozen=True)
class Window:
    """A model's known small context window (the offline model's).

    Attributes:
        tokens: the window, in the model's own tokens.
        per_estimate: the model's tokens per `estimate_tokens` token.
        answer_tokens: the answer cap of a first request (`max_tokens`, the model's tokens).
        overhead_tokens: what every request carries besides its messages (instructions, tool
            schema), estimated tokens.
    """

    tokens: int
    per_estimate: float
    answer_tokens: int
    overhead_tokens: int


def _part_tokens(part: object) -> int:
    if isinstance(part, UserPromptPart):
        return estimate_tokens(part.content) if isinstance(part.content, str) else 0
    if isinstance(part, TextPart):
        return estimate_tokens(part.content)
    if isinstance(part, ToolCallPart):
        return estimate_tokens(part.tool_name + part.args_as_json_str())
    if isinstance(part, RetryPromptPart):
        return estimate_tokens(part.model_response())
    if isinstance(part, ToolReturnPart):
        return estimate_tokens(part.model_response_str())
    return 0


def messages_tokens(messages: Sequence[ModelMessage]) -> int:
    """The estimated tokens (`estimate_tokens`) of the messages' texts, tool calls and returns."""
    return sum(_part_tokens(p) for m in messages for p in m.parts)


def _cut_text(text: str, tokens: int) -> str:
    keep = max(0, tokens * 4 - len(CUT_NOTE) - 2)
    return text if estimate_tokens(text) <= tokens else text[:keep] + "… " + CUT_NOTE


def _without_input(error: Any) -> Any:
    return {k: v for k, v in error.items() if k != "input"} if isinstance(error, dict) else error


def _cut_part(part: Any, tokens: int) -> Any:
    if isinstance(part, TextPart):
        return replace(part, content=_cut_text(part.content, tokens))
    if isinstance(part, ToolCallPart):
        args = part.args_as_json_str()
        if estimate_tokens(part.tool_name + args) <= tokens:
            return part
        return replace(part, args={"cut": _cut_text(args, max(0, tokens - 8))})
    if isinstance(part, RetryPromptPart | ToolReturnPart) and isinstance(part.content, list):
        # a refused submit's reasons each repeat the input they refused: the reasons go back alone
        reasons: list[Any] = [_without_input(e) for e in part.content]
        part = replace(part, content=reasons)
    if isinstance(part, RetryPromptPart) and _part_tokens(part) > tokens:
        return replace(part, content=_cut_text(part.model_response(), tokens))
    if isinstance(part, ToolReturnPart) and _part_tokens(part) > tokens:
        return replace(part, content=_cut_text(part.model_response_str(), max(0, tokens - 4)))
    return part


def _cut_message(message: ModelMessage, tokens: int) -> ModelMessage:
    """`message` with its parts cut to about `tokens` estimated tokens in all (shared evenly)."""
    sized = [p for p in message.parts if _part_tokens(p)]
    if not sized or messages_tokens([message]) <= tokens:
        return message
    each = max(0, tokens // len(sized))
    if isinstance(message, ModelRequest):
        return replace(message, parts=[_cut_part(p, each) for p in message.parts])
    return replace(message, parts=[_cut_part(p, each) for p in message.parts])


def fit_retry_history(messages: list[ModelMessage], window: Window) -> list[ModelMessage]:
    """The messages a windowed model's next request sends (seed §6 budgets; offline model).

    A first request is sent as it is. A retry keeps the first request (the user prompt, whole),
    the LAST failed answer and its retry prompt only: older failed answers are dropped (pydantic-ai
    re-sends the whole run, and a small model's invalid answers run to a thousand tokens each).
    The failed answer, then the retry prompt, are cut (`CUT_NOTE`) so that the request leaves the
    answer `RETRY_ANSWER_TOKENS`. Pure; the kept messages are copies when cut."""
    if len(messages) < 3:
        return messages
    first, answer, retry = messages[0], messages[-2], messages[-1]
    limit = int((window.tokens - RETRY_ANSWER_TOKENS) / window.per_estimate) - window.overhead_tokens
    room = max(0, limit - messages_tokens([first]))
    retry_tokens = messages_tokens([retry])
    retry_room = max(room // 2, room - messages_tokens([answer]))
    if retry_tokens > retry_room:
        retry = _cut_message(retry, retry_room)
    answer = _cut_message(answer, max(0, room - messages_tokens([retry])))
    return [first, answer, retry]


def answer_room(messages: Sequence[ModelMessage], window: Window) -> int:
    """The answer cap (`max_tokens`, the model's tokens) a request of `messages` leaves in the
    window: the first request's cap, lowered to what is left (at least 1; a request that leaves
    nothing fails plainly, `context_exceeded`)."""
    used = (window.overhead_tokens + messages_tokens(messages)) * window.per_estimate
    return max(1, min(window.answer_tokens, int(window.tokens - used)))


@dataclass
class FitWindow(AbstractCapability[Any]):
    """A windowed model's requests fit its window: retries carry one failed answer, cut
    (`fit_retry_history`), and each request's answer cap is what the window leaves
    (`answer_room`). Keyed models never get it."""

    window: Window

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        messages = fit_retry_history(list(request_context.messages), self.window)
        request_context.messages = list(messages)
        ctx.messages[:] = messages
        request_context.model_settings = {
            **(request_context.model_settings or {}),
            "max_tokens": answer_room(messages, self.window),
        }
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # takes a window, not a spec


def bounded_digest(text: str, tokens: int) -> str:
    """THE GRAPH SO FAR (`digest`) cut to at most `tokens` estimated tokens for a windowed model:
    its heading and its LAST lines that fit (the latest stretches' propositions, the likeliest
    to continue), in order; "" when not even one line fits."""
    if estimate_tokens(text) <= tokens:
        return text
    heading, *lines = text.split("\n")
    left = tokens - estimate_tokens(heading + "\n")
    kept: list[str] = []
    for line in reversed(lines):
        cost = estimate_tokens(line + "\n")
        if cost > left:
            break
        kept.append(line)
        left -= cost
    return "\n".join([heading, *reversed(kept)]) if kept else ""


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
    model: Model, kind: SourceKind, max_tokens: int | None, window: Window | None = None
) -> Agent[Mapping[str, object], Findings]:
    agent: Agent[Mapping[str, object], Findings] = Agent(
        model,
        deps_type=Mapping[str, object],  # the node ids, per run
        instructions=_instructions(kind),
        name="extractor",
        output_type=ToolOutput(Findings, name="submit", description=SUBMIT_DESCRIPTION),
        retries={"tools": EXTRACTOR_TURNS - 1, "output": EXTRACTOR_TURNS - 1},
        model_settings=ModelSettings(max_tokens=max_tokens) if max_tokens else None,
        capabilities=[FitWindow(window)] if window is not None else None,
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
    source: the instructions (the larger kind's) and the submit tool's name, description and
    JSON schema, as sent. The chunk budget leaves room for them (`fitting_chunk_tokens`)."""
    instructions = max((_instructions(kind) for kind in get_args(SourceKind)), key=len)
    schema = json.dumps(Findings.model_json_schema())
    return estimate_tokens(instructions) + estimate_tokens("submit " + SUBMIT_DESCRIPTION + schema)


def build_extractor(
    model: Model,
    *,
    kind: SourceKind,
    existing: Mapping[str, object],
    max_tokens: int | None = None,
    window: Window | None = None,
) -> Extractor:
    """The extractor for one job. `existing` holds the graph's node ids (valid chain endpoints).
    `window`: the model's known small context window (the offline model's), whose requests then
    fit it (`FitWindow`); None for keyed models (their requests as before).
    `kind`: the source's (a lesson's teacher prose or a notes file), which names its instructions.
    The agent is built once per (model, kind, max_tokens, window) and shared (`_cached_agent`)."""
    agent = _cached_agent(
        ("extractor", kind, max_tokens, window),
        model,
        lambda: _extractor_agent(model, kind, max_tokens, window),
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
    """The extractor for a pack of small notes (decision 0023): the notes' instructions plus
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


def windowed_prompt(source_text: str, graph_so_far: str, window: Window | None) -> str:
    """`extractor_prompt`, with THE GRAPH SO FAR cut (`bounded_digest`) for a windowed model to
    what its first request leaves after the source, the instructions, the tool schema and the
    answer's room (offline model: notes import); keyed models (`window` None) get it whole."""
    if window is None or not graph_so_far:
        return extractor_prompt(source_text, graph_so_far)
    fits = int((window.tokens - window.answer_tokens) / window.per_estimate) - window.overhead_tokens
    room = fits - estimate_tokens(extractor_prompt(source_text, "") + "\n\n")
    return extractor_prompt(source_text, bounded_digest(graph_so_far, room))


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
