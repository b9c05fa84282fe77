import { describe, expect, it } from 'vitest';
import { buildTable, chainSearch, checkState, defaultDir, filterTable, findRanges, highlightParts, nextSort, rankTable, sortTable, toggleMembers } from './chainTable';
import { graphCounts, normalizeGraph } from './graph';

function prop(id: string, name: string, cluster: string, createdAt: string, statement = `${name} holds.`, aliases: string[] = []) {
  return { id, kind: 'proposition', name, statement, aliases, cluster, sources: [cluster], createdAt };
}

function chain(id: string, premises: string[], conclusion: string, createdAt: string) {
  return { id, kind: 'implication', name: '⟹', statement: '', cluster: null, sources: [], createdAt, premises, conclusion };
}

const data = normalizeGraph({
  nodes: [
    prop('n_a', 'Apples', 's1', '2026-01-01T00:00:00Z', 'Apples fall from trees by gravity.'),
    prop('n_b', 'Bananas', 's1', '2026-01-02T00:00:00Z', 'Bananas are curved.', ['plantain']),
    prop('n_c', 'Cherries', 's2', '2026-01-05T00:00:00Z', 'Cherries are red.'),
    prop('n_d', 'Dates', 's2', '2026-01-06T00:00:00Z', 'Dates are sweet.'),
    prop('n_e', 'Elderberries', 's1', '2026-01-03T00:00:00Z', 'Elderberries are dark.'),
    chain('arg_1', ['n_a'], 'n_b', '2026-01-02T00:00:00Z'),
    // concluded in s2 from a premise born in s1: it lives in s2
    chain('arg_2', ['n_a', 'n_b'], 'n_c', '2026-01-05T00:00:00Z'),
  ],
  links: [],
  clusters: [
    { key: 's1', kind: 'notes', label: 'fruit.md', nodeIds: ['n_a', 'n_b', 'n_e'], nodeCount: 3 },
    { key: 's2', kind: 'chat', label: 'Berries lesson', nodeIds: ['n_c', 'n_d'], nodeCount: 2 },
  ],
});

describe('buildTable', () => {
  const model = buildTable(data);

  it('puts a chain where its conclusion was born, lonely propositions as chains of one', () => {
    const s1 = model.clusters.find((c) => c.key === 's1')!;
    const s2 = model.clusters.find((c) => c.key === 's2')!;
    expect(s1.chains.map((c) => c.id).sort()).toEqual(['arg_1', 'n_e']);
    expect(s2.chains.map((c) => c.id).sort()).toEqual(['arg_2', 'n_d']);
    const lonely = s2.chains.find((c) => c.id === 'n_d')!;
    expect(lonely).toMatchObject({ lonely: true, premises: [], conclusion: 'n_d', members: ['n_d'], line: 'Dates' });
  });

  it('counts stored chains as chains and lonely propositions as propositions, as the graph header does', () => {
    expect(model.chains).toHaveLength(4); // 2 stored chains + 2 lonely propositions as rows
    expect(model.counts).toEqual(graphCounts(data));
    expect(model.counts).toEqual({ propositions: 5, chains: 2, lessons: 1, notes: 1 });
    const s1 = model.clusters.find((c) => c.key === 's1')!;
    expect(s1).toMatchObject({ storedChains: 1, props: 3 });
    expect(model.clusters.reduce((n, c) => n + c.storedChains, 0)).toBe(model.counts.chains);
  });

  it('writes the chain line in names and knows its members', () => {
    const c = model.chains.find((c) => c.id === 'arg_2')!;
    expect(c.line).toBe('Apples ∧ Bananas ⟹ Cherries');
    expect(c.members).toEqual(['n_a', 'n_b', 'n_c']);
  });

  it('gives clusters their label, birth count, first time and members', () => {
    const s2 = model.clusters.find((c) => c.key === 's2')!;
    expect(s2).toMatchObject({ label: 'Berries lesson', kind: 'chat', props: 2, createdAt: '2026-01-05T00:00:00Z' });
    expect(s2.members.sort()).toEqual(['n_a', 'n_b', 'n_c', 'n_d']);
  });
});

describe('sorting', () => {
  const model = buildTable(data);

  it('has a default direction per column, and a click toggles it', () => {
    expect(defaultDir('name')).toBe('asc');
    expect(defaultDir('props')).toBe('desc');
    expect(defaultDir('created')).toBe('desc');
    expect(nextSort({ key: 'name', dir: 'asc' }, 'name')).toEqual({ key: 'name', dir: 'desc' });
    expect(nextSort({ key: 'name', dir: 'desc' }, 'created')).toEqual({ key: 'created', dir: 'desc' });
  });

  it('orders clusters and the chains within them by the same column', () => {
    const byName = sortTable(model.clusters, 'name', 'asc');
    expect(byName.map((c) => c.label)).toEqual(['Berries lesson', 'fruit.md']);
    expect(byName[0].chains.map((c) => c.line)).toEqual(['Apples ∧ Bananas ⟹ Cherries', 'Dates']);
    const byNameDesc = sortTable(model.clusters, 'name', 'desc');
    expect(byNameDesc.map((c) => c.label)).toEqual(['fruit.md', 'Berries lesson']);
    expect(byNameDesc[0].chains.map((c) => c.line)).toEqual(['Elderberries', 'Apples ⟹ Bananas']);

    const byProps = sortTable(model.clusters, 'props', 'desc');
    expect(byProps.map((c) => c.key)).toEqual(['s1', 's2']);
    expect(byProps[1].chains.map((c) => c.id)).toEqual(['arg_2', 'n_d']);

    const byCreated = sortTable(model.clusters, 'created', 'desc');
    expect(byCreated.map((c) => c.key)).toEqual(['s2', 's1']);
    expect(byCreated[1].chains.map((c) => c.id)).toEqual(['n_e', 'arg_1']);
    expect(sortTable(model.clusters, 'created', 'asc').map((c) => c.key)).toEqual(['s1', 's2']);
  });
});

describe('search', () => {
  const model = buildTable(data);
  const search = chainSearch(model);

  it('is no filter for an empty query', () => {
    expect(search('  ')).toBeNull();
  });

  it('finds a chain by a word inside a statement of one of its propositions', () => {
    const hits = search('gravity')!;
    expect([...hits.keys()].sort()).toEqual(['arg_1', 'arg_2']);
  });

  it('finds by alias and by name, fuzzily', () => {
    expect(search('plantain')!.has('arg_1')).toBe(true);
    expect(search('Eldreberries')!.has('n_e')).toBe(true);
  });

  it('filters chains under their clusters and drops empty clusters', () => {
    const rows = filterTable(model.clusters, search('Dates'));
    expect(rows.map((c) => c.key)).toEqual(['s2']);
    expect(rows[0].chains.map((c) => c.id)).toEqual(['n_d']);
    expect(rows[0].members).toEqual(['n_d']);
    expect(rows[0].storedChains).toBe(0); // the row counts the chains it shows: a lonely proposition is none
    expect(filterTable(model.clusters, search('gravity')).map((c) => [c.key, c.storedChains])).toEqual([
      ['s1', 1],
      ['s2', 1],
    ]);
  });
});

describe('search: why a row matched, and its rank (issue 29)', () => {
  const heapData = normalizeGraph({
    nodes: [
      prop('n_arr', 'Array', 'h1', '2026-01-01T00:00:00Z', 'An array stores items in order.'),
      prop('n_pq', 'Priority queue', 'h1', '2026-01-02T00:00:00Z', 'A priority queue is usually built on a heap.'),
      prop('n_sort', 'Heapsort', 'h1', '2026-01-03T00:00:00Z', 'Sorting by repeatedly taking the largest item.'),
      prop('n_heap', 'Heap', 'h2', '2026-01-04T00:00:00Z', 'A tree where each parent is at least its children.'),
      prop('n_help', 'Help desk', 'h2', '2026-01-05T00:00:00Z', 'Where questions go.', ['binary heap support']),
      prop('n_tree', 'Tree', 'h2', '2026-01-06T00:00:00Z', 'Perhaps a forest helps.'),
      chain('arg_pq', ['n_arr'], 'n_pq', '2026-01-02T00:00:00Z'),
      chain('arg_sort', ['n_pq'], 'n_sort', '2026-01-03T00:00:00Z'),
    ],
    links: [],
    clusters: [
      { key: 'h1', kind: 'chat', label: 'Queues lesson', nodeIds: ['n_arr', 'n_pq', 'n_sort'], nodeCount: 3 },
      { key: 'h2', kind: 'notes', label: 'trees.md', nodeIds: ['n_heap', 'n_help', 'n_tree'], nodeCount: 3 },
    ],
  });
  const model = buildTable(heapData);
  const search = chainSearch(model);

  it("ranks the note whose own title is the query first, then titles holding it, then names, aliases, statements", () => {
    const hits = search('heap')!;
    expect([...hits.keys()]).toEqual(['n_heap', 'arg_sort', 'n_help', 'arg_pq']);
    expect(hits.get('n_heap')).toMatchObject({ tier: 0, field: 'title', nodeId: 'n_heap', text: 'Heap', ranges: [[0, 4]] });
    expect(hits.get('arg_sort')).toMatchObject({ tier: 1, field: 'title', nodeId: 'n_sort', text: 'Heapsort', ranges: [[0, 4]] });
    expect(hits.get('n_help')).toMatchObject({ tier: 3, field: 'alias', nodeId: 'n_help', text: 'binary heap support', ranges: [[7, 11]] });
    expect(hits.get('arg_pq')).toMatchObject({ tier: 4, field: 'statement', nodeId: 'n_pq', ranges: [[39, 43]] });
  });

  it('lists look-alike rows ("perhaps", "helps") only when nothing holds the query as typed', () => {
    expect(search('heap')!.has('n_tree')).toBe(false);
    const typo = search('prioirty')!;
    expect([...typo.values()].every((m) => m.tier === 5)).toBe(true);
    expect(typo.has('arg_pq')).toBe(true);
  });

  it('shows every matched row the text it matched in, so no row matches invisibly', () => {
    for (const q of ['heap', 'HEAP', 'queue', 'prioirty']) {
      for (const m of search(q)!.values()) {
        expect(m.ranges.length, `${q} → ${m.id}`).toBeGreaterThan(0);
        const marked = highlightParts(m.text, m.ranges).filter((p) => p.hit).map((p) => p.text.toLowerCase());
        expect(marked.length).toBeGreaterThan(0);
        if (q !== 'prioirty') expect(marked).toContain(q.toLowerCase());
      }
    }
  });

  it('orders clusters by their best row and rows within them by rank', () => {
    const ranked = rankTable(filterTable(sortTable(model.clusters, 'name', 'asc'), search('heap')), search('heap'));
    expect(ranked.map((c) => c.key)).toEqual(['h2', 'h1']);
    expect(ranked[0].chains.map((c) => c.id)).toEqual(['n_heap', 'n_help']);
    expect(ranked[1].chains.map((c) => c.id)).toEqual(['arg_sort', 'arg_pq']);
    expect(rankTable(model.clusters, null).map((c) => c.key)).toEqual(model.clusters.map((c) => c.key));
  });

  it('finds every case-insensitive occurrence and splits text around it', () => {
    expect(findRanges('Heap of heaps', 'heap')).toEqual([
      [0, 4],
      [8, 12],
    ]);
    expect(findRanges('abc', '')).toEqual([]);
    expect(highlightParts('a heap b', [[2, 6]])).toEqual([
      { text: 'a ', hit: false },
      { text: 'heap', hit: true },
      { text: ' b', hit: false },
    ]);
    expect(highlightParts('heap', [])).toEqual([{ text: 'heap', hit: false }]);
  });
});

describe('selection', () => {
  it('tells none / some / all and toggles a group', () => {
    const sel = new Set(['a']);
    expect(checkState(['a', 'b'], sel)).toBe('some');
    expect(checkState(['c'], sel)).toBe('none');
    const all = toggleMembers(sel, ['a', 'b']);
    expect([...all].sort()).toEqual(['a', 'b']);
    expect(checkState(['a', 'b'], all)).toBe('all');
    expect([...toggleMembers(all, ['a', 'b'])]).toEqual([]);
  });
});
