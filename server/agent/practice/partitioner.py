"""Practice's partitioner (seed §7): divides a set's chains into groups, one per problem; its
submit must be a true partition of the chain ids (every id in exactly one group)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai import Agent, ModelRetry, ToolOutput
from pydantic_ai.models import Model

from server.agent.practice.submits import TURNS, Partition, stage_settings
from server.agent.practice.texts import chains_text, propositions_text
from server.agent.prompts import load_prompt
from server.core.contracts.practice import PracticeChain, PracticeParams, PracticeProposition
from server.core.practice.chains import chain_coverage
from server.core.practice.levels import render_params


def build_partitioner(
    model: Model, chain_ids: Sequence[str], *, max_tokens: int | None = None
) -> Agent[None, Partition]:
    """The partitioner; its submit must be a true partition of `chain_ids`."""
    agent: Agent[None, Partition] = Agent(
        model,
        instructions=load_prompt("practice_partitioner"),
        name="partitioner",
        output_type=ToolOutput(Partition, name="submit", description="Submit the groups, one per problem."),
        retries={"tools": TURNS - 1, "output": TURNS - 1},
        model_settings=stage_settings(max_tokens),
    )

    @agent.output_validator
    def _true_partition(partition: Partition) -> Partition:
        coverage = chain_coverage(chain_ids, [g.chain_ids for g in partition.groups])
        if not coverage.ok:
            raise ModelRetry(
                "The partition was refused: " + "; ".join(coverage.problems()) + ". Submit again."
            )
        return partition

    return agent


def partitioner_prompt(
    chains: Sequence[PracticeChain],
    propositions: Sequence[PracticeProposition],
    params: PracticeParams,
    note: str = "",
) -> str:
    """The levels, the chains (ids to copy), the propositions, and the learner's note when there
    is one (seed §7: the partitioner and every generator weigh it)."""
    names = {p.id: p.name for p in propositions}
    prompt = (
        f"THE LEVELS OF THIS SET:\n{render_params(params)}\n\n"
        f"THE CHAINS ({len(chains)}):\n{chains_text(chains, names)}\n\n"
        f"THE PROPOSITIONS:\n{propositions_text(propositions)}"
    )
    if note.strip():
        prompt += f"\n\nTHE LEARNER'S NOTE (weigh it; the law of the partition wins):\n{note.strip()}"
    return prompt
