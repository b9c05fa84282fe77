// What a selection of propositions would practise: the reasoning chains it fully covers.

export interface ChainMembers {
  id: string;
  premises: readonly string[];
  conclusion: string;
}

export interface PracticeChains<C extends ChainMembers = ChainMembers> {
  /** Stored chains whose conclusion and every premise are selected. */
  chains: C[];
  /** Selected propositions in none of those chains: each is a chain of its own. */
  singletons: string[];
  /** chains + singletons: the "M chains" of "N nodes → M chains". */
  count: number;
}

/**
 * The chains a selection (a flat set of proposition ids) makes: a stored chain is included iff
 * its conclusion and every premise are selected; a selected node in no included chain counts as
 * a singleton chain. Ids of chains themselves (implication nodes) in the selection are ignored.
 * Singletons keep the selection's order; chains keep the given order.
 */
export function chainsForSelection<C extends ChainMembers>(selection: ReadonlySet<string>, chains: readonly C[]): PracticeChains<C> {
  const chainIds = new Set(chains.map((c) => c.id));
  const included = chains.filter((c) => selection.has(c.conclusion) && c.premises.length > 0 && c.premises.every((p) => selection.has(p)));
  const covered = new Set<string>();
  for (const c of included) {
    covered.add(c.conclusion);
    for (const p of c.premises) covered.add(p);
  }
  const singletons = [...selection].filter((id) => !covered.has(id) && !chainIds.has(id));
  return { chains: included, singletons, count: included.length + singletons.length };
}

/** "3 nodes → 2 chains". */
export function selectionSummary(nodes: number, chains: number): string {
  return `${nodes} node${nodes === 1 ? '' : 's'} → ${chains} chain${chains === 1 ? '' : 's'}`;
}
