import { describe, expect, it } from 'vitest';
import { plainMath } from '../math';
import { LabelGrid, LabelTier, clampIntoWidth, compareLabels, cullLabels, insideViewport, labelSide, overlaps, type LabelCandidate } from './labelCull';

/** Deterministic PRNG (mulberry32), so a failing case can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VIEW = { width: 1280, height: 800 };

/** Labels as the canvas makes them: node labels 14 px tall and 20-220 px wide to the right of a
 * node anywhere on (or a little off) the viewport; cluster labels 15 px tall, centred. */
function candidates(n: number, seed: number, clusters = Math.round(n / 50)): LabelCandidate[] {
  const r = rng(seed);
  const out: LabelCandidate[] = [];
  for (let i = 0; i < n; i++) {
    const x = r() * (VIEW.width + 200) - 200;
    const y = r() * (VIEW.height + 40) - 20;
    const w = 20 + r() * 200;
    out.push({ x0: x, y0: y - 7, x1: x + w, y1: y + 7, tier: LabelTier.node, weight: Math.floor(r() * 12), name: `n${i}` });
  }
  for (let i = 0; i < clusters; i++) {
    const x = r() * VIEW.width;
    const y = r() * VIEW.height;
    const w = 40 + r() * 260;
    out.push({ x0: x - w / 2, y0: y - 15, x1: x + w / 2, y1: y, tier: LabelTier.cluster, weight: 0, name: `c${i}` });
  }
  return out;
}

function visible(c: LabelCandidate): boolean {
  return c.x1 > 0 && c.x0 < VIEW.width && c.y1 > 0 && c.y0 < VIEW.height;
}

describe('cullLabels', () => {
  it('never accepts two labels that overlap, at any density', () => {
    for (const [n, seed] of [
      [10, 1],
      [200, 2],
      [2_000, 3],
      [10_000, 4],
    ] as const) {
      const all = candidates(n, seed);
      const accepted = cullLabels(all, VIEW).map((i) => all[i]);
      expect(accepted.length).toBeGreaterThan(0);
      for (let a = 0; a < accepted.length; a++) {
        for (let b = a + 1; b < accepted.length; b++) {
          if (overlaps(accepted[a], accepted[b])) throw new Error(`labels ${accepted[a].name} and ${accepted[b].name} overlap (n=${n})`);
        }
      }
    }
  });

  it('respects priority: every refused visible label overlaps an accepted one placed before it', () => {
    const all = candidates(3_000, 7);
    const acceptedIdx = cullLabels(all, VIEW);
    const accepted = new Set(acceptedIdx);
    const placed = acceptedIdx.map((i) => all[i]);
    for (let i = 0; i < all.length; i++) {
      const c = all[i];
      if (accepted.has(i) || !visible(c)) continue;
      const blocker = placed.find((p) => overlaps(p, c));
      expect(blocker, `${c.name} was refused with nothing in its way`).toBeDefined();
      expect(compareLabels(blocker!, c)).toBeLessThanOrEqual(0); // the blocker ranks at least as high
    }
    // clusters first: every visible cluster label that overlaps no other cluster label is drawn
    const clusters = all.map((c, i) => [c, i] as const).filter(([c]) => c.tier === LabelTier.cluster && visible(c));
    for (const [c, i] of clusters) {
      const clash = clusters.some(([o, j]) => j !== i && overlaps(o, c));
      if (!clash) expect(accepted.has(i), `${c.name}`).toBe(true);
    }
  });

  it('ranks pinned, then cluster, then highlighted, then nodes by degree, then name', () => {
    const box = { x0: 100, y0: 100, x1: 200, y1: 114 };
    const make = (tier: LabelTier, weight: number, name: string): LabelCandidate => ({ ...box, tier, weight, name });
    const order = (cs: LabelCandidate[]) => cullLabels(cs, VIEW).map((i) => cs[i].name);
    expect(order([make(LabelTier.node, 50, 'hub'), make(LabelTier.cluster, 0, 'region')])).toEqual(['region']);
    expect(order([make(LabelTier.cluster, 0, 'region'), make(LabelTier.pinned, 0, 'selected')])).toEqual(['selected']);
    expect(order([make(LabelTier.node, 3, 'a'), make(LabelTier.highlighted, 1, 'neighbour')])).toEqual(['neighbour']);
    expect(order([make(LabelTier.node, 3, 'small'), make(LabelTier.node, 9, 'big')])).toEqual(['big']);
    expect(order([make(LabelTier.node, 3, 'b'), make(LabelTier.node, 3, 'a')])).toEqual(['a']);
    // touching edges do not overlap: both are drawn
    const right = { ...box, x0: 200, x1: 300, tier: LabelTier.node, weight: 0, name: 'right' } as LabelCandidate;
    expect(order([make(LabelTier.node, 1, 'left'), right]).sort()).toEqual(['left', 'right']);
  });

  it('refuses off-screen, NaN, inverted and absurdly large boxes, and stops at the limit', () => {
    const ok = { x0: 10, y0: 10, x1: 60, y1: 24, tier: LabelTier.node, weight: 1, name: 'ok' } as LabelCandidate;
    const bad: LabelCandidate[] = [
      { ...ok, name: 'left', x0: -300, x1: -10 },
      { ...ok, name: 'below', y0: 900, y1: 914 },
      { ...ok, name: 'nan', x0: NaN },
      { ...ok, name: 'inverted', x0: 60, x1: 10 },
      { ...ok, name: 'huge', x0: -1e12, x1: 1e12 },
      { ...ok, name: 'inf', x1: Infinity },
    ];
    expect(cullLabels([...bad, ok], VIEW).map((i) => [...bad, ok][i].name)).toEqual(['ok']);
    const many = candidates(5_000, 11);
    expect(cullLabels(many, VIEW, 25)).toHaveLength(25);
  });

  it('a grid answers across cell edges and negative coordinates', () => {
    const grid = new LabelGrid();
    expect(grid.place({ x0: -70, y0: -5, x1: 47.5, y1: 9 })).toBe(true);
    expect(grid.place({ x0: 47, y0: 8, x1: 140, y1: 20 })).toBe(false); // overlaps across a cell edge
    expect(grid.place({ x0: 47.5, y0: -5, x1: 140, y1: 9 })).toBe(true); // touches only
    expect(grid.place({ x0: -100, y0: -30, x1: -69, y1: -4 })).toBe(false); // into the first one's corner
    expect(grid.taken).toHaveLength(2);
  });

  it('cluster names draw math as text, without raw $', () => {
    expect(plainMath('Newton: $F = ma$')).not.toContain('$');
    expect(plainMath('Limits $\\lim_{h \\to 0}$')).not.toContain('$');
  });

  it('bench: culls 10,000 labels within a frame budget (figure printed, not asserted)', () => {
    const all = candidates(10_000, 5, 300);
    cullLabels(all, VIEW); // warm the JIT
    const times: number[] = [];
    let kept = 0;
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      kept = cullLabels(all, VIEW).length;
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(
      `[bench] cullLabels: 10,000 candidates (300 clusters) -> ${kept} drawn; median ${times[3].toFixed(2)} ms ` +
        `(min ${times[0].toFixed(2)}, max ${times[6].toFixed(2)}); frame budget 16.7 ms`,
    );
    expect(kept).toBeGreaterThan(0);
  });
});

describe('labels whole on the canvas (issue 29: the graph at 390x844)', () => {
  it('puts a label right of its node, left of it by the right edge, nowhere when neither fits', () => {
    expect(labelSide(100, 10, 150, 390)).toBe(110);
    expect(labelSide(300, 10, 150, 390)).toBe(140);
    expect(labelSide(195, 10, 220, 390)).toBeNull();
    expect(labelSide(-20, 10, 50, 390)).toBeNull(); // a node off the left edge: its label would be cut
  });
  it('every placed label lies inside the width', () => {
    for (let sx = -50; sx <= 450; sx += 7) {
      for (const w of [20, 120, 220, 400]) {
        const x0 = labelSide(sx, 8, w, 390);
        if (x0 !== null) expect(x0 >= 0 && x0 + w <= 390).toBe(true);
      }
    }
  });
  it('moves a cluster label sticking out of a side in, keeping its width', () => {
    expect(clampIntoWidth({ x0: 300, y0: 0, x1: 420, y1: 15 }, 390)).toEqual({ x0: 270, y0: 0, x1: 390, y1: 15 });
    expect(clampIntoWidth({ x0: -30, y0: 0, x1: 90, y1: 15 }, 390)).toEqual({ x0: 0, y0: 0, x1: 120, y1: 15 });
    const inside = { x0: 10, y0: 0, x1: 90, y1: 15 };
    expect(clampIntoWidth(inside, 390)).toBe(inside);
    const wide = { x0: -10, y0: 0, x1: 500, y1: 15 };
    expect(clampIntoWidth(wide, 390)).toBe(wide);
  });
  it('tells a box wholly inside from one that only shows', () => {
    expect(insideViewport({ x0: 0, y0: 0, x1: 390, y1: 844 }, 390, 844)).toBe(true);
    expect(insideViewport({ x0: 380, y0: 10, x1: 391, y1: 20 }, 390, 844)).toBe(false);
    expect(insideViewport({ x0: 10, y0: -1, x1: 20, y1: 5 }, 390, 844)).toBe(false);
  });
  it('places no label over reserved chrome, and ignores a box that is not sane', () => {
    const grid = new LabelGrid();
    grid.reserve({ x0: 0, y0: 800, x1: 390, y1: 844 });
    grid.reserve({ x0: 10, y0: 10, x1: Number.NaN, y1: 20 });
    expect(grid.taken).toHaveLength(1);
    expect(grid.place({ x0: 50, y0: 790, x1: 120, y1: 804 })).toBe(false);
    expect(grid.place({ x0: 50, y0: 770, x1: 120, y1: 784 })).toBe(true);
  });
});
