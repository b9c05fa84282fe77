// Pure geometry for the graph renderer: fitting the camera, label fading, padded cluster hulls,
// the persisted camera, and cluster colours.

import { polygonHull } from 'd3-polygon';

export type Point = [number, number];

export interface Camera {
  x: number;
  y: number;
  k: number;
}

export const MIN_ZOOM = 0.02;
export const MAX_ZOOM = 8;

export interface Bounds {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * The box the camera fits (issue 17, bad input): the bounding box of the points without the
 * few far away from the rest, so a node at a million units (a hand-edited or damaged
 * positions.json) does not shrink the graph to a dot or push it off screen. Per axis, a point
 * counts when it lies within 4 spreads of the 10–90 % range (spread: that range, at least 1); an
 * ordinary layout loses nothing, and under 5 points all count. Non-finite coordinates never
 * count. O(n log n).
 */
export function fitBounds(points: readonly { x: number; y: number }[]): Bounds | null {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const p of points) {
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) continue;
    xs.push(p.x);
    ys.push(p.y);
  }
  if (xs.length < 5) return boundsOf(xs.map((x, i) => ({ x, y: ys[i] })));
  const range = (v: number[]): [number, number] => {
    const s = Float64Array.from(v).sort();
    const lo = s[Math.floor((s.length - 1) * 0.1)];
    const hi = s[Math.floor((s.length - 1) * 0.9)];
    const spread = Math.max(hi - lo, 1);
    return [lo - 4 * spread, hi + 4 * spread];
  };
  const [ax, bx] = range(xs);
  const [ay, by] = range(ys);
  const kept = [];
  for (let i = 0; i < xs.length; i++) if (xs[i] >= ax && xs[i] <= bx && ys[i] >= ay && ys[i] <= by) kept.push({ x: xs[i], y: ys[i] });
  return boundsOf(kept);
}

/** The bounding box of some points (null for none). */
export function boundsOf(points: Iterable<{ x: number; y: number }>): Bounds | null {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const p of points) {
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) continue;
    if (p.x < x0) x0 = p.x;
    if (p.y < y0) y0 = p.y;
    if (p.x > x1) x1 = p.x;
    if (p.y > y1) y1 = p.y;
  }
  return x0 === Infinity ? null : { x0, y0, x1, y1 };
}

export interface Insets {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

/**
 * The camera that shows `bounds` centred in a `width`×`height` viewport, leaving `margin` pixels
 * around (a number, or per side: labels run to the right of nodes, chrome sits on top), never
 * zooming in past `maxK` (a lone node should not fill the screen).
 */
export function fitCamera(bounds: Bounds | null, width: number, height: number, margin: number | Insets = 60, maxK = 2): Camera {
  const m = typeof margin === 'number' ? { top: margin, right: margin, bottom: margin, left: margin } : margin;
  const w = Math.max(1, width - m.left - m.right);
  const h = Math.max(1, height - m.top - m.bottom);
  if (!bounds || width <= 0 || height <= 0) return { x: width / 2, y: height / 2, k: 1 };
  const bw = Math.max(bounds.x1 - bounds.x0, 1);
  const bh = Math.max(bounds.y1 - bounds.y0, 1);
  const k = clamp(Math.min(w / bw, h / bh), MIN_ZOOM, maxK);
  const cx = (bounds.x0 + bounds.x1) / 2;
  const cy = (bounds.y0 + bounds.y1) / 2;
  return { x: m.left + w / 2 - cx * k, y: m.top + h / 2 - cy * k, k };
}

/**
 * The insets (CSS px) a fit keeps free of the page's chrome drawn over the canvas (title, tools,
 * hint: issue 29, the graph fitted at 390×844 and 800×600): a box whose middle lies in the upper
 * half of the canvas covers the top down to its bottom, one in the lower half the bottom up to its
 * top; `edge` px more on every side. When the boxes would leave less than a third of the height,
 * only `edge` is kept at the top and bottom (the chrome then covers some of the graph rather than
 * squeezing it to a line).
 *
 * @param boxes the chrome's boxes in canvas px ({x0, y0, x1, y1}); empty or zero-sized ones count
 *   for nothing.
 */
export function chromeInsets(width: number, height: number, boxes: readonly Bounds[], edge = 12): Insets {
  let top = 0;
  let bottom = 0;
  for (const b of boxes) {
    if (!(b.x1 > b.x0 && b.y1 > b.y0) || b.x1 <= 0 || b.x0 >= width) continue;
    if ((b.y0 + b.y1) / 2 < height / 2) top = Math.max(top, b.y1);
    else bottom = Math.max(bottom, height - b.y0);
  }
  if (height - top - bottom - 2 * edge < height / 3) top = bottom = 0;
  return { top: top + edge, right: edge, bottom: bottom + edge, left: edge };
}

/** `b` grown by `pad` world units on every side (null stays null). */
export function padBounds(b: Bounds | null, pad: number): Bounds | null {
  return b && { x0: b.x0 - pad, y0: b.y0 - pad, x1: b.x1 + pad, y1: b.y1 + pad };
}

export function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/** Labels fade in with zoom: 0 below 60 % of `labelZoom`, 1 from `labelZoom` on, linear between. */
export function labelAlpha(k: number, labelZoom: number): number {
  const full = Math.max(labelZoom, 0.01);
  const start = full * 0.6;
  return clamp((k - start) / (full - start), 0, 1);
}

/**
 * The convex hull of discs of radius `pad` around `points` (a rounded, padded hull), as a
 * polygon (counter-clockwise from d3-polygon). Works for one or two points too.
 */
export function paddedHull(points: readonly Point[], pad: number, segments = 12): Point[] {
  if (!points.length) return [];
  // Only the raw hull's corners matter: the hull of discs around them equals the hull of all discs.
  const core = points.length >= 3 ? (polygonHull(points as Point[]) ?? dedupe(points)) : dedupe(points);
  const ring: Point[] = [];
  for (const [x, y] of core) {
    for (let i = 0; i < segments; i++) {
      const a = (i / segments) * Math.PI * 2;
      ring.push([x + Math.cos(a) * pad, y + Math.sin(a) * pad]);
    }
  }
  return polygonHull(ring) ?? ring;
}

function dedupe(points: readonly Point[]): Point[] {
  const seen = new Set<string>();
  const out: Point[] = [];
  for (const p of points) {
    const key = `${p[0]},${p[1]}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(p);
    }
  }
  return out;
}

/** Where a hull's label sits: centred above its top edge. */
export function hullLabelAnchor(hull: readonly Point[]): Point | null {
  if (!hull.length) return null;
  let top = hull[0];
  let x0 = Infinity;
  let x1 = -Infinity;
  for (const p of hull) {
    if (p[1] < top[1]) top = p;
    x0 = Math.min(x0, p[0]);
    x1 = Math.max(x1, p[0]);
  }
  return [(x0 + x1) / 2, top[1]];
}

/** A stored camera, or null when it is missing or malformed. */
export function parseCamera(raw: string | null): Camera | null {
  if (!raw) return null;
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v !== 'object' || v === null) return null;
    const { x, y, k } = v as Record<string, unknown>;
    if (typeof x !== 'number' || typeof y !== 'number' || typeof k !== 'number') return null;
    if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(k) || k <= 0) return null;
    return { x, y, k: clamp(k, MIN_ZOOM, MAX_ZOOM) };
  } catch {
    return null;
  }
}

/** FNV-1a of a string (32-bit), for stable per-cluster colours. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Calm, distinguishable cluster colours (muted; readable on a light background). */
export const CLUSTER_COLORS = ['#4a7bd0', '#d9823b', '#4f9d69', '#c2555a', '#8467b8', '#a0785a', '#cf6fa8', '#3c9aa8', '#b59a2e', '#6b7a8f'] as const;

export const NO_CLUSTER_COLOR = '#6b7280';

/**
 * A colour per cluster: each key starts at its hash's colour and takes the next free one, so
 * a handful of clusters never share a colour (keys sorted first: the result does not depend on
 * their order). Once every colour is taken, colours repeat.
 */
export function assignClusterColors(keys: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>();
  const n = CLUSTER_COLORS.length;
  let used = new Set<number>();
  for (const key of [...new Set(keys)].sort()) {
    if (used.size === n) used = new Set();
    let i = hashString(key) % n;
    while (used.has(i)) i = (i + 1) % n;
    used.add(i);
    out.set(key, CLUSTER_COLORS[i]);
  }
  return out;
}

/** `#rrggbb` with an alpha, as `rgba(...)`. */
export function withAlpha(hex: string, alpha: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/** A label shortened to `max` characters with an ellipsis. */
export function shorten(text: string, max = 32): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`;
}
