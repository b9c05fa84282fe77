"""The extraction pipeline's model stages (seed §6): the extractor and the auditor.

- The extractor sees only the source (teacher prose or a notes chunk) and, from a source's
  second stretch on, THE GRAPH SO FAR for that source (ids verbatim) so it builds on it. It
  submits propositions and chains; a submit that breaks the chain laws goes back to it with the
  reasons (at most 4 turns in all); a retry resends only the last refused submit and its
  reasons, bounded (`agent.library.retries`).
- The auditor (`agent.library.auditor`) never sees the source; a windowed model's requests are
  fitted by `agent.library.window`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import get_args

from pydantic_ai import Agent, ModelRetry, RunContext, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from server.agent.library.agent_cache import cached_agent
from server.agent.library.retries import BoundRetries
from server.agent.library.window import FitWindow, Window, bounded_digest
from server.agent.prompts import load_prompt
from server.core.contracts.graph import Chain, Findings, PackedFindings, Proposition, SourceKind
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
        capabilities=[FitWindow(window) if window is not None else BoundRetries()],
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
    The agent is built once per (model, kind, max_tokens, window) and shared (`cached_agent`)."""
    agent = cached_agent(
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
        capabilities=[BoundRetries()],  # a refused pack's retry resent 1.27 MB (issue 28 item 7)
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
    agent = cached_agent(("pack", max_tokens), model, lambda: _pack_agent(model, max_tokens))
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


async def run_extractor(extractor: Extractor, prompt: str, usage: RunUsage) -> Findings:
    """Run the extractor; `usage` accumulates even when it fails (partial spend is billed)."""
    result = await extractor.agent.run(prompt, deps=extractor.existing, usage=usage)
    return result.output


async def run_pack_extractor(extractor: PackExtractor, prompt: str, usage: RunUsage) -> PackedFindings:
    """Run a pack's extractor; `usage` accumulates even when it fails."""
    result = await extractor.agent.run(prompt, deps=extractor.deps, usage=usage)
    return result.output
