// The chain table's model: clusters (birth sessions) → reasoning chains → proposition statements.
// A chain lives where its CONCLUSION was born; a proposition in no chain is a chain of one.

import Fuse from 'fuse.js';
import { chainsOf, clusterLabel, graphCounts, type GraphCounts, type GraphData, type GraphNode } from './graph';

export interface TableChain {
  /** The chain's `arg_` id, or the proposition's id for a lonely proposition. */
  id: string;
  lonely: boolean;
  premises: string[];
  conclusion: string;
  /** Premises then conclusion (distinct proposition ids). */
  members: string[];
  /** Birth-session key of the conclusion. */
  cluster: string;
  /** "A ∧ B ⟹ C" in names (a lonely proposition: its name); what Name sorts by. */
  line: string;
  createdAt: string;
}

export interface TableCluster {
  key: string;
  label: string;
  kind: 'chat' | 'notes';
  /** Its rows: stored chains and lonely propositions. */
  chains: TableChain[];
  /** Stored chains among the rows (what the row's "N chains" says; lonely propositions are not chains). */
  storedChains: number;
  /** Propositions born in this session. */
  props: number;
  /** The session's first proposition's time. */
  createdAt: string;
  /** Every proposition shown under it (members of its chains), for selecting the whole cluster. */
  members: string[];
}

export interface TableModel {
  clusters: TableCluster[];
  nodes: Map<string, GraphNode>;
  /** Every row: stored chains, then lonely propositions. */
  chains: TableChain[];
  /** The graph's counts (`graphCounts`): the header says these, as the graph header does. */
  counts: GraphCounts;
}

const NO_CLUSTER = '';

/** Build the three levels from the graph view. */
export function buildTable(data: GraphData): TableModel {
  const nodes = new Map<string, GraphNode>();
  for (const n of data.nodes) if (n.kind === 'proposition') nodes.set(n.id, n);
  const name = (id: string) => nodes.get(id)?.name ?? id;
  const chains: TableChain[] = [];
  const inChain = new Set<string>();
  for (const c of chainsOf(data)) {
    const members = [...new Set([...c.premises, c.conclusion])];
    members.forEach((m) => inChain.add(m));
    chains.push({
      id: c.id,
      lonely: false,
      premises: c.premises,
      conclusion: c.conclusion,
      members,
      cluster: nodes.get(c.conclusion)?.cluster ?? NO_CLUSTER,
      line: `${c.premises.map(name).join(' ∧ ')} ⟹ ${name(c.conclusion)}`,
      createdAt: c.createdAt,
    });
  }
  for (const n of nodes.values()) {
    if (inChain.has(n.id)) continue;
    chains.push({
      id: n.id,
      lonely: true,
      premises: [],
      conclusion: n.id,
      members: [n.id],
      cluster: n.cluster ?? NO_CLUSTER,
      line: n.name,
      createdAt: n.createdAt,
    });
  }

  const byKey = new Map<string, TableCluster>();
  for (const c of data.clusters) {
    byKey.set(c.key, { key: c.key, label: clusterLabel(c), kind: c.kind, chains: [], storedChains: 0, props: c.nodeCount, createdAt: '', members: [] });
  }
  for (const n of nodes.values()) {
    const key = n.cluster ?? NO_CLUSTER;
    let cluster = byKey.get(key);
    if (!cluster) {
      cluster = { key, label: clusterLabel(null), kind: 'notes', chains: [], storedChains: 0, props: 0, createdAt: '', members: [] };
      byKey.set(key, cluster);
      cluster.props = [...nodes.values()].filter((m) => (m.cluster ?? NO_CLUSTER) === key).length;
    }
    if (n.createdAt && (!cluster.createdAt || n.createdAt < cluster.createdAt)) cluster.createdAt = n.createdAt;
  }
  for (const chain of chains) {
    const cluster = byKey.get(chain.cluster);
    if (!cluster) continue;
    cluster.chains.push(chain);
    if (!chain.lonely) cluster.storedChains++;
  }
  for (const cluster of byKey.values()) cluster.members = [...new Set(cluster.chains.flatMap((c) => c.members))];
  return { clusters: [...byKey.values()].filter((c) => c.chains.length > 0), nodes, chains, counts: graphCounts(data) };
}

export type SortKey = 'name' | 'props' | 'created';
export type SortDir = 'asc' | 'desc';

/** Name A→Z, Props largest first, Created newest first. */
export function defaultDir(key: SortKey): SortDir {
  return key === 'name' ? 'asc' : 'desc';
}

/** Clicking a column: the same column flips its direction; another starts at its default. */
export function nextSort(current: { key: SortKey; dir: SortDir }, clicked: SortKey): { key: SortKey; dir: SortDir } {
  if (current.key === clicked) return { key: clicked, dir: current.dir === 'asc' ? 'desc' : 'asc' };
  return { key: clicked, dir: defaultDir(clicked) };
}

const collator = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });

function compareBy<T>(key: SortKey, dir: SortDir, name: (t: T) => string, props: (t: T) => number, created: (t: T) => string) {
  const sign = dir === 'asc' ? 1 : -1;
  return (a: T, b: T): number => {
    let d = 0;
    if (key === 'props') d = props(a) - props(b);
    else if (key === 'created') d = created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : 0;
    if (d === 0 && key !== 'name') return collator.compare(name(a), name(b)); // ties: A→Z
    if (d === 0) d = collator.compare(name(a), name(b));
    return d * sign;
  };
}

/** Order cluster rows and, within each, its chains by the same column. Returns new arrays. */
export function sortTable(clusters: readonly TableCluster[], key: SortKey, dir: SortDir): TableCluster[] {
  const chainCmp = compareBy<TableChain>(
    key,
    dir,
    (c) => c.line,
    (c) => c.members.length,
    (c) => c.createdAt,
  );
  const clusterCmp = compareBy<TableCluster>(
    key,
    dir,
    (c) => c.label,
    (c) => c.props,
    (c) => c.createdAt,
  );
  return clusters.map((c) => ({ ...c, chains: [...c.chains].sort(chainCmp) })).sort(clusterCmp);
}

// ---------------------------------------------------------------------------
// Search

interface SearchDoc {
  id: string;
  names: string[];
  aliases: string[];
  statements: string[];
}

export type ChainSearch = (query: string) => Set<string> | null;

/**
 * A fuzzy search over each chain's propositions (names, aliases, statements). Returns the ids
 * of matching chains, or null for an empty query (no filter).
 */
export function chainSearch(model: TableModel): ChainSearch {
  const docs: SearchDoc[] = model.chains.map((c) => {
    const members = c.members.map((m) => model.nodes.get(m)).filter((n): n is GraphNode => !!n);
    return {
      id: c.id,
      names: members.map((m) => m.name),
      aliases: members.flatMap((m) => m.aliases),
      statements: members.map((m) => m.statement),
    };
  });
  let fuse: Fuse<SearchDoc> | null = null;
  return (query: string) => {
    const q = query.trim();
    if (!q) return null;
    fuse ??= new Fuse(docs, {
      keys: [
        { name: 'names', weight: 3 },
        { name: 'aliases', weight: 2 },
        { name: 'statements', weight: 1 },
      ],
      threshold: 0.3,
      ignoreLocation: true,
      minMatchCharLength: 2,
    });
    return new Set(fuse.search(q).map((r) => r.item.id));
  };
}

/** Keep only the matching chains (and the clusters that still have some). */
export function filterTable(clusters: readonly TableCluster[], matches: Set<string> | null): TableCluster[] {
  if (!matches) return [...clusters];
  return clusters
    .map((c) => {
      const chains = c.chains.filter((ch) => matches.has(ch.id));
      const storedChains = chains.filter((ch) => !ch.lonely).length;
      return { ...c, chains, storedChains, members: [...new Set(chains.flatMap((ch) => ch.members))] };
    })
    .filter((c) => c.chains.length > 0);
}

// ---------------------------------------------------------------------------
// Selection (a flat set of proposition ids)

export type CheckState = 'none' | 'some' | 'all';

export function checkState(members: readonly string[], selection: ReadonlySet<string>): CheckState {
  let hit = 0;
  for (const m of members) if (selection.has(m)) hit++;
  return hit === 0 ? 'none' : hit === members.length ? 'all' : 'some';
}

/** Select all of `members` unless all are selected already, then deselect them. */
export function toggleMembers(selection: ReadonlySet<string>, members: readonly string[]): Set<string> {
  const next = new Set(selection);
  if (checkState(members, selection) === 'all') members.forEach((m) => next.delete(m));
  else members.forEach((m) => next.add(m));
  return next;
}
