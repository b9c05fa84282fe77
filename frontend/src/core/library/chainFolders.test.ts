import { describe, expect, it } from 'vitest';
import { groupByFolder } from './chainFolders';
import type { GraphFolder } from './graph';

const folder = (key: string, path: string, parent: string | null, clusters: string[]): GraphFolder => ({ key, label: path.split('/').pop()!, path, parent, clusters, nodeCount: 0 });
const row = (key: string, props: number, members: string[]) => ({ key, props, members });

describe('groupByFolder', () => {
  const folders = [folder('d1', 'vault', null, ['s1']), folder('d2', 'vault/math', 'd1', ['s2', 's3']), folder('d3', 'vault/empty', 'd1', ['gone'])];

  it('groups file rows under their folder, parents first, nested folders deeper; lessons stay loose', () => {
    const { groups, loose } = groupByFolder([row('s3', 2, ['a', 'b']), row('lesson', 1, ['c']), row('s1', 1, ['d']), row('s2', 3, ['b', 'e'])], folders);
    expect(groups.map((g) => [g.folder.path, g.depth, g.clusters.map((c) => c.key), g.props, g.members])).toEqual([
      ['vault', 0, ['s1'], 1, ['d']],
      ['vault/math', 1, ['s3', 's2'], 5, ['a', 'b', 'e']], // rows keep the table's order
    ]);
    expect(loose.map((c) => c.key)).toEqual(['lesson']);
  });

  it('groups nothing without folders, and drops folders with no shown row (a search)', () => {
    expect(groupByFolder([row('s1', 1, [])], undefined)).toEqual({ groups: [], loose: [row('s1', 1, [])] });
    expect(groupByFolder([row('s2', 1, [])], folders).groups.map((g) => g.folder.key)).toEqual(['d2']);
  });

  it('survives a parent cycle in bad input', () => {
    const cyclic = [folder('a', 'a', 'b', ['s1']), folder('b', 'b', 'a', ['s2'])];
    expect(groupByFolder([row('s1', 1, []), row('s2', 1, [])], cyclic).groups.map((g) => g.depth)).toEqual([1, 1]);
  });
});
