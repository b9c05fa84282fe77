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
  /** The member each entry of `names`/`statements` belongs to, by index. */
  memberIds: string[];
  /** The member each entry of `aliases` belongs to, by index. */
  aliasOwners: string[];
}

/** Where a search hit was found: a proposition's name, one of its aliases, or its statement. */
export type MatchField = 'title' | 'name' | 'alias' | 'statement';

/** Why a row matched: the text that matched and the character ranges to highlight in it. */
export interface ChainMatch {
  /** The row's id (a chain's `arg_` id or a lonely proposition's id). */
  id: string;
  /**
   * The tier, best first: 0 the row's own title is the query, 1 the row's own title contains it
   * (a lonely proposition's name or a chain's conclusion), 2 a member's name contains it, 3 an
   * alias does, 4 a statement does, 5 a fuzzy (misspelt) match only.
   */
  tier: number;
  /** 'title' when the row's own title matched; else the member field that did. */
  field: MatchField;
  /** The proposition whose text matched. */
  nodeId: string;
  /** The whole text that matched (a name, an alias or a statement). */
  text: string;
  /** Half-open [start, end) character ranges of `text` to highlight, in order, not overlapping. */
  ranges: [number, number][];
}

/**
 * The matching rows for a query, best first (a Map keeps that order), or null for an empty query.
 */
export type ChainSearch = (query: string) => Map<string, ChainMatch> | null;

/** Every case-insensitive occurrence of `needle` in `text`, as [start, end) ranges. */
export function findRanges(text: string, needle: string): [number, number][] {
  const out: [number, number][] = [];
  const hay = text.toLocaleLowerCase();
  const n = needle.toLocaleLowerCase();
  if (!n || hay.length !== text.length) return out; // a case fold that changes length: no safe ranges
  for (let i = hay.indexOf(n); i >= 0; i = hay.indexOf(n, i + n.length)) out.push([i, i + n.length]);
  return out;
}

/** Split `text` into plain and highlighted parts by `ranges` (as `ChainMatch.ranges`). */
export function highlightParts(text: string, ranges: readonly [number, number][]): { text: string; hit: boolean }[] {
  const parts: { text: string; hit: boolean }[] = [];
  let at = 0;
  for (const [a, b] of ranges) {
    const start = Math.max(a, at);
    const end = Math.min(b, text.length);
    if (end <= start) continue;
    if (start > at) parts.push({ text: text.slice(at, start), hit: false });
    parts.push({ text: text.slice(start, end), hit: true });
    at = end;
  }
  if (at < text.length) parts.push({ text: text.slice(at), hit: false });
  return parts;
}

/**
 * A search over each chain's propositions (names, aliases, statements) that says why each row
 * matched and ranks rows whose own title holds the query first (a note titled "Heap" before the
 * chains that mention heaps). Rows holding the query as typed (any case) are the result; only when
 * there are none does Fuse's fuzzy match look for a misspelling. Returns the matches in rank order, or null for an empty query.
 */
export function chainSearch(model: TableModel): ChainSearch {
  const docs: SearchDoc[] = model.chains.map((c) => {
    const members = c.members.map((m) => model.nodes.get(m)).filter((n): n is GraphNode => !!n);
    return {
      id: c.id,
      names: members.map((m) => m.name),
      aliases: members.flatMap((m) => m.aliases),
      statements: members.map((m) => m.statement),
      memberIds: members.map((m) => m.id),
      aliasOwners: members.flatMap((m) => m.aliases.map(() => m.id)),
    };
  });
  const titleOf = new Map(model.chains.map((c) => [c.id, c.conclusion]));
  let fuse: Fuse<SearchDoc> | null = null;
  return (query: string) => {
    const q = query.trim();
    if (!q) return null;
    const found: ChainMatch[] = [];
    const lower = q.toLocaleLowerCase();
    for (const doc of docs) {
      const own = titleOf.get(doc.id);
      let best: ChainMatch | null = null;
      const consider = (tier: number, field: MatchField, nodeId: string, text: string) => {
        if (best && best.tier <= tier) return;
        const ranges = findRanges(text, q);
        if (ranges.length) best = { id: doc.id, tier, field, nodeId, text, ranges };
      };
      doc.names.forEach((name, i) => {
        const nodeId = doc.memberIds[i];
        if (nodeId === own) consider(name.trim().toLocaleLowerCase() === lower ? 0 : 1, 'title', nodeId, name);
        else consider(2, 'name', nodeId, name);
      });
      doc.aliases.forEach((alias, i) => consider(3, 'alias', doc.aliasOwners[i], alias));
      doc.statements.forEach((st, i) => consider(4, 'statement', doc.memberIds[i], st));
      if (best) found.push(best);
    }
    // stable: within a tier, the table's own order is kept
    found.sort((a, b) => a.tier - b.tier);
    // Fuzzy hits are a fallback for a misspelt query only: when the words are found as typed,
    // rows that merely look alike ("perhaps", "helps" for "heap") would be noise with no visible hit.
    if (found.length) return new Map(found.map((f) => [f.id, f]));
    fuse ??= new Fuse(docs, {
      keys: [
        { name: 'names', weight: 3 },
        { name: 'aliases', weight: 2 },
        { name: 'statements', weight: 1 },
      ],
      threshold: 0.3,
      ignoreLocation: true,
      minMatchCharLength: 2,
      includeMatches: true,
    });
    for (const r of fuse.search(q)) {
      const m = r.matches?.[0];
      const key = m?.key ?? 'names';
      const idx = m?.refIndex ?? 0;
      const doc = r.item;
      const nodeId = (key === 'aliases' ? doc.aliasOwners[idx] : doc.memberIds[idx]) ?? doc.memberIds[0] ?? doc.id;
      const text = m?.value ?? doc.names[0] ?? '';
      // Fuse marks scattered letters; highlight its longest run only, which reads as the hit
      let longest: [number, number] | null = null;
      for (const [a, b] of m?.indices ?? []) if (!longest || b + 1 - a > longest[1] - longest[0]) longest = [a, b + 1];
      const field: MatchField = key === 'aliases' ? 'alias' : key === 'statements' ? 'statement' : nodeId === titleOf.get(doc.id) ? 'title' : 'name';
      found.push({ id: doc.id, tier: 5, field, nodeId, text, ranges: longest ? [longest] : [] });
    }
    return new Map(found.map((f) => [f.id, f]));
  };
}

/**
 * Order rows by search rank (returns new arrays): each cluster's chains best match first, and
 * clusters by their best row. A null `matches` (no search) leaves the order as it is.
 */
export function rankTable(clusters: readonly TableCluster[], matches: ReadonlyMap<string, ChainMatch> | null): TableCluster[] {
  if (!matches) return [...clusters];
  const rank = new Map([...matches.keys()].map((id, i) => [id, i]));
  const of = (id: string) => rank.get(id) ?? Number.MAX_SAFE_INTEGER;
  const ranked = clusters.map((c) => ({ ...c, chains: [...c.chains].sort((a, b) => of(a.id) - of(b.id)) }));
  const best = (c: TableCluster) => (c.chains.length ? of(c.chains[0].id) : Number.MAX_SAFE_INTEGER);
  return ranked.sort((a, b) => best(a) - best(b));
}

/** Keep only the matching chains (and the clusters that still have some). */
export function filterTable(clusters: readonly TableCluster[], matches: ReadonlySet<string> | ReadonlyMap<string, unknown> | null): TableCluster[] {
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
