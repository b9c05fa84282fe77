// Label culling for the graph canvas (issue 17, item 3): at every zoom, labels are placed in
// priority order and a label is drawn only when its screen rectangle overlaps no label placed
// before it, so no two drawn labels ever overlap. Placed rectangles are reserved in a uniform grid
// (a spatial hash of CELL-px buckets), so each test looks only at the labels in the buckets the
// rectangle touches: culling n labels costs about n bucket lookups, not n².
//
// Priority (`compareLabels`): pinned labels (the selected node, then the hovered one) first, then
// cluster labels (sessions / regions), then the highlighted neighbours, then nodes by degree
// (higher first), ties by name. Pure: no canvas, no DOM.

/** A label's box in screen pixels (x0 < x1, y0 < y1). Edges that touch do not overlap. */
export interface LabelRect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** What kind of label: lower tiers are placed first. */
export const LabelTier = { pinned: 0, cluster: 1, highlighted: 2, node: 3 } as const;
export type LabelTier = (typeof LabelTier)[keyof typeof LabelTier];

export interface LabelCandidate extends LabelRect {
  tier: LabelTier;
  /** Within a tier, higher first (a node's degree; 0 for clusters). */
  weight: number;
  /** Tie-break, ascending (the label's text). */
  name: string;
}

/** `Array.sort` comparator: the order labels are offered to the grid. */
export function compareLabels(a: LabelCandidate, b: LabelCandidate): number {
  return a.tier - b.tier || b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

export function overlaps(a: LabelRect, b: LabelRect): boolean {
  return a.x0 < b.x1 && a.x1 > b.x0 && a.y0 < b.y1 && a.y1 > b.y0;
}

/** Screen rectangles taken by labels, bucketed in a uniform grid of CELL px. */
export class LabelGrid {
  static readonly CELL = 48;
  private cells = new Map<number, LabelRect[]>();
  /** Every rectangle taken, in the order taken. */
  readonly taken: LabelRect[] = [];

  private static key(gx: number, gy: number): number {
    // Screen cells: |gx|, |gy| stay far below 2^20 for any real viewport (and labels are culled
    // to the viewport first), so the packing is collision-free there; a collision elsewhere
    // would only cost an extra rectangle test, never a wrong answer.
    return (gx + 0x80000) * 0x100000 + (gy + 0x80000);
  }

  /** Whether `r` overlaps no rectangle taken so far. */
  free(r: LabelRect): boolean {
    const c = LabelGrid.CELL;
    const gx1 = Math.floor(r.x1 / c);
    const gy1 = Math.floor(r.y1 / c);
    for (let gx = Math.floor(r.x0 / c); gx <= gx1; gx++) {
      for (let gy = Math.floor(r.y0 / c); gy <= gy1; gy++) {
        const list = this.cells.get(LabelGrid.key(gx, gy));
        if (!list) continue;
        for (const t of list) if (overlaps(r, t)) return false;
      }
    }
    return true;
  }

  private take(r: LabelRect): void {
    const c = LabelGrid.CELL;
    const rect = { x0: r.x0, y0: r.y0, x1: r.x1, y1: r.y1 };
    this.taken.push(rect);
    const gx1 = Math.floor(r.x1 / c);
    const gy1 = Math.floor(r.y1 / c);
    for (let gx = Math.floor(r.x0 / c); gx <= gx1; gx++) {
      for (let gy = Math.floor(r.y0 / c); gy <= gy1; gy++) {
        const key = LabelGrid.key(gx, gy);
        let list = this.cells.get(key);
        if (!list) this.cells.set(key, (list = []));
        list.push(rect);
      }
    }
  }

  /** Take `r` whatever it overlaps (the page's chrome over the canvas, `reserved`): no label is
   * placed over it after. A box that is not sane (`saneRect`) is ignored. */
  reserve(r: LabelRect): void {
    if (saneRect(r)) this.take(r);
  }

  /** Take `r` when it is a sane box and free; returns whether it was placed. A box with a
   * non-finite or inverted edge, or wider or taller than MAX_SPAN px (no label is), is refused. */
  place(r: LabelRect): boolean {
    if (!saneRect(r) || !this.free(r)) return false;
    this.take(r);
    return true;
  }
}

/** No label box is larger than this many px on a side (a bigger one is bad input). */
export const MAX_SPAN = 8192;

export function saneRect(r: LabelRect): boolean {
  const w = r.x1 - r.x0;
  const h = r.y1 - r.y0;
  return w > 0 && h > 0 && w <= MAX_SPAN && h <= MAX_SPAN && Number.isFinite(r.x0) && Number.isFinite(r.y0);
}

/** Whether a rectangle lies wholly inside a `width` × `height` viewport (edges may touch). */
export function insideViewport(r: LabelRect, width: number, height: number): boolean {
  return r.x0 >= 0 && r.y0 >= 0 && r.x1 <= width && r.y1 <= height;
}

/**
 * Where a node's label starts (its left edge, px), or null when it fits on neither side: to the
 * right of the node when its `w` px fit before the viewport's right edge, else to its left when
 * they fit after x = 0 (issue 29: labels of nodes by the right edge were cut off there).
 *
 * @param sx the node's centre on screen, px.
 * @param reach the node's radius on screen plus the gap before the label, px.
 * @param w the label's width, px.
 * @param width the viewport's width, px.
 */
export function labelSide(sx: number, reach: number, w: number, width: number): number | null {
  const right = sx + reach;
  if (right >= 0 && right + w <= width) return right;
  const left = sx - reach - w;
  if (left >= 0 && left + w <= width) return left;
  return null;
}

/**
 * A label box moved sideways into `[0, width]` when it sticks out of one side and is no wider
 * than the viewport (a cluster label centred on a hull by the edge stays whole and near it); else
 * the box as it is.
 */
export function clampIntoWidth(r: LabelRect, width: number): LabelRect {
  const w = r.x1 - r.x0;
  if (w > width) return r;
  if (r.x0 < 0) return { ...r, x0: 0, x1: w };
  if (r.x1 > width) return { ...r, x0: width - w, x1: width };
  return r;
}

/** Whether a rectangle shows at all in a `width` × `height` viewport. */
export function onViewport(r: LabelRect, width: number, height: number): boolean {
  return r.x1 > 0 && r.x0 < width && r.y1 > 0 && r.y0 < height;
}

/**
 * The labels to draw: candidates in priority order (`compareLabels`), each accepted when it is on
 * the viewport and overlaps no label accepted before it, until `limit` are accepted.
 *
 * @param candidates labels with their screen rectangles (px); not mutated.
 * @param viewport the canvas size in CSS px.
 * @param limit the most labels to accept (default: no limit).
 * @returns indices into `candidates` of the accepted labels, in the order they were placed.
 */
export function cullLabels(
  candidates: readonly LabelCandidate[],
  viewport: { width: number; height: number },
  limit = Infinity,
): number[] {
  const order = candidates.map((_, i) => i).sort((a, b) => compareLabels(candidates[a], candidates[b]) || a - b);
  const grid = new LabelGrid();
  const out: number[] = [];
  for (const i of order) {
    if (out.length >= limit) break;
    const c = candidates[i];
    if (!onViewport(c, viewport.width, viewport.height)) continue;
    if (grid.place(c)) out.push(i);
  }
  return out;
}
