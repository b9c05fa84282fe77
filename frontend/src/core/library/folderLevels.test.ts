import { describe, expect, it } from 'vitest';
import { clusterShown, FILE_MIN_PX, folderOfCluster, orderHullSpots, type HullSpot } from './folderLevels';

const view = { width: 1000, height: 600 };

describe('clusterShown', () => {
  it('draws folders and top-level clusters at every zoom', () => {
    expect(clusterShown('folder', 10, 0.01, view)).toBe(true);
    expect(clusterShown('top', 10, 0.01, view)).toBe(true);
  });
  it('draws a file inside a folder only once it is large enough on screen', () => {
    // 0.3 × 600 = 180 px > FILE_MIN_PX: the viewport share decides here
    expect(clusterShown('file', 400, 0.4, view)).toBe(false); // 160 px
    expect(clusterShown('file', 400, 0.5, view)).toBe(true); // 200 px
    expect(clusterShown('file', 100, 1.5, { width: 300, height: 300 })).toBe(false); // 150 < FILE_MIN_PX
    expect(clusterShown('file', FILE_MIN_PX, 1, { width: 300, height: 300 })).toBe(true);
  });
  it('never draws a file with a non-finite size', () => {
    expect(clusterShown('file', Number.NaN, 1, view)).toBe(false);
    expect(clusterShown('file', Number.POSITIVE_INFINITY, 0, view)).toBe(false);
  });
});

describe('orderHullSpots', () => {
  const spot = (label: string, level: HullSpot['level'], size: number): HullSpot => ({ label, level, size, color: '#000', x: 0, y: 0 });
  it('places folder labels first, then top-level clusters, then files; larger first, ties by name', () => {
    const order = orderHullSpots([spot('f.md', 'file', 90), spot('lesson', 'top', 5), spot('b', 'folder', 3), spot('a', 'folder', 3), spot('big', 'folder', 40)]);
    expect(order.map((s) => s.label)).toEqual(['big', 'a', 'b', 'lesson', 'f.md']);
  });
});

describe('folderOfCluster', () => {
  it('maps each cluster to its folder', () => {
    const folders = [
      { key: 'dir_1', label: 'vault', path: 'vault', parent: null, clusters: ['s1'] },
      { key: 'dir_2', label: 'x', path: 'vault/x', parent: 'dir_1', clusters: ['s2', 's3'] },
    ];
    const of = folderOfCluster(folders);
    expect(of.get('s3')?.path).toBe('vault/x');
    expect(of.get('s1')?.key).toBe('dir_1');
    expect(of.has('lesson')).toBe(false);
  });
});

describe('normalizeGraph folders', () => {
  it('reads the folder level defensively', async () => {
    const { normalizeGraph } = await import('./graph');
    const g = normalizeGraph({
      nodes: [],
      links: [],
      clusters: [{ key: 's1', kind: 'notes', label: 'a.md', nodeIds: [], folder: 'dir_1' }, { key: 'c1', kind: 'chat', nodeIds: [], folder: 5 }],
      folders: [{ key: 'dir_1', label: 'vault', path: 'vault', parent: null, clusters: ['s1', 7], nodeCount: 2 }, { key: 'dir_1' }, { label: 'no key' }, 'junk'],
    });
    expect(g.clusters.map((c) => c.folder)).toEqual(['dir_1', undefined]);
    expect(g.folders).toEqual([{ key: 'dir_1', label: 'vault', path: 'vault', parent: null, clusters: ['s1'], nodeCount: 2 }]);
    expect(normalizeGraph({ nodes: [], links: [], clusters: [] }).folders).toBeUndefined();
  });
});
