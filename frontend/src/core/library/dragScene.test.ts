import { describe, expect, it } from 'vitest';
import { paddedHull, type Point } from './graphMath';
import { dragHullPoints, dragScene, forgetCorners } from './dragScene';
import type { RenderCluster, RenderLink, RenderNode } from './scene';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function node(id: string, x: number, y: number, color = '#111111', kind: RenderNode['kind'] = 'proposition'): RenderNode {
  return { id, kind, name: id, cluster: 'c', color, ax: x, ay: y, degree: 0, labelWidth: -1, x, y };
}

function cluster(key: string, nodes: RenderNode[], level: RenderCluster['level'] = 'top'): RenderCluster {
  return { key, label: key, color: '#111111', nodes, hull: null, hullDirty: true, level };
}

/** A polygon's corners as sorted "x,y" strings (rounded), to compare hulls whatever their start. */
function cornerSet(points: readonly Point[]): string[] {
  return points.map(([x, y]) => `${x.toFixed(6)},${y.toFixed(6)}`).sort();
}

describe('dragScene', () => {
  const a = node('a', 0, 0, '#aa0000');
  const b = node('b', 10, 0, '#aa0000');
  const c = node('c', 0, 10, '#00aa00');
  const imp = node('i', 5, 5, '#000000', 'implication');
  const links: RenderLink[] = [
    { source: a, target: imp },
    { source: imp, target: c },
    { source: b, target: c },
  ];
  const groups = new Map<string, RenderNode[]>([
    ['#aa0000', [a, b]],
    ['#00aa00', [c]],
  ]);
  const session = cluster('s', [a, b]);
  const other = cluster('t', [c]);
  const folder = cluster('f', [a, b, c], 'folder');
  const scene = { links, groups, implications: [imp], clusters: [folder, session, other] };

  it('splits off the dragged node, its links and the clusters holding it; the rest is untouched', () => {
    const d = dragScene(a, scene);
    expect(d.links).toEqual([links[0]]);
    expect(d.staticLinks).toEqual([links[1], links[2]]);
    expect(d.staticGroups.get('#aa0000')).toEqual([b]);
    expect(d.staticGroups.get('#00aa00')).toEqual([c]);
    expect(d.staticImplications).toEqual([imp]);
    expect([...d.clusters]).toEqual([folder, session]);
    // the inputs are not mutated
    expect(groups.get('#aa0000')).toEqual([a, b]);
    expect(links).toHaveLength(3);
  });

  it('an implication leaves the implications and keeps both of its links aside', () => {
    const d = dragScene(imp, scene);
    expect(d.links).toEqual([links[0], links[1]]);
    expect(d.staticLinks).toEqual([links[2]]);
    expect(d.staticImplications).toEqual([]);
    expect(d.staticGroups).toBe(groups);
    expect(d.clusters.size).toBe(0);
  });

  it("a cluster's hull from cached corners plus the node equals its hull from every member", () => {
    const random = rng(17);
    for (const size of [1, 2, 3, 4, 50, 2_000]) {
      const members = Array.from({ length: size }, (_, i) => node(`n${i}`, random() * 400, random() * 300));
      const c1 = cluster('big', members);
      const dragged = members[size >> 1];
      const d = dragScene(dragged, { links: [], groups: new Map([['#111111', members]]), implications: [], clusters: [c1] });
      // the node moves around, in and out of the others' hull; the corners are computed once
      for (const [x, y] of [
        [200, 150],
        [-300, 40],
        [900, 900],
        [dragged.x, dragged.y],
      ]) {
        dragged.x = x;
        dragged.y = y;
        const fast = paddedHull(dragHullPoints(d, c1), 20, 14);
        const full = paddedHull(
          members.map((n): Point => [n.x, n.y]),
          20,
          14,
        );
        expect(cornerSet(fast)).toEqual(cornerSet(full));
      }
      expect(d.corners.size).toBe(1);
      expect(dragHullPoints(d, c1).length).toBeLessThanOrEqual(Math.min(size, 60));
    }
  });

  it('forgets the corners when the other members move', () => {
    const members = [node('p', 0, 0), node('q', 100, 0), node('r', 0, 100), node('s', 100, 100)];
    const c1 = cluster('m', members);
    const d = dragScene(members[0], { links: [], groups: new Map(), implications: [], clusters: [c1] });
    dragHullPoints(d, c1);
    members[3].x = 500; // a simulation tick moved another member
    forgetCorners(d);
    const pts = dragHullPoints(d, c1);
    expect(pts.some(([x]) => x === 500)).toBe(true);
  });
});
