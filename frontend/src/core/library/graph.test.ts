import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RENDER,
  chainsOf,
  clusterLabel,
  countsWords,
  deleteDialogWords,
  sourcesWords,
  deletionPreview,
  graphCounts,
  normalizeGraph,
  normalizeRenderSettings,
  heldDeleteWords,
  permanenceLine,
  readCompact,
  changesOf,
  COMPACT_FORMAT,
  MAX_COORD,
  type CompactGraph,
  type GraphData,
} from './graph';

const raw = {
  nodes: [
    { id: 'n_a', kind: 'proposition', name: 'A', statement: 'A holds.', aliases: ['alpha'], cluster: 's1', sources: ['s1'], createdAt: '2026-01-01T00:00:00Z', x: 1, y: 2 },
    { id: 'n_b', kind: 'proposition', name: 'B', statement: 'B holds.', cluster: 's1', sources: ['s1', 's2'], createdAt: '2026-01-02T00:00:00Z', x: 3, y: 4 },
    { id: 'n_c', kind: 'proposition', name: 'C', statement: 'C holds.', cluster: 's2', sources: ['s2'], createdAt: '2026-01-03T00:00:00Z' },
    { id: 'arg_1', kind: 'implication', name: '⟹', statement: 'A ⟹ B', cluster: null, sources: ['s1'], createdAt: '2026-01-02T00:00:00Z', premises: ['n_a'], conclusion: 'n_b', x: 2, y: 3 },
    { id: 'arg_2', kind: 'implication', name: '⟹', statement: 'A ∧ B ⟹ C', cluster: null, sources: ['s2'], createdAt: '2026-01-03T00:00:00Z', premises: ['n_a', 'n_b'], conclusion: 'n_c' },
    { id: 'n_a', kind: 'proposition', name: 'duplicate' },
    { kind: 'proposition', name: 'no id' },
  ],
  links: [
    { source: 'n_a', target: 'arg_1' },
    { source: 'arg_1', target: 'n_b' },
    { source: 'n_a', target: 'arg_2' },
    { source: 'n_b', target: 'arg_2' },
    { source: 'arg_2', target: 'n_c' },
    { source: 'n_zzz', target: 'arg_2' },
  ],
  clusters: [
    { key: 's1', kind: 'notes', label: 'one.md', nodeIds: ['n_a', 'n_b'], nodeCount: 2 },
    { key: 's2', kind: 'chat', label: null, nodeIds: ['n_c'], nodeCount: 1 },
  ],
};

describe('normalizeGraph', () => {
  const g = normalizeGraph(raw);

  it('keeps valid nodes once, with positions only when both are numbers', () => {
    expect(g.nodes.map((n) => n.id)).toEqual(['n_a', 'n_b', 'n_c', 'arg_1', 'arg_2']);
    expect(g.nodes[0]).toMatchObject({ x: 1, y: 2, aliases: ['alpha'] });
    expect(g.nodes[2].x).toBeUndefined();
    expect(g.nodes[3]).toMatchObject({ kind: 'implication', premises: ['n_a'], conclusion: 'n_b' });
  });

  it('drops links to unknown nodes', () => {
    expect(g.links).toHaveLength(5);
  });

  it('reads clusters, null labels included', () => {
    expect(g.clusters[1]).toEqual({ key: 's2', kind: 'chat', label: null, nodeIds: ['n_c'], nodeCount: 1 });
  });

  it('survives junk', () => {
    expect(normalizeGraph(null)).toEqual({ nodes: [], links: [], clusters: [] });
    expect(normalizeGraph({ nodes: 'x' }).nodes).toEqual([]);
  });
});

describe('chains and deletion', () => {
  const g = normalizeGraph(raw);

  it('lists the stored chains', () => {
    expect(chainsOf(g).map((c) => c.id)).toEqual(['arg_1', 'arg_2']);
  });

  it('a proposition takes every chain that uses it', () => {
    expect(deletionPreview(g, ['n_b'])).toEqual({ nodes: ['n_b'], chains: ['arg_1', 'arg_2'] });
    expect(deletionPreview(g, ['n_c'])).toEqual({ nodes: ['n_c'], chains: ['arg_2'] });
  });

  it('an implication takes exactly its chain', () => {
    expect(deletionPreview(g, ['arg_1'])).toEqual({ nodes: [], chains: ['arg_1'] });
  });

  it('counts propositions, stored chains, and sources as lessons and notes (never "sessions")', () => {
    expect(graphCounts(g)).toEqual({ propositions: 3, chains: 2, lessons: 1, notes: 1 });
    expect(countsWords(graphCounts(g))).toBe('3 propositions · 2 chains · 1 lesson · 1 note');
    const notesOnly = { ...g, clusters: [g.clusters[0], { ...g.clusters[0], key: 's3' }, { ...g.clusters[0], key: 's4' }] };
    expect(countsWords(graphCounts(notesOnly))).toBe('3 propositions · 2 chains · 3 notes');
    expect(countsWords({ propositions: 0, chains: 0, lessons: 2, notes: 0 })).toBe('0 propositions · 0 chains · 2 lessons');
    expect(countsWords(graphCounts(g))).not.toMatch(/session/);
    expect(countsWords({ propositions: 0, chains: 0, lessons: 0, notes: 0 })).toBe('0 propositions · 0 chains');
    expect(sourcesWords(1, 2)).toBe('1 lesson · 2 notes');
    expect(sourcesWords(0, 1)).toBe('1 note');
  });

  it('counts a chain whose member is missing from the view as no chain', () => {
    const dangling = { ...g, nodes: g.nodes.filter((n) => n.id !== 'n_c') };
    expect(graphCounts(dangling)).toMatchObject({ propositions: 2, chains: 1 });
  });
});

describe('the delete dialog words', () => {
  it('says node or N nodes, lists at most 8 names and how many more', () => {
    expect(deleteDialogWords(['A'])).toEqual({ title: 'Delete node?', listed: ['A'], more: 0 });
    // only chains picked (issue 18): the title names them
    expect(deleteDialogWords(['A ⟹ B'], 8, 0).title).toBe('Delete chain?');
    expect(deleteDialogWords(['A ⟹ B', 'C ⟹ D'], 8, 0).title).toBe('Delete 2 chains?');
    expect(deleteDialogWords(['A', 'A ⟹ B'], 8, 1).title).toBe('Delete 2 nodes?');
    const names = Array.from({ length: 11 }, (_, i) => `N${i}`);
    const w = deleteDialogWords(names);
    expect(w.title).toBe('Delete 11 nodes?');
    expect(w.listed).toHaveLength(8);
    expect(w.more).toBe(3);
  });

  it('has one permanence line that names the chains that go too', () => {
    expect(permanenceLine(1, 0)).toBe('Undo is offered for a few seconds; after that it cannot be undone.');
    expect(permanenceLine(1, 1)).toBe('Undo is offered for a few seconds; after that it cannot be undone. 1 reasoning chain that uses it goes too.');
    expect(permanenceLine(3, 2)).toBe('Undo is offered for a few seconds; after that it cannot be undone. 2 reasoning chains that use them go too.');
    expect(heldDeleteWords(1, 1)).toBe('Deleting 1 node from the graph…');
    expect(heldDeleteWords(2, 0)).toBe('Deleting 2 chains from the graph…');
    expect(permanenceLine(0, 0)).toMatch(/propositions themselves stay/);
  });
});

describe('labels and settings', () => {
  it('names clusters without a label by their kind', () => {
    expect(clusterLabel({ kind: 'notes', label: 'x.md' })).toBe('x.md');
    expect(clusterLabel({ kind: 'chat', label: null })).toBe('Untitled lesson');
    expect(clusterLabel({ kind: 'notes', label: null })).toBe('Untitled notes');
    expect(clusterLabel(null)).toBe('Unknown source');
  });

  it('fills defaults and keeps numbers sane', () => {
    expect(normalizeRenderSettings({})).toEqual(DEFAULT_RENDER);
    expect(normalizeRenderSettings({ labels: false, hulls: 'yes', nodeSize: 1000, linkOpacity: -1, labelZoom: 2 })).toEqual({
      labels: false,
      hulls: true,
      labelZoom: 2,
      nodeSize: 40,
      linkOpacity: 0,
    });
  });
});

describe('the compact view (issue 17 item 5)', () => {
  const compact = {
    format: COMPACT_FORMAT,
    version: 'e-1',
    full: true,
    props: [
      ['n_a', 'A', 'A holds.', ['alpha'], 's1', ['s1'], '2026-01-01T00:00:00Z', 1, 2],
      ['n_b', 'B', 'B holds.', [], 's1', ['s1', 's2'], '2026-01-02T00:00:00Z', 3, 4],
      ['n_c', 'C', 'C holds.', [], 's2', 0, '2026-01-03T00:00:00Z'],
      ['n_a', 'duplicate'],
      [null, 'no id'],
      'junk',
    ],
    chains: [
      ['arg_1', ['n_a'], 'n_b', ['s1'], '2026-01-02T00:00:00Z', 2, 3],
      ['arg_2', ['n_a', 'n_b'], 'n_c', ['s2'], '2026-01-03T00:00:00Z'],
    ],
    clusters: [
      { key: 's1', kind: 'notes', label: 'one.md', nodeCount: 2 },
      { key: 's2', kind: 'chat', label: null, nodeCount: 1 },
    ],
    folders: [],
  };

  it('decodes to what the full view gives', () => {
    const read = readCompact(compact, null);
    expect(read?.version).toBe('e-1');
    expect(read?.data).toEqual(normalizeGraph(raw));
  });

  it('applies a delta: changed rows replace, new rows join, removed ids drop, statements follow renames', () => {
    const held = readCompact(compact, null) as CompactGraph;
    const delta = {
      format: COMPACT_FORMAT,
      version: 'e-2',
      since: 'e-1',
      full: false,
      props: [
        ['n_b', 'Bee', 'B holds.', [], 's1', ['s1', 's2'], '2026-01-02T00:00:00Z', 30, 40],
        ['n_d', 'D', 'D holds.', [], 's3', ['s3'], '2026-01-04T00:00:00Z', 5, 6],
      ],
      chains: [['arg_3', ['n_c'], 'n_d', ['s3'], '2026-01-04T00:00:00Z']],
      removed: ['arg_1'],
      clusters: [
        { key: 's1', kind: 'notes', label: 'one.md', nodeCount: 2 },
        { key: 's2', kind: 'chat', label: 'Lesson', nodeCount: 1 },
        { key: 's3', kind: 'notes', label: null, nodeCount: 1, folder: 'f1' },
      ],
      folders: [{ key: 'f1', label: 'vault', path: 'vault', parent: null, clusters: ['s3'], nodeCount: 1 }],
    };
    const next = readCompact(delta, held);
    expect(next?.version).toBe('e-2');
    const data = next!.data;
    // patched in place: replaced rows keep their place, new ones are appended
    expect(data.nodes.map((n) => n.id)).toEqual(['n_a', 'n_b', 'n_c', 'arg_2', 'n_d', 'arg_3']);
    const byId = new Map(data.nodes.map((n) => [n.id, n]));
    expect(byId.get('n_b')).toMatchObject({ name: 'Bee', x: 30, y: 40 });
    expect(byId.get('arg_2')?.statement).toBe('A ∧ Bee ⟹ C'); // made again: n_b was renamed
    expect(byId.get('arg_3')?.statement).toBe('C ⟹ D');
    expect(data.links).toEqual([
      { source: 'n_a', target: 'arg_2' },
      { source: 'n_b', target: 'arg_2' },
      { source: 'arg_2', target: 'n_c' },
      { source: 'n_c', target: 'arg_3' },
      { source: 'arg_3', target: 'n_d' },
    ]);
    expect(data.clusters.map((c) => [c.key, c.nodeIds, c.label])).toEqual([
      ['s1', ['n_a', 'n_b'], 'one.md'],
      ['s2', ['n_c'], 'Lesson'],
      ['s3', ['n_d'], null],
    ]);
    expect(data.folders?.[0].key).toBe('f1');
    expect(held.data.nodes.find((n) => n.id === 'n_b')?.name).toBe('B'); // the held view is untouched
  });

  it('an empty delta keeps the view: the same object, nothing to draw again (issue 17)', () => {
    const held = readCompact(compact, null) as CompactGraph;
    const same = readCompact({ ...compact, version: 'e-2', since: 'e-1', full: false, props: [], chains: [], removed: [] }, held);
    expect(same?.version).toBe('e-2');
    expect(same?.data).toBe(held.data);
    const again = readCompact({ ...compact, version: 'e-2', since: 'e-2', full: false, props: [], chains: [], removed: [] }, same);
    expect(again).toBe(same);
    // the whole view at the held version (a restarted server answers `since` with it): kept too
    expect(readCompact(compact, held)).toBe(held);
    // the same rows at another version are read again
    expect(readCompact({ ...compact, version: 'e-9' }, held)?.data).not.toBe(held.data);
  });

  it('refuses what it cannot read: another format, or a delta from another version', () => {
    const held = readCompact(compact, null) as CompactGraph;
    expect(readCompact(raw, null)).toBeNull();
    expect(readCompact({ ...compact, format: 'x' }, null)).toBeNull();
    expect(readCompact({ ...compact, full: false, since: 'e-0', version: 'e-2' }, held)).toBeNull();
    expect(readCompact({ ...compact, full: false, since: 'e-1', version: 'e-2' }, null)).toBeNull();
  });
});

/** A compact view of `props` propositions in sessions of `per`, chains from each to the next,
 * with `edit` applied to the rows (issue 17: a delta applied in place equals a whole read). */
function bigView(props: number, per: number, edit: (p: unknown[][], c: unknown[][]) => void = () => {}) {
  const p: unknown[][] = [];
  const c: unknown[][] = [];
  for (let i = 0; i < props; i++) p.push([`n_${i}`, `N${i}`, `N${i} holds.`, [], `s${Math.floor(i / per)}`, 0, 't', i, i]);
  for (let i = 0; i + 2 < props; i += 2) c.push([`arg_${i}`, [`n_${i}`, `n_${i + 1}`], `n_${i + 2}`, [], 't', i, -i]);
  edit(p, c);
  const counts = new Map<string, number>();
  for (const row of p) counts.set(row[4] as string, (counts.get(row[4] as string) ?? 0) + 1);
  const clusters = [...counts].map(([key, n]) => ({ key, kind: 'notes', label: key.toUpperCase(), nodeCount: n }));
  return { format: COMPACT_FORMAT, version: 'v', full: true, props: p, chains: c, clusters, folders: [] };
}

/** The delta from view `a` to view `b` as the server sends it: rows that differ, ids that went. */
function deltaOf(a: ReturnType<typeof bigView>, b: ReturnType<typeof bigView>, since: string, version: string) {
  const rowsBy = (rows: unknown[][]) => new Map(rows.map((r) => [r[0] as string, JSON.stringify(r)]));
  const [ap, ac, bp, bc] = [rowsBy(a.props), rowsBy(a.chains), rowsBy(b.props), rowsBy(b.chains)];
  return {
    format: COMPACT_FORMAT,
    version,
    since,
    full: false,
    props: b.props.filter((r) => ap.get(r[0] as string) !== bp.get(r[0] as string)),
    chains: b.chains.filter((r) => ac.get(r[0] as string) !== bc.get(r[0] as string)),
    removed: [...ap.keys(), ...ac.keys()].filter((id) => !bp.has(id) && !bc.has(id)),
    clusters: b.clusters,
    folders: b.folders,
  };
}

/** A view compared regardless of order (a patched view appends its new rows). */
function canonical(data: GraphData) {
  const key = (l: { source: string; target: string }) => `${l.source}>${l.target}`;
  return {
    nodes: [...data.nodes].sort((x, y) => x.id.localeCompare(y.id)),
    links: data.links.map(key).sort(),
    clusters: data.clusters.map((c) => ({ ...c, nodeIds: [...c.nodeIds].sort() })),
    folders: data.folders ?? [],
  };
}

describe('a delta applied in place (issue 17)', () => {
  const before = bigView(40, 10);
  const after = bigView(40, 10, (p, c) => {
    p[3][1] = 'Renamed'; // n_3: chains using it read the new name
    p[5][4] = 's3'; // n_5 moves to another session
    p[7][7] = 700; // n_7 moves
    p.splice(11, 1); // n_11 goes (its chains stay, without it)
    p.push(['n_40', 'N40', 'N40 holds.', [], 's9', 0, 't', 1, 1]); // a new session
    c.splice(0, 1); // arg_0 goes
    c[1][1] = ['n_4', 'n_40']; // arg_4 changes its premises
    c.push(['arg_new', ['n_38', 'n_39'], 'n_40', [], 't']);
  });

  it('gives what a whole read of the new view gives, and leaves the held view as it was', () => {
    const held = readCompact(before, null) as CompactGraph;
    const snapshot = JSON.stringify(held.data);
    const next = readCompact(deltaOf(before, after, 'v', 'w'), held) as CompactGraph;
    expect(canonical(next.data)).toEqual(canonical(readCompact(after, null)!.data));
    expect(JSON.stringify(held.data)).toBe(snapshot);
    const byId = new Map(next.data.nodes.map((n) => [n.id, n]));
    expect(byId.get('arg_2')?.statement).toBe('N2 ∧ Renamed ⟹ N4');
    expect(byId.get('arg_10')?.statement).toBe('N10 ∧  ⟹ N12'); // n_11 went
  });

  it('reuses what did not change and says what did (changesOf)', () => {
    const held = readCompact(before, null) as CompactGraph;
    const next = readCompact(deltaOf(before, after, 'v', 'w'), held) as CompactGraph;
    const heldById = new Map(held.data.nodes.map((n) => [n.id, n]));
    expect(next.data.nodes.find((n) => n.id === 'n_20')).toBe(heldById.get('n_20')); // the same object
    const changes = changesOf(next.data)!;
    expect(changes.base).toBe(held.data);
    expect(changes.upserted.map((n) => n.id).sort()).toEqual(
      ['arg_10', 'arg_2', 'arg_4', 'arg_new', 'n_3', 'n_40', 'n_5', 'n_7'].sort(),
    );
    expect(changes.removed.sort()).toEqual(['arg_0', 'n_11']);
    // links: every link touching a relinked id went, then `links` joined; that is the new view's
    const replayed = [...held.data.links.filter((l) => !changes.relinked.has(l.source) && !changes.relinked.has(l.target)), ...changes.links];
    expect(replayed.map((l) => `${l.source}>${l.target}`).sort()).toEqual(canonical(next.data).links);
    expect(changes.clusters).toBe(true);
    expect(changesOf(held.data)).toBeUndefined();
  });

  it('a rename alone keeps the links and the clusters as they were (the same arrays)', () => {
    const held = readCompact(before, null) as CompactGraph;
    const renamed = bigView(40, 10, (p) => {
      p[3][1] = 'Renamed';
    });
    const next = readCompact(deltaOf(before, renamed, 'v', 'w'), held) as CompactGraph;
    expect(next.data.links).toBe(held.data.links);
    expect(next.data.clusters).toBe(held.data.clusters);
    expect(changesOf(next.data)?.upserted.map((n) => n.id).sort()).toEqual(['arg_2', 'n_3']);
  });

  it('deltas in a row, and a delta applied again to an older view, still give the whole read', () => {
    const v1 = readCompact(before, null) as CompactGraph;
    const v2 = readCompact(deltaOf(before, after, 'v', 'w'), v1) as CompactGraph;
    const third = bigView(40, 10, (p, c) => {
      p.splice(0, 5); // n_0..n_4 go
      c.push(['arg_z', ['n_6'], 'n_7', [], 't']);
    });
    const v3 = readCompact(deltaOf(after, third, 'w', 'x'), v2) as CompactGraph;
    expect(canonical(v3.data)).toEqual(canonical(readCompact(third, null)!.data));
    // v1 handed its lookups on to v2: applying to v1 again rebuilds them from v1's own view
    const again = readCompact(deltaOf(before, after, 'v', 'w'), v1) as CompactGraph;
    expect(canonical(again.data)).toEqual(canonical(v2.data));
  });
});

describe('positions the canvas cannot use (issue 17, bad input)', () => {
  it('a position not finite or beyond MAX_COORD is no position (the canvas places the node)', () => {
    const row = (id: string, x: unknown, y: unknown) => [id, id, '', [], 's1', 0, 't', x, y];
    const read = readCompact(
      { format: COMPACT_FORMAT, version: 'v', full: true, props: [row('n_a', 1, 2), row('n_b', 1e9, 0), row('n_c', -MAX_COORD, MAX_COORD), row('n_d', 'NaN', 0)], chains: [], clusters: [] },
      null,
    )!;
    const at = Object.fromEntries(read.data.nodes.map((n) => [n.id, n.x === undefined ? null : [n.x, n.y]]));
    expect(at).toEqual({ n_a: [1, 2], n_b: null, n_c: [-MAX_COORD, MAX_COORD], n_d: null });
    const full = normalizeGraph({ nodes: [{ id: 'n_x', x: 0, y: -2e6 }, { id: 'n_y', x: 3, y: 4 }] });
    expect(full.nodes.map((n) => n.x ?? null)).toEqual([null, 3]);
  });
});

