import { describe, expect, it } from 'vitest';
import { chainsForSelection, selectionSummary } from './chainSelection';

const chains = [
  { id: 'arg_1', premises: ['a'], conclusion: 'b' },
  { id: 'arg_2', premises: ['b'], conclusion: 'c' },
  { id: 'arg_3', premises: ['a', 'b'], conclusion: 'd' },
];


describe('chainsForSelection', () => {
  it('is empty for an empty selection', () => {
    expect(chainsForSelection(new Set(), chains)).toEqual({ chains: [], singletons: [], count: 0 });
  });

  it('includes a chain only when its conclusion and every premise are selected', () => {
    const r = chainsForSelection(new Set(['a', 'b']), chains);
    expect(r.chains.map((c) => c.id)).toEqual(['arg_1']);
    expect(r.singletons).toEqual([]);
    expect(r.count).toBe(1);
  });

  it('does not include a chain missing one premise', () => {
    const r = chainsForSelection(new Set(['b', 'd']), chains);
    expect(r.chains).toEqual([]);
    // neither is in a surviving chain: two singleton chains
    expect(r.singletons).toEqual(['b', 'd']);
    expect(r.count).toBe(2);
  });

  it('a conclusion alone is a singleton, not its chain', () => {
    const r = chainsForSelection(new Set(['c']), chains);
    expect(r.chains).toEqual([]);
    expect(r.singletons).toEqual(['c']);
  });

  it('counts every covered chain, overlapping ones too', () => {
    const r = chainsForSelection(new Set(['a', 'b', 'c', 'd']), chains);
    expect(r.chains.map((c) => c.id)).toEqual(['arg_1', 'arg_2', 'arg_3']);
    expect(r.singletons).toEqual([]);
    expect(r.count).toBe(3);
  });

  it('adds singletons for selected nodes outside the included chains', () => {
    const r = chainsForSelection(new Set(['a', 'b', 'x', 'c2']), chains);
    expect(r.chains.map((c) => c.id)).toEqual(['arg_1']);
    expect(r.singletons).toEqual(['x', 'c2']);
    expect(r.count).toBe(3);
  });

  it('ignores chain ids in the selection', () => {
    const r = chainsForSelection(new Set(['arg_1', 'a']), chains);
    expect(r.chains).toEqual([]);
    expect(r.singletons).toEqual(['a']);
    expect(r.count).toBe(1);
  });

  it('ignores a chain without premises', () => {
    const r = chainsForSelection(new Set(['z']), [{ id: 'arg_x', premises: [], conclusion: 'z' }]);
    expect(r.chains).toEqual([]);
    expect(r.singletons).toEqual(['z']);
  });
});

describe('selectionSummary', () => {
  it('says nodes → chains with plurals', () => {
    expect(selectionSummary(1, 1)).toBe('1 node → 1 chain');
    expect(selectionSummary(5, 2)).toBe('5 nodes → 2 chains');
    expect(selectionSummary(0, 0)).toBe('0 nodes → 0 chains');
  });
});
