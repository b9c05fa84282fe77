"""The chain model of practice (seed §7, chains-primary): which reasoning chains a selection of
propositions makes, and the partition law. Mirrored by
`frontend/src/core/library/chainSelection.ts` (`chainsForSelection`) and
`frontend/src/core/practice/practice.ts` (`chainCoverage`) (`tests/vectors/practice.json`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from server.core.contracts.graph import Chain
from server.core.contracts.practice import PracticeChain

SINGLE_PREFIX = "single_"


def chains_for_selection(selection: Sequence[str], chains: Iterable[Chain]) -> list[PracticeChain]:
    """The chains a selection makes.

    A stored argument is included iff its conclusion and every premise are selected (one missing
    member excludes it whole); each keeps its own `arg_` id, so two arguments for one conclusion
    stay two chains. A selected node that is a member of no included argument is a singleton chain
    (`single_<id>`, no premises). Order: arguments as given, then singletons in selection order.

    Args:
        selection: selected proposition ids (duplicates ignored).
        chains: the graph's stored chains.
    """
    chosen = set(selection)
    included = [
        c for c in chains if c.premises and c.conclusion in chosen and all(p in chosen for p in c.premises)
    ]
    covered = {m for c in included for m in (*c.premises, c.conclusion)}
    out = [PracticeChain(id=c.id, premises=list(c.premises), conclusion=c.conclusion) for c in included]
    seen: set[str] = set()
    for node in selection:
        if node not in covered and node not in seen:
            seen.add(node)
            out.append(PracticeChain(id=f"{SINGLE_PREFIX}{node}", premises=[], conclusion=node))
    return out


@dataclass(frozen=True)
class Coverage:
    """How a partition covers a set's chains: `missing` and `duplicated` both fail it (a true
    partition: variety accumulates across sets, never within one); `unknown` names ids that are no
    chain of the set."""

    missing: list[str]
    duplicated: list[str]
    unknown: list[str]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated or self.unknown)

    def problems(self) -> list[str]:
        """Sentences the partitioner can act on."""
        out = []
        if self.missing:
            out.append(f"these chains are in no group: {', '.join(self.missing)}; put each in exactly one")
        if self.duplicated:
            twice = ", ".join(self.duplicated)
            out.append(f"these chains are in more than one group: {twice}; keep each once")
        if self.unknown:
            out.append(f"these ids are no chain of the set: {', '.join(self.unknown)}; use the ids listed")
        return out


def chain_coverage(chain_ids: Collection[str], partition: Iterable[Iterable[str]]) -> Coverage:
    """Check a partition of `chain_ids` (a list of groups of chain ids)."""
    counts = Counter(cid for group in partition for cid in group)
    known = set(chain_ids)
    ordered = list(dict.fromkeys(chain_ids))
    return Coverage(
        missing=[c for c in ordered if counts[c] == 0],
        duplicated=[c for c in ordered if counts[c] > 1],
        unknown=sorted(c for c in counts if c not in known),
    )


def touched_propositions(chains: Iterable[PracticeChain]) -> list[str]:
    """The proposition ids these chains touch, in order of first mention."""
    return list(dict.fromkeys(m for c in chains for m in (*c.premises, c.conclusion)))
