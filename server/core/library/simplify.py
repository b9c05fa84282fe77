"""Chain simplification: the merger's pruning of provably redundant chains (seed §6).

Chain simplification (seed §6, made sound): a chain `P ⟹ Y` is redundant when some kept chain
`Q ⟹ Y` for the same conclusion has every premise of `Q` derivable from `P` through kept chains.
That covers both cases the seed names: strict containment (`Q ⊂ P`, so fewer premises win) and
ancestry-cover (`[A,B]⟹X` + `[X,C]⟹Y` make `[A,B,C]⟹Y` redundant). Chains are considered in
(premise count, creation time, id) order and each drop is justified by chains that stay, so the
graph derives exactly what it derived before. `simplify` re-checks only chains whose conclusion is
a new chain's conclusion or downstream of it: its cost does not grow with unrelated parts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping

from server.core.contracts.graph import (
    Chain,
)


def chain_key(premises: Iterable[str], conclusion: str) -> tuple[tuple[str, ...], str]:
    """A chain's identity: (its distinct premises sorted, its conclusion); what its id digests."""
    return tuple(sorted(set(premises))), conclusion


_NONE: tuple[Chain, ...] = ()


class ChainIndex:
    """Chains by premise and by conclusion: what simplification walks instead of every chain.

    Build it once over a graph's chains and keep it with them (`add` / `discard` as chains come
    and go): `simplify` given an index costs what the changed part of the graph costs, not a pass
    over every chain. `over` layers a few more chains on top without copying or mutating this one.

    Args:
        chains: the chains to index (each indexed once; a premise listed twice counts once).
        base: an index these chains are layered over (none of them may already be in it).
    """

    def __init__(self, chains: Iterable[Chain] = (), base: ChainIndex | None = None) -> None:
        self._base = base
        self._ids: set[str] = set()
        self._by_premise: dict[str, list[Chain]] = defaultdict(list)
        self._by_conclusion: dict[str, list[Chain]] = defaultdict(list)
        for chain in chains:
            self.add(chain)

    def __contains__(self, chain_id: object) -> bool:
        """Whether a chain of this id is indexed (in this layer or below)."""
        return chain_id in self._ids or (self._base is not None and chain_id in self._base)

    def __len__(self) -> int:
        return len(self._ids) + (len(self._base) if self._base is not None else 0)

    def add(self, chain: Chain) -> None:
        """Index this chain in this layer (a chain whose id is indexed here already: no-op)."""
        if chain.id in self._ids:
            return
        self._ids.add(chain.id)
        for premise in dict.fromkeys(chain.premises):
            self._by_premise[premise].append(chain)
        self._by_conclusion[chain.conclusion].append(chain)

    def discard(self, chain: Chain) -> None:
        """Take this chain out of this layer (matched by id; absent: no-op)."""
        if chain.id not in self._ids:
            return
        self._ids.discard(chain.id)
        keys = [(p, self._by_premise) for p in dict.fromkeys(chain.premises)]
        for key, table in [*keys, (chain.conclusion, self._by_conclusion)]:
            rules = table.get(key)
            if rules is None:
                continue
            rules[:] = [r for r in rules if r.id != chain.id]
            if not rules:
                del table[key]

    def premised(self, node: str) -> Iterable[Chain]:
        """The chains with `node` among their premises."""
        own = self._by_premise.get(node, _NONE)
        if self._base is None:
            return own
        below = self._base.premised(node)
        return [*own, *below] if own else below

    def concluding(self, node: str) -> Iterable[Chain]:
        """The chains concluding `node`."""
        own = self._by_conclusion.get(node, _NONE)
        if self._base is None:
            return own
        below = self._base.concluding(node)
        return [*own, *below] if own else below

    def over(self, chains: Iterable[Chain]) -> ChainIndex:
        """This index plus `chains` (none of them indexed here), leaving this one as it is."""
        return ChainIndex(chains, base=self)


def _downstream(conclusions: set[str], premised: Callable[[str], Iterable[Chain]]) -> set[str]:
    """The given nodes and every node derivable downstream of them."""
    seen = set(conclusions)
    stack = list(conclusions)
    while stack:
        node = stack.pop()
        for chain in premised(node):
            if chain.conclusion not in seen:
                seen.add(chain.conclusion)
                stack.append(chain.conclusion)
    return seen


def simplify(
    chains: Mapping[str, Chain], changed: Iterable[Chain] | None = None, index: ChainIndex | None = None
) -> set[str]:
    """Ids of provably redundant chains (see the module docstring).

    Args:
        chains: every current chain, by id.
        changed: the chains just added; only chains whose conclusion is one of theirs or
            downstream of one are re-checked (the rest stay as they were). None re-checks all.
        index: the `ChainIndex` of exactly `chains`, when the caller keeps one (built here when
            None: a pass over every chain). With it and `changed`, the cost is local.

    Returns:
        The ids to drop; the chains that remain derive everything the input derived.
    """
    if index is None:
        index = ChainIndex(chains.values())
    if changed is None:
        candidates = list(chains.values())
    else:
        affected = _downstream({c.conclusion for c in changed}, index.premised)
        candidates = [c for node in affected for c in index.concluding(node)]
    unkept = {c.id for c in candidates}  # undecided or dropped: not usable to justify a drop
    dropped: set[str] = set()
    for chain in sorted(candidates, key=lambda c: (len(c.premises), c.created_at, c.id)):
        if _redundant(chain, index.concluding, index.premised, unkept):
            dropped.add(chain.id)
        else:
            unkept.discard(chain.id)
    return dropped


def restorable(
    archived: Mapping[str, Chain], chains: Mapping[str, Chain], nodes: Mapping[str, object]
) -> list[Chain]:
    """Chains simplification once dropped that the graph no longer derives (the chains that made
    them redundant were retired): each archived chain whose members all exist, that is not a
    current chain, and that the current chains (plus those restored before it, in simplification's
    order) do not make redundant. Restoring them keeps the law that the graph derives everything
    its counted sources asserted (seed §6, chain simplification; docs/decisions/0010-...)."""
    current = {chain_key(c.premises, c.conclusion) for c in chains.values()}
    candidates = [
        c
        for cid, c in archived.items()
        if cid not in chains
        and chain_key(c.premises, c.conclusion) not in current
        and c.conclusion in nodes
        and all(p in nodes for p in c.premises)
    ]
    kept = ChainIndex(chains.values())
    restored: list[Chain] = []
    for chain in sorted(candidates, key=lambda c: (len(c.premises), c.created_at, c.id)):
        if not _redundant(chain, kept.concluding, kept.premised):
            restored.append(chain)
            kept.add(chain)
    return restored


def _redundant(
    chain: Chain,
    concluding: Callable[[str], Iterable[Chain]],
    premised: Callable[[str], Iterable[Chain]],
    unkept: Collection[str] = (),
) -> bool:
    """Whether a kept chain for the same conclusion has all its premises derivable from this
    chain's premises through kept chains that do not conclude it.

    Args:
        chain: the chain under test.
        concluding / premised: the indexed chains concluding / with a premise a node (may include
            chains that are not kept; those are named in `unkept`).
        unkept: ids of indexed chains that do not count (undecided or dropped candidates).

    Local: forward-chains from the given premises, touching only chains with a premise already
    derived, and stops as soon as one rival's premises are all derived. Derivations never pass
    through the conclusion itself (chains concluding it are not used). Cycles are harmless.
    """
    target = chain.conclusion
    rivals = [r for r in concluding(target) if r.id not in unkept]
    if not rivals:
        return False
    derived = set(chain.premises)
    remaining: list[int] = []
    waits: dict[str, list[int]] = defaultdict(list)
    for index, rival in enumerate(rivals):
        unmet = {p for p in rival.premises if p not in derived}
        if not unmet:
            return True
        remaining.append(len(unmet))
        for premise in unmet:
            waits[premise].append(index)
    done: set[str] = set()
    missing: dict[str, int] = {}
    queue = list(derived)
    while queue:
        node = queue.pop()
        done.add(node)
        for rule in premised(node):
            conclusion = rule.conclusion
            if conclusion in derived or conclusion == target or rule.id in unkept:
                continue
            left = missing.get(rule.id)
            if left is None:
                left = sum(1 for p in set(rule.premises) if p not in done)
            else:
                left -= 1
            missing[rule.id] = left
            if left:
                continue
            derived.add(conclusion)
            for index in waits.get(conclusion, ()):
                remaining[index] -= 1
                if remaining[index] == 0:
                    return True
            queue.append(conclusion)
    return False
