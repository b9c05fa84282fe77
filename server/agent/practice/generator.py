"""Practice's generator (seed §7): one per problem, it writes the statement, solution and rubric
together; the echo law: its submit's chain ids are exactly its target's."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai import Agent, ModelRetry, ToolOutput
from pydantic_ai.models import Model

from server.agent.practice.submits import TURNS, Generated, stage_settings
from server.agent.practice.texts import chains_text, propositions_text
from server.agent.prompts import load_prompt
from server.core.contracts.practice import PracticeChain, PracticeParams, PracticeProposition
from server.core.practice.levels import render_params


def build_generator(
    model: Model, target: Sequence[str], *, max_tokens: int | None = None
) -> Agent[None, Generated]:
    """One problem's generator; the echo law: its submit's chain set equals `target`."""
    agent: Agent[None, Generated] = Agent(
        model,
        instructions=load_prompt("practice_generator"),
        name="generator",
        output_type=ToolOutput(
            Generated, name="submit", description="Submit the problem, its solution, its rubric."
        ),
        retries={"tools": TURNS - 1, "output": TURNS - 1},
        model_settings=stage_settings(max_tokens),
    )
    wanted = set(target)

    @agent.output_validator
    def _echo_law(generated: Generated) -> Generated:
        got = set(generated.chain_ids)
        if got != wanted or len(generated.chain_ids) != len(got):
            missing = sorted(wanted - got)
            extra = sorted(got - wanted)
            detail = []
            if missing:
                detail.append(f"missing {', '.join(missing)}")
            if extra:
                detail.append(f"not yours {', '.join(extra)}")
            if len(generated.chain_ids) != len(got):
                detail.append("an id repeated")
            raise ModelRetry(
                "chainIds must be exactly YOUR TARGET's ids, each once ("
                + "; ".join(detail)
                + f"); they are: {', '.join(sorted(wanted))}. Submit again."
            )
        return generated

    return agent


def generator_prompt(
    *,
    target: Sequence[PracticeChain],
    chains: Sequence[PracticeChain],
    propositions: Sequence[PracticeProposition],
    params: PracticeParams,
    note: str,
    recent: Sequence[str],
) -> str:
    """The levels, the target chains (ids to echo), the full set as supporting material, the
    learner's note, and `recent` problems' situations not to repeat (`title: statement` lines)."""
    names = {p.id: p.name for p in propositions}
    parts = [
        f"THE LEVELS OF THIS SET:\n{render_params(params)}",
        f"YOUR TARGET (echo these ids in chainIds):\n{chains_text(target, names)}",
        f"THE FULL SET (supporting material; never announce any of it):\n{propositions_text(propositions)}\n"
        f"{chains_text(chains, names)}",
    ]
    if note.strip():
        parts.append(f"THE LEARNER'S NOTE (weigh it):\n{note.strip()}")
    if recent:
        listed = "\n".join(f"- {r}" for r in recent)
        parts.append(f"RECENT PROBLEMS ON THESE PROPOSITIONS (do not repeat their situations):\n{listed}")
    return "\n\n".join(parts)
