import { describe, expect, it } from 'vitest';
import { CLUSTER_COLORS, assignClusterColors, boundsOf, chromeInsets, fitBounds, fitCamera, padBounds, hullLabelAnchor, labelAlpha, paddedHull, parseCamera, shorten } from './graphMath';

describe('fitCamera', () => {
  it('centres the bounds and fits them with a margin', () => {
    const c = fitCamera({ x0: -100, y0: -50, x1: 100, y1: 50 }, 1000, 600, 100, 10);
    expect(c.k).toBeCloseTo(4, 5); // min(800/200, 400/100)
    const capped = fitCamera({ x0: -100, y0: -50, x1: 100, y1: 50 }, 1000, 600, 100, 2);
    expect(capped.k).toBe(2);
    expect(capped.x).toBe(500);
    expect(capped.y).toBe(300);
  });

  it('leaves room per side', () => {
    const c = fitCamera({ x0: 0, y0: 0, x1: 100, y1: 100 }, 400, 300, { top: 50, right: 100, bottom: 50, left: 100 }, 10);
    expect(c.k).toBe(2); // min(200/100, 200/100)
    expect(c.x).toBe(100); // the box starts at the left inset
    expect(c.y).toBe(50);
  });

  it('handles no nodes and a single node', () => {
    expect(fitCamera(null, 800, 600)).toEqual({ x: 400, y: 300, k: 1 });
    const one = fitCamera(boundsOf([{ x: 10, y: 20 }]), 800, 600);
    expect(one.x + 10 * one.k).toBeCloseTo(400);
    expect(one.y + 20 * one.k).toBeCloseTo(300);
  });
});

describe('labelAlpha', () => {
  it('fades in between 60 % of labelZoom and labelZoom', () => {
    expect(labelAlpha(0.5, 1)).toBe(0);
    expect(labelAlpha(0.6, 1)).toBe(0);
    expect(labelAlpha(0.8, 1)).toBeCloseTo(0.5);
    expect(labelAlpha(1, 1)).toBe(1);
    expect(labelAlpha(3, 1)).toBe(1);
  });
});

describe('paddedHull', () => {
  it('surrounds every point by at least the padding (roughly)', () => {
    const pts: [number, number][] = [
      [0, 0],
      [10, 0],
      [5, 8],
      [5, 3],
    ];
    const hull = paddedHull(pts, 5);
    const b = boundsOf(hull.map(([x, y]) => ({ x, y })))!;
    expect(b.x0).toBeLessThanOrEqual(-4.9);
    expect(b.x1).toBeGreaterThanOrEqual(14.9);
    expect(b.y1).toBeGreaterThanOrEqual(12.9);
  });

  it('makes a disc of one point and a capsule of two', () => {
    expect(paddedHull([[0, 0]], 4).length).toBeGreaterThanOrEqual(8);
    const two = paddedHull(
      [
        [0, 0],
        [20, 0],
      ],
      4,
    );
    const b = boundsOf(two.map(([x, y]) => ({ x, y })))!;
    expect(b.x0).toBeCloseTo(-4);
    expect(b.x1).toBeCloseTo(24);
    expect(paddedHull([], 4)).toEqual([]);
  });

  it('puts the label above the top edge, centred', () => {
    expect(
      hullLabelAnchor([
        [0, 10],
        [10, 0],
        [20, 10],
      ]),
    ).toEqual([10, 0]);
  });
});

describe('parseCamera', () => {
  it('reads a stored camera and refuses junk', () => {
    expect(parseCamera('{"x":1,"y":2,"k":0.5}')).toEqual({ x: 1, y: 2, k: 0.5 });
    expect(parseCamera('{"x":1,"y":2,"k":99}')!.k).toBe(8);
    expect(parseCamera('{"x":1,"y":2,"k":0}')).toBeNull();
    expect(parseCamera('{"x":"1","y":2,"k":1}')).toBeNull();
    expect(parseCamera('nope')).toBeNull();
    expect(parseCamera(null)).toBeNull();
  });
});

describe('assignClusterColors', () => {
  it('gives a handful of clusters different colours, whatever their order', () => {
    const keys = ['src_a', 'src_b', 'src_c', 'src_d', 'c_1'];
    const a = assignClusterColors(keys);
    expect(new Set(a.values()).size).toBe(keys.length);
    const b = assignClusterColors([...keys].reverse());
    for (const k of keys) expect(b.get(k)).toBe(a.get(k));
    expect(CLUSTER_COLORS).toContain(a.get('src_a'));
  });
});

describe('shorten', () => {
  it('keeps short text and cuts long text with an ellipsis', () => {
    expect(shorten('abc', 5)).toBe('abc');
    expect(shorten('abcdefgh', 5)).toBe('abcd…');
  });
});

describe('fitBounds (issue 17, bad input: far-away positions)', () => {
  const spiral = Array.from({ length: 200 }, (_, i) => ({ x: Math.sqrt(i) * 30 * Math.cos(i * 2.4), y: Math.sqrt(i) * 30 * Math.sin(i * 2.4) }));

  it('an ordinary layout keeps every point', () => {
    expect(fitBounds(spiral)).toEqual(boundsOf(spiral));
    const twoRegions = [...spiral, ...spiral.slice(0, 60).map((p) => ({ x: p.x + 2000, y: p.y }))];
    expect(fitBounds(twoRegions)).toEqual(boundsOf(twoRegions));
  });

  it('a few nodes far away, or not finite, do not count', () => {
    const far = [...spiral, { x: 1e9, y: 0 }, { x: -5e5, y: 3e5 }, { x: NaN, y: 1 }, { x: 1, y: Infinity }];
    expect(fitBounds(far)).toEqual(boundsOf(spiral));
    const k = fitCamera(fitBounds(far), 800, 600).k;
    expect(k).toBeGreaterThan(0.5); // the graph fills the view, not a dot
    expect(fitBounds([])).toBeNull();
    expect(fitBounds([{ x: 0, y: 0 }, { x: 1e9, y: 1e9 }])).toEqual({ x0: 0, y0: 0, x1: 1e9, y1: 1e9 }); // too few to judge
  });
});


describe('chromeInsets (issue 29: the graph out from under the title, tools and hint)', () => {
  const title = { x0: 18, y0: 14, x1: 168, y1: 110 };
  const tools = { x0: 184, y0: 14, x1: 372, y1: 44 };
  const hint = { x0: 18, y0: 790, x1: 380, y1: 832 };
  it('keeps the top free down to the lowest top box and the bottom up to the highest bottom box', () => {
    expect(chromeInsets(390, 844, [title, tools, hint], 12)).toEqual({ top: 122, right: 12, bottom: 66, left: 12 });
  });
  it('keeps only the edge without chrome, and ignores empty or off-canvas boxes', () => {
    const none = { top: 12, right: 12, bottom: 12, left: 12 };
    expect(chromeInsets(390, 844, [], 12)).toEqual(none);
    expect(chromeInsets(390, 844, [{ x0: 10, y0: 10, x1: 10, y1: 90 }, { x0: 400, y0: 10, x1: 500, y1: 90 }], 12)).toEqual(none);
  });
  it('gives up the chrome rather than squeeze the graph under a third of the height', () => {
    expect(chromeInsets(390, 200, [{ x0: 0, y0: 0, x1: 100, y1: 90 }, { x0: 0, y0: 120, x1: 100, y1: 200 }], 12)).toEqual({
      top: 12,
      right: 12,
      bottom: 12,
      left: 12,
    });
  });
  it('fits a padded graph inside the insets', () => {
    const insets = chromeInsets(390, 844, [title, tools, hint], 12);
    const b = padBounds({ x0: -100, y0: -50, x1: 300, y1: 80 }, 20)!;
    const cam = fitCamera(b, 390, 844, insets);
    expect(b.x0 * cam.k + cam.x).toBeGreaterThanOrEqual(insets.left - 1e-9);
    expect(b.x1 * cam.k + cam.x).toBeLessThanOrEqual(390 - insets.right + 1e-9);
    expect(b.y0 * cam.k + cam.y).toBeGreaterThanOrEqual(insets.top - 1e-9);
    expect(b.y1 * cam.k + cam.y).toBeLessThanOrEqual(844 - insets.bottom + 1e-9);
    expect(padBounds(null, 20)).toBeNull();
  });
});
