// One frame of the graph: background, cluster hulls, links with arrows, propositions (circles),
// implications (diamonds), highlight, then cluster and node labels in screen space.
// Everything outside the viewport is skipped; tiny nodes are drawn as squares (cheaper than arcs).

import type { ZoomTransform } from 'd3-zoom';
import type { RenderSettings } from '../core/graph';
import { boundsOf, hullLabelAnchor, labelAlpha, paddedHull, shorten, withAlpha, type Bounds, type Point } from '../core/graphMath';
import type { RenderCluster, RenderLink, RenderNode } from './renderer';

export interface DrawInput {
  width: number;
  height: number;
  dpr: number;
  transform: ZoomTransform;
  settings: RenderSettings;
  links: readonly RenderLink[];
  groups: ReadonlyMap<string, readonly RenderNode[]>;
  implications: readonly RenderNode[];
  labelOrder: readonly RenderNode[];
  clusters: readonly RenderCluster[];
  hoverId: string | null;
  selectedId: string | null;
  highlight: { nodes: ReadonlySet<string>; links: readonly RenderLink[] };
  byId: ReadonlyMap<string, RenderNode>;
  radius: (n: RenderNode) => number;
}

export interface DrawStats {
  hullLabels: string[];
  labels: number;
}

export const BACKGROUND = '#f7f8fa';
const LINK_RGB = '88, 99, 115';
const IMPLICATION_FILL = '#5b6573';
const ACCENT = '#2c5fd8';
const TEXT = '#222b36';
const HALO = 'rgba(247, 248, 250, 0.92)';
const FONT_STACK = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
const LABEL_FONT = `12px ${FONT_STACK}`;
const HULL_FONT = `600 12.5px ${FONT_STACK}`;
const MAX_LABELS = 300;
const MAX_LABEL_SCAN = 40_000;
const TAU = Math.PI * 2;

const alphaCache = new Map<string, string>();
function rgba(hex: string, alpha: number): string {
  const key = `${hex}/${alpha}`;
  let v = alphaCache.get(key);
  if (!v) {
    v = withAlpha(hex, alpha);
    alphaCache.set(key, v);
  }
  return v;
}

/** Screen rectangles taken by labels, bucketed in a coarse grid. */
class LabelGrid {
  private cells = new Map<number, [number, number, number, number][]>();
  private static readonly CELL = 48;

  private keys(x0: number, y0: number, x1: number, y1: number): number[] {
    const c = LabelGrid.CELL;
    const out: number[] = [];
    for (let gx = Math.floor(x0 / c); gx <= Math.floor(x1 / c); gx++) {
      for (let gy = Math.floor(y0 / c); gy <= Math.floor(y1 / c); gy++) out.push(gx * 100_003 + gy);
    }
    return out;
  }

  free(x0: number, y0: number, x1: number, y1: number): boolean {
    for (const key of this.keys(x0, y0, x1, y1)) {
      for (const r of this.cells.get(key) ?? []) {
        if (x0 < r[2] && x1 > r[0] && y0 < r[3] && y1 > r[1]) return false;
      }
    }
    return true;
  }

  take(x0: number, y0: number, x1: number, y1: number): void {
    const rect: [number, number, number, number] = [x0, y0, x1, y1];
    for (const key of this.keys(x0, y0, x1, y1)) {
      let list = this.cells.get(key);
      if (!list) this.cells.set(key, (list = []));
      list.push(rect);
    }
  }
}

type HullCluster = RenderCluster & { box?: Bounds | null };

export function drawScene(ctx: CanvasRenderingContext2D, input: DrawInput): DrawStats {
  const { width, height, dpr, transform, settings } = input;
  const { k, x: tx, y: ty } = transform;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.globalAlpha = 1;
  ctx.fillStyle = BACKGROUND;
  ctx.fillRect(0, 0, width, height);

  // The viewport in world units (with a margin so edges do not pop).
  const m = 40 / k;
  const vx0 = -tx / k - m;
  const vy0 = -ty / k - m;
  const vx1 = (width - tx) / k + m;
  const vy1 = (height - ty) / k + m;
  const visible = (x: number, y: number) => x >= vx0 && x <= vx1 && y >= vy0 && y <= vy1;
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * tx, dpr * ty);

  // -- cluster hulls --------------------------------------------------------
  const hullSpots: { label: string; color: string; x: number; y: number }[] = [];
  if (settings.hulls) {
    const pad = settings.nodeSize * 2.4 + 8;
    ctx.lineJoin = 'round';
    ctx.lineWidth = 1.25 / k;
    for (const c of input.clusters as HullCluster[]) {
      if (c.hullDirty || !c.hull) {
        c.hull = paddedHull(
          c.nodes.map((n): Point => [n.x, n.y]),
          pad,
          c.nodes.length > 2000 ? 8 : 14,
        );
        c.box = boundsOf(c.hull.map(([x, y]) => ({ x, y })));
        c.hullDirty = false;
      }
      const box = c.box;
      const hull = c.hull;
      if (!box || hull.length < 3) continue;
      if (box.x1 < vx0 || box.x0 > vx1 || box.y1 < vy0 || box.y0 > vy1) continue;
      ctx.beginPath();
      ctx.moveTo(hull[0][0], hull[0][1]);
      for (let i = 1; i < hull.length; i++) ctx.lineTo(hull[i][0], hull[i][1]);
      ctx.closePath();
      ctx.fillStyle = rgba(c.color, 0.075);
      ctx.fill();
      ctx.strokeStyle = rgba(c.color, 0.34);
      ctx.stroke();
      if ((box.x1 - box.x0) * k >= 56) {
        const anchor = hullLabelAnchor(hull);
        if (anchor) hullSpots.push({ label: c.label, color: c.color, x: anchor[0], y: anchor[1] });
      }
    }
  }

  // -- links and arrows -----------------------------------------------------
  const r = settings.nodeSize;
  const arrows = k * r >= 3.5;
  const arrowLen = r * 0.95;
  const strokeLinks = (links: readonly RenderLink[], color: string, fill: string, lineWidth: number) => {
    ctx.strokeStyle = color;
    ctx.lineWidth = lineWidth;
    ctx.beginPath();
    for (const l of links) {
      const s = l.source;
      const t = l.target;
      if ((s.x < vx0 && t.x < vx0) || (s.x > vx1 && t.x > vx1) || (s.y < vy0 && t.y < vy0) || (s.y > vy1 && t.y > vy1)) continue;
      ctx.moveTo(s.x, s.y);
      if (arrows) {
        const dx = t.x - s.x;
        const dy = t.y - s.y;
        const len = Math.hypot(dx, dy) || 1;
        const back = input.radius(t) + 1.5 / k + arrowLen * 0.7;
        ctx.lineTo(t.x - (dx / len) * back, t.y - (dy / len) * back);
      } else ctx.lineTo(t.x, t.y);
    }
    ctx.stroke();
    if (!arrows) return;
    ctx.fillStyle = fill;
    ctx.beginPath();
    for (const l of links) {
      const s = l.source;
      const t = l.target;
      if (!visible(t.x, t.y)) continue;
      const dx = t.x - s.x;
      const dy = t.y - s.y;
      const len = Math.hypot(dx, dy) || 1;
      const ux = dx / len;
      const uy = dy / len;
      const tipBack = input.radius(t) + 1.5 / k;
      const tipX = t.x - ux * tipBack;
      const tipY = t.y - uy * tipBack;
      const baseX = tipX - ux * arrowLen;
      const baseY = tipY - uy * arrowLen;
      const w = arrowLen * 0.48;
      ctx.moveTo(tipX, tipY);
      ctx.lineTo(baseX - uy * w, baseY + ux * w);
      ctx.lineTo(baseX + uy * w, baseY - ux * w);
      ctx.closePath();
    }
    ctx.fill();
  };
  if (settings.linkOpacity > 0) {
    const a = settings.linkOpacity;
    strokeLinks(input.links, `rgba(${LINK_RGB}, ${a})`, `rgba(${LINK_RGB}, ${Math.min(1, a + 0.25)})`, 1 / k);
  }
  if (input.highlight.links.length) strokeLinks(input.highlight.links, rgba(ACCENT, 0.8), rgba(ACCENT, 0.9), 2 / k);

  // -- nodes ----------------------------------------------------------------
  const rr = Math.max(r, 1 / k); // never smaller than a pixel
  const asSquares = rr * k < 1.8;
  const outline = rr * k >= 3;
  for (const [color, group] of input.groups) {
    ctx.beginPath();
    for (const n of group) {
      if (!visible(n.x, n.y)) continue;
      if (asSquares) ctx.rect(n.x - rr, n.y - rr, rr * 2, rr * 2);
      else {
        ctx.moveTo(n.x + rr, n.y);
        ctx.arc(n.x, n.y, rr, 0, TAU);
      }
    }
    ctx.fillStyle = color;
    ctx.fill();
    if (outline) {
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.95)';
      ctx.lineWidth = 1.4 / k;
      ctx.stroke();
    }
  }
  const d = Math.max(r * 0.72, 1 / k);
  ctx.beginPath();
  for (const n of input.implications) {
    if (!visible(n.x, n.y)) continue;
    ctx.moveTo(n.x, n.y - d);
    ctx.lineTo(n.x + d, n.y);
    ctx.lineTo(n.x, n.y + d);
    ctx.lineTo(n.x - d, n.y);
    ctx.closePath();
  }
  ctx.fillStyle = IMPLICATION_FILL;
  ctx.fill();
  if (outline) {
    ctx.strokeStyle = 'rgba(255, 255, 255, 0.9)';
    ctx.lineWidth = 1 / k;
    ctx.stroke();
  }

  // -- hover and selection rings ---------------------------------------------
  const ring = (id: string | null, color: string, width: number) => {
    const n = id ? input.byId.get(id) : undefined;
    if (!n) return;
    ctx.beginPath();
    ctx.arc(n.x, n.y, Math.max(input.radius(n), 1 / k) + 3 / k, 0, TAU);
    ctx.strokeStyle = color;
    ctx.lineWidth = width / k;
    ctx.stroke();
  };
  ring(input.selectedId, ACCENT, 2.5);
  if (input.hoverId !== input.selectedId) ring(input.hoverId, rgba(ACCENT, 0.6), 2);

  // -- labels (screen space) --------------------------------------------------
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const grid = new LabelGrid();
  const hullLabels: string[] = [];
  ctx.lineJoin = 'round';
  ctx.lineWidth = 3.5;
  ctx.strokeStyle = HALO;
  if (hullSpots.length) {
    ctx.font = HULL_FONT;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    for (const spot of hullSpots) {
      const text = shorten(spot.label, 44);
      const sx = spot.x * k + tx;
      const sy = spot.y * k + ty - 5;
      const w = ctx.measureText(text).width;
      const x0 = sx - w / 2 - 2;
      const x1 = sx + w / 2 + 2;
      const y0 = sy - 15;
      if (x1 < 0 || x0 > width || sy < 0 || y0 > height || !grid.free(x0, y0, x1, sy)) continue;
      grid.take(x0, y0, x1, sy);
      ctx.strokeText(text, sx, sy);
      ctx.fillStyle = spot.color;
      ctx.fillText(text, sx, sy);
      hullLabels.push(spot.label);
    }
  }

  ctx.font = LABEL_FONT;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = TEXT;
  let drawn = 0;
  const drawLabel = (n: RenderNode, force: boolean): boolean => {
    const sx = n.x * k + tx;
    const sy = n.y * k + ty;
    if (sx < -200 || sx > width + 20 || sy < -20 || sy > height + 20) return false;
    const text = shorten(n.name, n.kind === 'implication' ? 90 : 36);
    if (n.labelWidth < 0) n.labelWidth = ctx.measureText(text).width;
    const x0 = sx + Math.max(input.radius(n), 1 / k) * k + 5;
    const y0 = sy - 8;
    const x1 = x0 + n.labelWidth;
    const y1 = sy + 8;
    if (!force && !grid.free(x0, y0, x1, y1)) return false;
    grid.take(x0, y0, x1, y1);
    ctx.strokeText(text, x0, sy);
    ctx.fillText(text, x0, sy);
    drawn++;
    return true;
  };
  const forced = new Set<string>();
  for (const id of [input.selectedId, input.hoverId]) {
    const n = id ? input.byId.get(id) : undefined;
    if (n && !forced.has(n.id)) {
      forced.add(n.id);
      drawLabel(n, true);
    }
  }
  for (const id of input.highlight.nodes) {
    const n = input.byId.get(id);
    if (n && n.kind === 'proposition' && !forced.has(id)) {
      forced.add(id);
      drawLabel(n, false);
    }
  }
  const alpha = settings.labels ? labelAlpha(k, settings.labelZoom) : 0;
  if (alpha > 0.02) {
    ctx.globalAlpha = alpha;
    let scanned = 0;
    for (const n of input.labelOrder) {
      if (drawn >= MAX_LABELS || ++scanned > MAX_LABEL_SCAN) break;
      if (forced.has(n.id) || !visible(n.x, n.y)) continue;
      drawLabel(n, false);
    }
    ctx.globalAlpha = 1;
  }
  return { hullLabels, labels: drawn };
}
