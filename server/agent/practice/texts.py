"""How Practice's agents read a set's frozen world: chains and propositions as prompt lines."""

from __future__ import annotations

from collections.abc import Sequence

from server.core.contracts.practice import PracticeChain, PracticeProposition


def chains_text(chains: Sequence[PracticeChain], names: dict[str, str]) -> str:
    """Chains as the agents read them: id, then premises ⟹ conclusion by name."""
    lines = []
    for chain in chains:
        if chain.premises:
            premises = " ∧ ".join(names.get(p, p) for p in chain.premises)
            lines.append(f"- {chain.id}: {premises} ⟹ {names.get(chain.conclusion, chain.conclusion)}")
        else:
            lines.append(f"- {chain.id}: {names.get(chain.conclusion, chain.conclusion)} (on its own)")
    return "\n".join(lines)


def propositions_text(propositions: Sequence[PracticeProposition]) -> str:
    """Propositions as the agents read them: `- name: statement`, one a line."""
    return "\n".join(f"- {p.name}: {p.statement}" for p in propositions)
