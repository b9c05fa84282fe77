// The knowledge graph as the home page reads it (GET /api/graph), read defensively, plus the
// pure questions the UI asks of it: chains, labels, what a deletion takes, render settings.

export type NodeKind = 'proposition' | 'implication';

export interface GraphNode {
  id: string;
  kind: NodeKind;
  name: string;
  statement: string;
  aliases: string[];
  /** Birth-session key (propositions); null for implications. */
  cluster: string | null;
  sources: string[];
  createdAt: string;
  /** Server-settled resting position, when it has one. */
  x?: number;
  y?: number;
  /** Implications only: the chain's premises and conclusion (proposition ids). */
  premises?: string[];
  conclusion?: string;
}

export interface GraphLink {
  source: string;
  target: string;
}

export interface GraphCluster {
  key: string;
  kind: 'chat' | 'notes';
  label: string | null;
  nodeIds: string[];
  nodeCount: number;
  /** The key of the folder holding this notes file (issue 17 item 2); null/absent at top level. */
  folder?: string | null;
}

/** A folder of imported notes: a cluster of file clusters (server `core/library/folders.py`). */
export interface GraphFolder {
  key: string;
  /** The folder's name. */
  label: string;
  /** Its full path as imported (a tooltip). */
  path: string;
  /** The nearest ancestor folder's key, or null. */
  parent: string | null;
  /** Keys of its file clusters. */
  clusters: string[];
  nodeCount: number;
}

export interface GraphData {
  nodes: GraphNode[];
  links: GraphLink[];
  clusters: GraphCluster[];
  /** Folders of imported notes, parents before children (absent: none). */
  folders?: GraphFolder[];
}

/** A stored reasoning chain: premises that jointly entail a conclusion. */
export interface Chain {
  id: string;
  premises: string[];
  conclusion: string;
  createdAt: string;
}

export const EMPTY_GRAPH: GraphData = { nodes: [], links: [], clusters: [] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : [];
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** How far from the origin a position may be (the server's limit for dragged ones,
 * `core/library/layout.py: sanitize_positions`). */
export const MAX_COORD = 1e6;

/** A coordinate the canvas can place a node at: finite and within `MAX_COORD` (a damaged or
 * hand-edited positions.json: the node is then placed next to its neighbours, issue 17). */
function coord(value: unknown): number | undefined {
  const v = finite(value);
  return v !== undefined && Math.abs(v) <= MAX_COORD ? v : undefined;
}

/** The view as the UI uses it: malformed rows dropped, links only between known nodes. */
export function normalizeGraph(raw: unknown): GraphData {
  if (!isRecord(raw)) return EMPTY_GRAPH;
  const nodes: GraphNode[] = [];
  const seen = new Set<string>();
  for (const n of Array.isArray(raw.nodes) ? raw.nodes : []) {
    if (!isRecord(n) || typeof n.id !== 'string' || !n.id || seen.has(n.id)) continue;
    const kind: NodeKind = n.kind === 'implication' ? 'implication' : 'proposition';
    const node: GraphNode = {
      id: n.id,
      kind,
      name: typeof n.name === 'string' ? n.name : '',
      statement: typeof n.statement === 'string' ? n.statement : '',
      aliases: strings(n.aliases),
      cluster: typeof n.cluster === 'string' && n.cluster ? n.cluster : null,
      sources: strings(n.sources),
      createdAt: typeof n.createdAt === 'string' ? n.createdAt : '',
    };
    const x = coord(n.x);
    const y = coord(n.y);
    if (x !== undefined && y !== undefined) {
      node.x = x;
      node.y = y;
    }
    if (kind === 'implication') {
      node.premises = strings(n.premises);
      node.conclusion = typeof n.conclusion === 'string' ? n.conclusion : '';
    }
    seen.add(node.id);
    nodes.push(node);
  }
  const links: GraphLink[] = [];
  for (const l of Array.isArray(raw.links) ? raw.links : []) {
    if (isRecord(l) && typeof l.source === 'string' && typeof l.target === 'string' && seen.has(l.source) && seen.has(l.target)) {
      links.push({ source: l.source, target: l.target });
    }
  }
  const clusters: GraphCluster[] = [];
  for (const c of Array.isArray(raw.clusters) ? raw.clusters : []) {
    if (!isRecord(c) || typeof c.key !== 'string') continue;
    const nodeIds = strings(c.nodeIds);
    clusters.push({
      key: c.key,
      kind: c.kind === 'chat' ? 'chat' : 'notes',
      label: typeof c.label === 'string' && c.label.trim() ? c.label : null,
      nodeIds,
      nodeCount: typeof c.nodeCount === 'number' ? c.nodeCount : nodeIds.length,
      ...(typeof c.folder === 'string' && c.folder ? { folder: c.folder } : {}),
    });
  }
  const folders: GraphFolder[] = [];
  const folderKeys = new Set<string>();
  for (const f of Array.isArray(raw.folders) ? raw.folders : []) {
    if (!isRecord(f) || typeof f.key !== 'string' || !f.key || folderKeys.has(f.key)) continue;
    folderKeys.add(f.key);
    const path = typeof f.path === 'string' ? f.path : '';
    folders.push({
      key: f.key,
      label: typeof f.label === 'string' && f.label ? f.label : path || 'Folder',
      path,
      parent: typeof f.parent === 'string' && f.parent ? f.parent : null,
      clusters: strings(f.clusters),
      nodeCount: typeof f.nodeCount === 'number' ? f.nodeCount : 0,
    });
  }
  return folders.length ? { nodes, links, clusters, folders } : { nodes, links, clusters };
}

// ---------------------------------------------------------------------------
// The compact view (GET /api/graph?format=compact[&since=<version>], issue 17 item 5)

/** The compact view's `format` (server `core/library/graph_view.py: COMPACT_FORMAT`). */
export const COMPACT_FORMAT = 'lh-graph-compact/1';

/** A decoded compact view and the version it is at (what `since` asks from next time). */
export interface CompactGraph {
  version: string;
  data: GraphData;
}

/** A proposition row `[id, name, statement, aliases, cluster|null, sources, createdAt, x?, y?]`;
 * sources `0` stand for `[cluster]`. */
function propRow(row: unknown): GraphNode | null {
  if (!Array.isArray(row) || typeof row[0] !== 'string' || !row[0]) return null;
  const node: GraphNode = {
    id: row[0],
    kind: 'proposition',
    name: typeof row[1] === 'string' ? row[1] : '',
    statement: typeof row[2] === 'string' ? row[2] : '',
    aliases: strings(row[3]),
    cluster: typeof row[4] === 'string' && row[4] ? row[4] : null,
    sources: row[5] === 0 ? (typeof row[4] === 'string' && row[4] ? [row[4]] : []) : strings(row[5]),
    createdAt: typeof row[6] === 'string' ? row[6] : '',
  };
  placeAt(node, row[7], row[8]);
  return node;
}

/** A chain row `[id, premises, conclusion, sources, createdAt, x?, y?]`; its statement is made
 * of its members' names when the view is assembled. */
function chainRow(row: unknown): GraphNode | null {
  if (!Array.isArray(row) || typeof row[0] !== 'string' || !row[0]) return null;
  const node: GraphNode = {
    id: row[0],
    kind: 'implication',
    name: '⟹',
    statement: '',
    cluster: null,
    aliases: [],
    sources: strings(row[3]),
    createdAt: typeof row[4] === 'string' ? row[4] : '',
    premises: strings(row[1]),
    conclusion: typeof row[2] === 'string' ? row[2] : '',
  };
  placeAt(node, row[5], row[6]);
  return node;
}

function placeAt(node: GraphNode, x: unknown, y: unknown): void {
  const fx = coord(x);
  const fy = coord(y);
  if (fx !== undefined && fy !== undefined) {
    node.x = fx;
    node.y = fy;
  }
}

/** `A ∧ B ⟹ C` with the propositions' names (server `chain_line`). */
function chainStatement(chain: GraphNode, props: Map<string, GraphNode>): string {
  const name = (id: string) => props.get(id)?.name ?? '';
  return `${(chain.premises ?? []).map(name).join(' ∧ ')} ⟹ ${name(chain.conclusion ?? '')}`;
}

/** The full view from the propositions and chains by id (in view order), the cluster and folder
 * rows as sent (clusters without their node ids: they are the propositions naming them), links
 * derived from each chain (premise → chain → conclusion), only between known nodes. `fresh`:
 * the chains whose statement must be made again (all when undefined). */
function assemble(
  props: Map<string, GraphNode>,
  chains: Map<string, GraphNode>,
  rawClusters: unknown,
  rawFolders: unknown,
  fresh?: Set<string>,
): GraphData {
  const nodes: GraphNode[] = [...props.values()];
  const links: GraphLink[] = [];
  for (const chain of chains.values()) {
    let node = chain;
    if (!fresh || fresh.has(chain.id)) {
      node = { ...chain, statement: chainStatement(chain, props) };
      chains.set(chain.id, node);
    }
    nodes.push(node);
    for (const p of node.premises ?? []) if (props.has(p)) links.push({ source: p, target: node.id });
    if (node.conclusion && props.has(node.conclusion)) links.push({ source: node.id, target: node.conclusion });
  }
  const members = new Map<string, string[]>();
  for (const p of props.values()) {
    if (!p.cluster) continue;
    const ids = members.get(p.cluster);
    if (ids) ids.push(p.id);
    else members.set(p.cluster, [p.id]);
  }
  const clusterRows = (Array.isArray(rawClusters) ? rawClusters : []).map((c) =>
    isRecord(c) && typeof c.key === 'string' ? { ...c, nodeIds: members.get(c.key) ?? [] } : c,
  );
  const rest = normalizeGraph({ nodes: [], links: [], clusters: clusterRows, folders: rawFolders });
  return rest.folders ? { nodes, links, clusters: rest.clusters, folders: rest.folders } : { nodes, links, clusters: rest.clusters };
}

function rows(raw: unknown, read: (row: unknown) => GraphNode | null, into: Map<string, GraphNode>, seen?: Set<string>): void {
  for (const row of Array.isArray(raw) ? raw : []) {
    const node = read(row);
    if (!node || seen?.has(node.id)) continue;
    seen?.add(node.id);
    into.set(node.id, node);
  }
}

/**
 * What applying a delta changed (`changesOf`), for a reader that keeps its own model of the view
 * and patches it instead of rebuilding it (the canvas, issue 17): the view it was patched from,
 * the nodes added or replaced (their new objects), the ids that went, and the links: every link
 * touching an id in `relinked` was dropped, then `links` were added. `clusters`: the cluster or
 * folder rows changed (membership, labels, kinds or folders).
 */
export interface GraphChanges {
  base: GraphData;
  upserted: GraphNode[];
  removed: string[];
  relinked: Set<string>;
  links: GraphLink[];
  clusters: boolean;
}

const CHANGES = new WeakMap<GraphData, GraphChanges>();

/** How `data` was patched from the view before it (`readCompact` of a delta), if it was. */
export function changesOf(data: GraphData): GraphChanges | undefined {
  return CHANGES.get(data);
}

/**
 * The lookups a delta is applied with, valid for the view `owner` only (a delta applied to it
 * moves them to the new view, so an older view rebuilds its own): the nodes by id, where each
 * sits in `owner.nodes`, the chains using each proposition, and the cluster and folder rows as
 * sent (JSON, to tell a changed row from one sent again unchanged).
 */
interface CompactIndex {
  owner: GraphData;
  props: Map<string, GraphNode>;
  chains: Map<string, GraphNode>;
  slot: Map<string, number>;
  uses: Map<string, Set<string>>;
  clusterRows: string;
  folderRows: string;
}

const INDEX = new WeakMap<CompactGraph, CompactIndex>();

/** The index of `data`; `clusterRows`/`folderRows`: the rows as sent (else as normalized). */
function buildIndex(data: GraphData, clusterRows?: string, folderRows?: string): CompactIndex {
  const props = new Map<string, GraphNode>();
  const chains = new Map<string, GraphNode>();
  const slot = new Map<string, number>();
  const uses = new Map<string, Set<string>>();
  data.nodes.forEach((n, i) => {
    slot.set(n.id, i);
    if (n.kind === 'proposition') props.set(n.id, n);
    else {
      chains.set(n.id, n);
      use(uses, n, 1);
    }
  });
  return {
    owner: data,
    props,
    chains,
    slot,
    uses,
    clusterRows: clusterRows ?? JSON.stringify(data.clusters.map(({ nodeIds: _ids, ...row }) => row)),
    folderRows: folderRows ?? JSON.stringify(data.folders ?? []),
  };
}

function indexOf(held: CompactGraph): CompactIndex {
  const kept = INDEX.get(held);
  return kept && kept.owner === held.data ? kept : buildIndex(held.data);
}

function rowsJson(value: unknown): string {
  return JSON.stringify(Array.isArray(value) ? value : []);
}

/** Register (+1) or forget (-1) a chain as a user of its members. */
function use(uses: Map<string, Set<string>>, chain: GraphNode, sign: 1 | -1): void {
  for (const p of [...(chain.premises ?? []), chain.conclusion ?? '']) {
    if (!p) continue;
    let set = uses.get(p);
    if (sign > 0) {
      if (!set) uses.set(p, (set = new Set()));
      set.add(chain.id);
    } else set?.delete(chain.id);
  }
}

function chainLinks(chain: GraphNode, props: Map<string, GraphNode>, into: GraphLink[]): void {
  for (const p of chain.premises ?? []) if (props.has(p)) into.push({ source: p, target: chain.id });
  if (chain.conclusion && props.has(chain.conclusion)) into.push({ source: chain.id, target: chain.conclusion });
}

/**
 * Read a compact answer: a whole view (`full: true`) stands alone; a delta (`full: false`) is
 * applied to `held`, the view at its `since`: its rows replace or join the held ones, its
 * `removed` ids drop, its clusters and folders replace the held ones. Returns null for an answer
 * that is not a compact view, or a delta that does not follow `held` (then fetch the whole view).
 * Malformed rows drop, as in `normalizeGraph`.
 *
 * A delta is applied in place of a rebuild (issue 17): the work is the rows it carries plus a
 * copy of the node array (a removal: one filter of the nodes, a changed or removed chain: one of
 * the links); new rows are appended, so the node order may differ from a whole read's (the same
 * nodes, links and cluster members). A delta that changes nothing, or a whole view at the held
 * version, answers `held.data` itself (the same object: nothing to draw again). `changesOf` the
 * new view tells what changed.
 */
export function readCompact(raw: unknown, held: CompactGraph | null): CompactGraph | null {
  if (!isRecord(raw) || raw.format !== COMPACT_FORMAT || typeof raw.version !== 'string') return null;
  if (raw.full !== false) {
    if (held && raw.version === held.version) return held;
    const props = new Map<string, GraphNode>();
    const chains = new Map<string, GraphNode>();
    const seen = new Set<string>();
    rows(raw.props, propRow, props, seen);
    rows(raw.chains, chainRow, chains, seen);
    const data = assemble(props, chains, raw.clusters, raw.folders);
    return keep({ version: raw.version, data }, buildIndex(data, rowsJson(raw.clusters), rowsJson(raw.folders)));
  }
  if (!held || raw.since !== held.version) return null;
  return applyDelta(raw, held);
}

function applyDelta(raw: Record<string, unknown>, held: CompactGraph): CompactGraph {
  const version = raw.version as string;
  const base = held.data;
  const idx = indexOf(held);
  const { props, chains, uses } = idx;
  const dead = new Set<string>();
  /** Chains whose statement must be made again, and those whose links must too. */
  const restate = new Set<string>();
  const relink = new Set<string>();
  /** Cluster key -> its members that left, and the ids that joined. */
  const moves = new Map<string, { out: Set<string>; in: string[] }>();
  const move = (key: string | null, id: string, joins: boolean) => {
    if (!key) return;
    let m = moves.get(key);
    if (!m) moves.set(key, (m = { out: new Set(), in: [] }));
    if (joins) m.in.push(id);
    else m.out.add(id);
  };
  const users = (id: string, links: boolean) => {
    for (const c of uses.get(id) ?? []) {
      restate.add(c);
      if (links) relink.add(c);
    }
  };
  const dropChain = (id: string) => {
    const old = chains.get(id);
    if (!old) return;
    chains.delete(id);
    use(uses, old, -1);
  };
  // a removed proposition takes its own links; its chains (if any stay) lose its name
  for (const id of strings(raw.removed)) {
    const prop = props.get(id);
    if (prop) {
      props.delete(id);
      move(prop.cluster, id, false);
      users(id, false);
      dead.add(id);
    } else if (chains.has(id)) {
      dropChain(id);
      dead.add(id);
    }
  }
  const upserted = new Map<string, GraphNode>();
  const changed = new Map<string, GraphNode>();
  rows(raw.props, propRow, changed);
  for (const [id, node] of changed) {
    const old = props.get(id);
    if (chains.has(id)) {
      dropChain(id);
      dead.add(id);
    }
    if (!old) users(id, true); // chains waiting for it gain their link to it
    else if (old.name !== node.name) users(id, false);
    if (old?.cluster !== node.cluster) {
      if (old) move(old.cluster, id, false);
      move(node.cluster, id, true);
    }
    props.set(id, node);
    upserted.set(id, node);
  }
  changed.clear();
  rows(raw.chains, chainRow, changed);
  for (const [id, node] of changed) {
    const prop = props.get(id);
    if (prop) {
      props.delete(id);
      move(prop.cluster, id, false);
      users(id, true);
      upserted.delete(id);
      dead.add(id);
    }
    dropChain(id);
    chains.set(id, node);
    use(uses, node, 1);
    restate.add(id);
    relink.add(id);
  }
  for (const id of upserted.keys()) dead.delete(id);
  for (const id of relink) if (chains.has(id)) dead.delete(id);

  // links: those touching a removed id or a relinked chain go, the relinked chains' join
  const slot = idx.slot;
  const relinked = new Set<string>(dead);
  let dropsLinks = dead.size > 0;
  const links: GraphLink[] = [];
  for (const id of restate) {
    const chain = chains.get(id);
    if (!chain) continue;
    const node = { ...chain, statement: chainStatement(chain, props) };
    chains.set(id, node);
    upserted.set(id, node);
    if (!relink.has(id)) continue;
    relinked.add(id);
    if (slot.has(id)) dropsLinks = true; // it was in the held view: it had links
    chainLinks(node, props, links);
  }

  // the cluster and folder rows: the held ones when sent again unchanged
  const clusterRows = rowsJson(raw.clusters);
  const folderRows = rowsJson(raw.folders);
  let clusters = base.clusters;
  if (clusterRows !== idx.clusterRows || moves.size) {
    const heldIds = new Map(base.clusters.map((c) => [c.key, c.nodeIds]));
    const rowsWithIds = (Array.isArray(raw.clusters) ? raw.clusters : []).map((c) => {
      if (!isRecord(c) || typeof c.key !== 'string') return c;
      const m = moves.get(c.key);
      let ids = heldIds.get(c.key) ?? [];
      if (m) ids = [...ids.filter((i) => !m.out.has(i)), ...m.in.filter((i) => props.get(i)?.cluster === c.key)];
      return { ...c, nodeIds: ids };
    });
    clusters = normalizeGraph({ clusters: rowsWithIds }).clusters;
  }
  const foldersChanged = folderRows !== idx.folderRows;
  const folders = foldersChanged ? normalizeGraph({ folders: raw.folders }).folders : base.folders;

  if (!upserted.size && !dead.size && clusters === base.clusters && !foldersChanged) {
    return held.version === version ? held : keep({ version, data: base }, idx);
  }

  // the node array: replaced in place, new ones appended, removed ones filtered out
  let nodes = base.nodes.slice();
  if (dead.size) {
    nodes = nodes.filter((n) => !dead.has(n.id));
    slot.clear();
    nodes.forEach((n, i) => slot.set(n.id, i));
  }
  for (const [id, node] of upserted) {
    const at = slot.get(id);
    if (at === undefined) {
      slot.set(id, nodes.length);
      nodes.push(node);
    } else nodes[at] = node;
  }
  const kept = dropsLinks ? base.links.filter((l) => !relinked.has(l.source) && !relinked.has(l.target)) : base.links;
  const data: GraphData = { nodes, links: links.length || dropsLinks ? [...kept, ...links] : base.links, clusters };
  if (folders?.length) data.folders = folders;
  idx.clusterRows = clusterRows;
  idx.folderRows = folderRows;
  CHANGES.set(data, {
    base,
    upserted: [...upserted.values()],
    removed: [...dead],
    relinked,
    links,
    clusters: clusters !== base.clusters || foldersChanged,
  });
  return keep({ version, data }, idx);
}

function keep(graph: CompactGraph, idx: CompactIndex): CompactGraph {
  idx.owner = graph.data;
  INDEX.set(graph, idx);
  return graph;
}

/** The stored chains behind the implication nodes (members that are not propositions drop the chain). */
export function chainsOf(data: GraphData): Chain[] {
  const props = new Set(data.nodes.filter((n) => n.kind === 'proposition').map((n) => n.id));
  const out: Chain[] = [];
  for (const n of data.nodes) {
    if (n.kind !== 'implication' || !n.conclusion || !n.premises?.length) continue;
    if (!props.has(n.conclusion) || !n.premises.every((p) => props.has(p))) continue;
    out.push({ id: n.id, premises: n.premises, conclusion: n.conclusion, createdAt: n.createdAt });
  }
  return out;
}

/** What a cluster is called in the UI (a deleted lesson or an unnamed source still reads as something). */
export function clusterLabel(cluster: Pick<GraphCluster, 'kind' | 'label'> | null | undefined): string {
  if (!cluster) return 'Unknown source';
  if (cluster.label) return cluster.label;
  return cluster.kind === 'chat' ? 'Untitled lesson' : 'Untitled notes';
}

/**
 * What `POST /api/graph/delete` will remove (the server's full death): every listed proposition
 * with every chain that references it, and every listed implication (its chain only).
 */
export function deletionPreview(data: GraphData, ids: Iterable<string>): { nodes: string[]; chains: string[] } {
  const wanted = new Set(ids);
  const nodes: string[] = [];
  const chains = new Set<string>();
  for (const n of data.nodes) {
    if (!wanted.has(n.id)) continue;
    if (n.kind === 'proposition') nodes.push(n.id);
    else chains.add(n.id);
  }
  const dead = new Set(nodes);
  for (const c of chainsOf(data)) {
    if (dead.has(c.conclusion) || c.premises.some((p) => dead.has(p))) chains.add(c.id);
  }
  return { nodes, chains: [...chains] };
}

/**
 * The confirm dialog's words: a title, at most `cap` names, and how many more
 * there are. When `propositions` is 0 every pick is a reasoning chain, and the
 * title says so ("Delete chain?"); otherwise it speaks of nodes.
 */
export function deleteDialogWords(
  names: readonly string[],
  cap = 8,
  propositions?: number,
): { title: string; listed: string[]; more: number } {
  const n = names.length;
  const word = propositions === 0 ? 'chain' : 'node';
  return {
    title: n === 1 ? `Delete ${word}?` : `Delete ${n} ${word}s?`,
    listed: names.slice(0, cap),
    more: Math.max(0, n - cap),
  };
}

/** The one permanence line under the names: what else goes with them, and how long Undo lasts
 * (the page holds the deletion a few seconds before sending it, issue 31 item 6). */
export function permanenceLine(propositions: number, extraChains: number): string {
  const undo = 'Undo is offered for a few seconds; after that it cannot be undone';
  if (extraChains > 0) {
    const one = extraChains === 1;
    const them = propositions === 1 ? 'it' : 'them';
    return `${undo}. ${plural(extraChains, 'reasoning chain')} that ${one ? 'uses' : 'use'} ${them} ${one ? 'goes' : 'go'} too.`;
  }
  return propositions > 0 ? `${undo}.` : `${undo}; the propositions themselves stay.`;
}

/** The toast while a confirmed graph deletion waits for Undo: "Deleting 3 nodes…". */
export function heldDeleteWords(count: number, propositions: number): string {
  const word = propositions === 0 ? 'chain' : 'node';
  return `Deleting ${count === 1 ? `1 ${word}` : `${count} ${word}s`} from the graph…`;
}

// ---------------------------------------------------------------------------
// Render settings (GET/PUT /api/graph/settings)

export interface RenderSettings {
  /** Draw proposition names. */
  labels: boolean;
  /** Draw cluster hulls. */
  hulls: boolean;
  /** Zoom at which labels are fully shown (they fade in below it). */
  labelZoom: number;
  /** Proposition radius in world units. */
  nodeSize: number;
  /** Link opacity, 0..1. */
  linkOpacity: number;
}

export const DEFAULT_RENDER: RenderSettings = { labels: true, hulls: true, labelZoom: 1.2, nodeSize: 5, linkOpacity: 0.4 };

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/** Settings as stored (any subset, maybe junk), with defaults filled in and numbers kept sane. */
export function normalizeRenderSettings(raw: unknown): RenderSettings {
  const s = isRecord(raw) ? raw : {};
  const num = (key: keyof RenderSettings, lo: number, hi: number): number => {
    const v = finite(s[key]);
    return v === undefined ? (DEFAULT_RENDER[key] as number) : clamp(v, lo, hi);
  };
  return {
    labels: typeof s.labels === 'boolean' ? s.labels : DEFAULT_RENDER.labels,
    hulls: typeof s.hulls === 'boolean' ? s.hulls : DEFAULT_RENDER.hulls,
    labelZoom: num('labelZoom', 0.05, 20),
    nodeSize: num('nodeSize', 1, 40),
    linkOpacity: num('linkOpacity', 0, 1),
  };
}

/** What every surface counts (the graph header, the chain table's header and its session rows). */
export interface GraphCounts {
  propositions: number;
  /** Stored arguments: the view's implications whose members are all propositions (`chainsOf`). */
  chains: number;
  /** The sources the view lists (its birth clusters), by kind: lessons and notes files. A notes
   * file is never counted as a "session" (issue 28 item 7). */
  lessons: number;
  notes: number;
}

/**
 * The one definition of the counts: a chain is a stored argument (as `chainsOf`), and a
 * proposition in no chain counts as a proposition, never as a chain. `chains`: `chainsOf(data)`
 * when the caller has it already (one pass less over a big view).
 */
export function graphCounts(data: GraphData, chains: readonly Chain[] = chainsOf(data)): GraphCounts {
  let propositions = 0;
  for (const n of data.nodes) if (n.kind === 'proposition') propositions++;
  let lessons = 0;
  for (const c of data.clusters) if (c.kind === 'chat') lessons++;
  return { propositions, chains: chains.length, lessons, notes: data.clusters.length - lessons };
}

/** "9 propositions · 6 chains · 1 lesson · 3 notes": the counts as the headers say them (a
 * kind of source the graph has none of is left out). */
export function countsWords(counts: GraphCounts): string {
  const parts = [plural(counts.propositions, 'proposition'), plural(counts.chains, 'chain')];
  const sources = sourcesWords(counts.lessons, counts.notes);
  return sources ? `${parts.join(' · ')} · ${sources}` : parts.join(' · ');
}

/** "1 lesson · 3 notes": sources by kind, a kind with none left out ("" for none at all). */
export function sourcesWords(lessons: number, notes: number): string {
  const parts: string[] = [];
  if (lessons) parts.push(plural(lessons, 'lesson'));
  if (notes) parts.push(plural(notes, 'note'));
  return parts.join(' · ');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
