// Small helpers of the graph renderer (renderer.ts): label order, sorted insertion, map equality,
// medians and rounding. Pure.

import type { RenderNode } from '../../../core/library/scene';

/** Label priority: higher degree first, then by name. */
export function byLabelPriority(a: RenderNode, b: RenderNode): number {
  return b.degree - a.degree || a.name.localeCompare(b.name);
}

/** Insert into a list sorted by `cmp`, after its equals (binary search). */
export function insertSorted<T>(list: T[], item: T, cmp: (a: T, b: T) => number): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cmp(list[mid], item) <= 0) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, item);
}

export function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

export function median(values: readonly number[]): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

export function round4(v: number): number {
  return Math.round(v * 10000) / 10000;
}
