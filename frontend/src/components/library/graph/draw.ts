// One frame of the graph: background, cluster hulls, links with arrows, propositions (circles),
// implications (diamonds), highlight, then cluster and node labels in screen space.
// Everything outside the viewport is skipped; tiny nodes are drawn as squares (cheaper than arcs).

import type { ZoomTransform } from 'd3-zoom';
import type { RenderSettings } from '../../../core/library/graph';
import { boundsOf, hullLabelAnchor, labelAlpha, paddedHull, shorten, withAlpha, type Bounds, type Point } from '../../../core/library/graphMath';
import { dragHullPoints, type DragScene } from '../../../core/library/dragScene';
import { clusterShown, orderHullSpots, type HullSpot } from '../../../core/library/folderLevels';
import { LabelGrid, clampIntoWidth, insideViewport, labelSide, type LabelRect } from '../../../core/library/labelCull';
import { PointCloud, pointCloudSupported } from './pointCloud';
import type { MathLabels } from './mathLabels';
import type { RenderCluster, RenderLink, RenderNode } from '../../../core/library/scene';

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
  sceneLayer: SceneLayer;
  /** Changes whenever node positions or the data change (the scene layer's cache key); a node
   * being dragged does not change it (see `drag`). */
  sceneVersion: string;
  /** The node being dragged, if any (dragScene.ts): the cached layer is drawn without it, its links
   * and its clusters' hulls, which are drawn over the layer each frame. */
  drag: DragScene | null;
  /** Typeset labels for nodes whose name holds TeX (mathLabels.ts); absent: all labels plain. */
  mathLabels?: MathLabels;
  /** Screen boxes (CSS px) of the page's chrome over the canvas (title, tools, hint): no label is
   * drawn under them. Absent: none. */
  reserved?: readonly LabelRect[];
}

export interface DrawStats {
  hullLabels: string[];
  /** The folder labels drawn, and the labels of files inside folders (issue 17 item 2). */
  folderLabels: string[];
  fileLabels: string[];
  /** Each folder label's screen box (CSS px) with the folder's full path (the tooltip). */
  folderBoxes: readonly (LabelRect & { path: string })[];
  labels: number;
  /** Nodes on screen, and how the scene was drawn: directly, or through the cached layer. */
  onScreen: number;
  mode: 'direct' | 'vector' | 'pixels';
  /** The screen boxes (CSS px) of every label drawn, cluster and node (none overlap). */
  labelBoxes: readonly LabelRect[];
  /** How many of the node labels were drawn typeset (mathLabels.ts). */
  mathLabels: number;
}

/** The canvas colours, from the theme's --graph-* custom properties (theme.css). */
export interface GraphColors {
  background: string;
  text: string;
  /** Behind labels, for legibility. */
  halo: string;
  implication: string;
  /** Links as "r, g, b" (the alpha varies). */
  link: [number, number, number];
  /** Around nodes when zoomed in. */
  outline: string;
  accent: string;
}

export const LIGHT_GRAPH_COLORS: GraphColors = {
  background: '#f7f8fa',
  text: '#222b36',
  halo: 'rgba(247, 248, 250, 0.92)',
  implication: '#5b6573',
  link: [88, 99, 115],
  outline: 'rgba(255, 255, 255, 0.95)',
  accent: '#2c5fd8',
};

/** The colours from computed style (`getComputedStyle(document.documentElement)`); a property that is
 * missing or malformed keeps the light theme's colour. */
export function graphColorsFromCss(style: Pick<CSSStyleDeclaration, 'getPropertyValue'>): GraphColors {
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  const parts = read('--graph-link', '')
    .split(',')
    .map((p) => Number.parseFloat(p));
  const link: [number, number, number] =
    parts.length === 3 && parts.every((p) => Number.isFinite(p)) ? [parts[0], parts[1], parts[2]] : LIGHT_GRAPH_COLORS.link;
  return {
    background: read('--graph-bg', LIGHT_GRAPH_COLORS.background),
    text: read('--graph-text', LIGHT_GRAPH_COLORS.text),
    halo: read('--graph-halo', LIGHT_GRAPH_COLORS.halo),
    implication: read('--graph-implication', LIGHT_GRAPH_COLORS.implication),
    link,
    outline: read('--graph-outline', LIGHT_GRAPH_COLORS.outline),
    accent: read('--graph-accent', LIGHT_GRAPH_COLORS.accent),
  };
}

let colors: GraphColors = LIGHT_GRAPH_COLORS;
/** Bumped on each colour change: a cached layer drawn in other colours is not reused. */
let colorsVersion = 0;

/** Sets the colours every later draw uses. */
export function setGraphColors(next: GraphColors): void {
  if (JSON.stringify(next) === JSON.stringify(colors)) return;
  colors = next;
  colorsVersion++;
}
/** Above this many nodes on screen the scene is drawn into a cached layer (see SceneLayer). */
const LAYER_MIN_NODES = 1000;
/** ...or when the graph has this many nodes at all. */
const LAYER_MIN_TOTAL = 4000;
/** ...and below this on-screen node radius (px), as pixels (see pointCloud.ts). */
const FAR_RADIUS = 4.5;
/** Subpaths per fill: Canvas 2D rasterizes big multi-shape paths super-linearly. */
const BATCH = 64;
/** Hulls per fill (see paintHulls). */
const HULL_BATCH = 32;
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

type HullCluster = RenderCluster & { box?: Bounds | null; coarse?: Point[] };

export function drawScene(ctx: CanvasRenderingContext2D, input: DrawInput): DrawStats {
  const { width, height, dpr, transform, settings } = input;
  const { k, x: tx, y: ty } = transform;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.globalAlpha = 1;
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, width, height);

  // The viewport in world units (with a margin so edges do not pop).
  const m = 40 / k;
  const vx0 = -tx / k - m;
  const vy0 = -ty / k - m;
  const vx1 = (width - tx) / k + m;
  const vy1 = (height - ty) / k + m;
  const visible = (x: number, y: number) => x >= vx0 && x <= vx1 && y >= vy0 && y <= vy1;
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * tx, dpr * ty);

  // -- cluster hulls (geometry and label spots) -------------------------------
  // Folders first (folderLevels.ts): a file inside a folder shows only once large on screen.
  const spots: HullSpot[] = [];
  const hulls = settings.hulls ? collectHulls(input.clusters as HullCluster[], settings.nodeSize, { x0: vx0, y0: vy0, x1: vx1, y1: vy1 }, k, { width, height }, input.drag) : [];
  for (const c of hulls) {
    if (Math.max(c.box!.x1 - c.box!.x0, c.box!.y1 - c.box!.y0) * k >= 56) {
      const anchor = hullLabelAnchor(c.hull!);
      if (anchor) {
        const below = c.box!.y1; // where its label goes when the spot above is taken
        spots.push({ label: c.label, color: c.color, x: anchor[0], y: anchor[1], level: c.level ?? 'top', size: c.nodes.length, path: c.path, below });
      }
    }
  }
  const hullSpots = orderHullSpots(spots);

  // -- hulls, links, arrows and nodes ---------------------------------------------
  const r = settings.nodeSize * (k < 1 ? 1 / Math.sqrt(k) : 1); // see GraphRenderer.radius
  const rr = Math.max(r, 1 / k); // never smaller than a pixel
  let visibleProps = 0;
  for (const group of input.groups.values()) {
    for (const n of group) if (visible(n.x, n.y)) visibleProps++;
  }
  let onScreen = visibleProps;
  for (const n of input.implications) if (visible(n.x, n.y)) onScreen++;
  let mode: DrawStats['mode'] = 'direct';
  // Culling every link and node each frame costs time in proportion to the whole graph too.
  const total = input.implications.length + input.labelOrder.length;
  if (onScreen > LAYER_MIN_NODES || total > LAYER_MIN_TOTAL) {
    // Many nodes on screen: draw them once into a cached layer, reused while only panning; far
    // out (nodes a few pixels wide) as pixels rather than vector shapes.
    mode = rr * k < FAR_RADIUS && pointCloudSupported() ? 'pixels' : 'vector';
    // A dragged node, its links and its clusters' hulls are not in the layer: drawn over it here
    // (its hulls between the hull and point layers when drawn as pixels, so they stay underneath).
    // (Built in a function of its own: closures here would move drawScene's locals to the heap,
    // which cost ~2 ms per frame at 50k in the node loops above.)
    const overlay = input.drag ? dragOverlay(ctx, input, input.drag, hulls, { k, r, rr, vx0, vy0, vx1, vy1 }, mode) : null;
    input.sceneLayer.draw(ctx, input, { k, tx, ty, r, rr, nodeRadius: rr * k * dpr, mode }, overlay);
  } else {
    paintHulls(ctx, hulls, k);
    drawNear(ctx, input, { k, r, rr, visible, vx0, vy0, vx1, vy1 });
  }
  if (input.highlight.links.length) {
    strokeLinks(ctx, input, input.highlight.links, { k, r, vx0, vy0, vx1, vy1, visible }, rgba(colors.accent, 0.8), rgba(colors.accent, 0.9), 2 / k);
  }
  const shownProps = visibleProps;

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
  ring(input.selectedId, colors.accent, 2.5);
  if (input.hoverId !== input.selectedId) ring(input.hoverId, rgba(colors.accent, 0.6), 2);

  // -- labels (screen space) --------------------------------------------------
  // One grid of placed label boxes (labelCull.ts): a label is drawn only when its box is free, so
  // no two drawn labels overlap at any zoom. Order: the selected and hovered nodes' labels, the
  // cluster (session / region) labels, the highlighted neighbours, then nodes by degree
  // (`labelOrder`). A node label with TeX is drawn typeset (mathLabels.ts) once its bitmap is
  // ready, plain (`plainMath`: no raw `$`) until then; every other text is plain.
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const grid = new LabelGrid();
  for (const r of input.reserved ?? []) grid.reserve(r);
  const reservedBoxes = grid.taken.length;
  const hullLabels: string[] = [];
  const folderLabels: string[] = [];
  const fileLabels: string[] = [];
  const folderBoxes: (LabelRect & { path: string })[] = [];
  ctx.lineJoin = 'round';
  ctx.lineWidth = 3.5;
  ctx.strokeStyle = colors.halo;

  ctx.font = LABEL_FONT;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = colors.text;
  let drawn = 0;
  let typeset = 0;
  const drawLabel = (n: RenderNode): boolean => {
    const sx = n.x * k + tx;
    const sy = n.y * k + ty;
    if (!(sx >= -200 && sx <= width + 20 && sy >= -20 && sy <= height + 20)) return false;
    const max = n.kind === 'implication' ? 90 : 36;
    // right of the node, or left of it by the right edge; never cut off by a side (labelSide)
    const reach = Math.max(input.radius(n), 1 / k) * k + 5;
    // A label with TeX: its typeset bitmap once ready (mathLabels.ts), plain text until then.
    // (a third more room: a formula reads shorter than its plain spelling, `x²` for `x^2`)
    const math = n.tex && input.mathLabels ? input.mathLabels.get(n.tex, Math.round(max * 1.33), colors.text, colors.halo, dpr) : null;
    if (math) {
      const x0 = labelSide(sx, reach, math.width, width);
      const y0 = sy - math.height / 2;
      if (x0 === null || y0 < 0 || y0 + math.height > height) return false;
      if (!grid.place({ x0, y0, x1: x0 + math.width, y1: y0 + math.height })) return false;
      const px = Math.round((x0 - math.pad) * dpr) / dpr;
      const py = Math.round((y0 - math.pad) * dpr) / dpr;
      ctx.drawImage(math.canvas, px, py, math.canvas.width / dpr, math.canvas.height / dpr);
      drawn++;
      typeset++;
      return true;
    }
    const text = shorten(n.name, max);
    if (n.labelWidth < 0) n.labelWidth = ctx.measureText(text).width;
    const x0 = labelSide(sx, reach, n.labelWidth, width);
    if (x0 === null || sy - 7 < 0 || sy + 7 > height) return false;
    if (!grid.place({ x0, y0: sy - 7, x1: x0 + n.labelWidth, y1: sy + 7 })) return false;
    if (n.tex) input.mathLabels?.want(n.tex, Math.round(max * 1.33), colors.text, colors.halo, dpr);
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
      drawLabel(n);
    }
  }
  if (hullSpots.length) {
    ctx.font = HULL_FONT;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    for (const spot of hullSpots) {
      const text = shorten(spot.label, 44);
      const sx = spot.x * k + tx;
      let sy = spot.y * k + ty - 5;
      const w = ctx.measureText(text).width;
      // whole on the canvas: a hull by a side keeps its label, moved in (clampIntoWidth)
      const inward = (b: LabelRect) => (sx >= 0 && sx <= width ? clampIntoWidth(b, width) : b);
      let box = inward({ x0: sx - w / 2 - 2, y0: sy - 15, x1: sx + w / 2 + 2, y1: sy });
      if (!insideViewport(box, width, height) || !grid.free(box)) {
        // taken (a folder of one file: its folder's label; another label; the chrome over a hull
        // at the top after a fit): under the hull instead
        if (spot.below === undefined) continue;
        sy = spot.below * k + ty + 20;
        box = { x0: box.x0, y0: sy - 15, x1: box.x1, y1: sy };
        if (!insideViewport(box, width, height) || !grid.free(box)) continue;
      }
      if (!grid.place(box)) continue;
      const cx = (box.x0 + box.x1) / 2;
      ctx.strokeText(text, cx, sy);
      ctx.fillStyle = spot.color;
      ctx.fillText(text, cx, sy);
      hullLabels.push(spot.label);
      if (spot.level === 'folder') {
        folderLabels.push(spot.label);
        folderBoxes.push({ ...box, path: spot.path ?? spot.label });
      } else if (spot.level === 'file') fileLabels.push(spot.label);
    }
    ctx.font = LABEL_FONT;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = colors.text;
  }
  for (const id of input.highlight.nodes) {
    const n = input.byId.get(id);
    if (n && n.kind === 'proposition' && !forced.has(id)) {
      forced.add(id);
      drawLabel(n);
    }
  }
  // Labels fade in with zoom; with few propositions on screen there is room for them sooner.
  const alpha = settings.labels ? labelAlpha(k * densityBoost(shownProps), settings.labelZoom) : 0;
  if (alpha > 0.02) {
    ctx.globalAlpha = alpha;
    let scanned = 0;
    for (const n of input.labelOrder) {
      if (drawn >= MAX_LABELS || ++scanned > MAX_LABEL_SCAN) break;
      if (forced.has(n.id) || !visible(n.x, n.y)) continue;
      drawLabel(n);
    }
    ctx.globalAlpha = 1;
  }
  input.mathLabels?.endFrame();
  const labelBoxes = reservedBoxes ? grid.taken.slice(reservedBoxes) : grid.taken;
  return { hullLabels, folderLabels, fileLabels, folderBoxes, labels: drawn, onScreen, mode, labelBoxes, mathLabels: typeset };
}

/** How much sooner labels may show when few propositions are on screen (1 from 150 on, up to 2.5). */
export function densityBoost(visibleProps: number): number {
  if (visibleProps <= 0) return 1;
  return Math.min(2.5, Math.max(1, Math.sqrt(150 / visibleProps)));
}

interface LayerView {
  k: number;
  tx: number;
  ty: number;
  r: number;
  rr: number;
  /** Node radius in device pixels. */
  nodeRadius: number;
  mode: 'pixels' | 'vector';
}

interface View {
  k: number;
  r: number;
  vx0: number;
  vy0: number;
  vx1: number;
  vy1: number;
  visible: (x: number, y: number) => boolean;
}

/** Links (with arrows once nodes are big enough to carry them), in batches. */
function strokeLinks(ctx: CanvasRenderingContext2D, input: DrawInput, links: readonly RenderLink[], v: View, color: string, fill: string, lineWidth: number): void {
  const { k, r, vx0, vy0, vx1, vy1 } = v;
  const arrows = k * r >= 3.5;
  const arrowLen = r * 0.95;
  ctx.strokeStyle = color;
  ctx.lineWidth = lineWidth;
  ctx.beginPath();
  let count = 0;
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
    if (++count % (BATCH * 4) === 0) {
      ctx.stroke();
      ctx.beginPath();
    }
  }
  ctx.stroke();
  if (!arrows) return;
  ctx.fillStyle = fill;
  ctx.beginPath();
  count = 0;
  for (const l of links) {
    const s = l.source;
    const t = l.target;
    if (!v.visible(t.x, t.y)) continue;
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
    if (++count % BATCH === 0) {
      ctx.fill();
      ctx.beginPath();
    }
  }
  ctx.fill();
}

/** What is drawn over the cached layer while `drag` is on: its clusters' hulls, then the node and
 * its links. */
function dragOverlay(
  ctx: CanvasRenderingContext2D,
  input: DrawInput,
  drag: DragScene,
  hulls: readonly HullCluster[],
  v: Omit<View, 'visible'> & { rr: number },
  mode: DrawStats['mode'],
): { hulls: () => void; items: () => void } {
  const visible = (x: number, y: number) => x >= v.vx0 && x <= v.vx1 && y >= v.vy0 && y <= v.vy1;
  return {
    hulls: () =>
      paintHulls(
        ctx,
        hulls.filter((c) => drag.clusters.has(c)),
        v.k,
      ),
    items: () => drawNear(ctx, dragInput(input, drag), { ...v, visible }, mode === 'pixels' ? 0.7 : 1),
  };
}

/** The dragged node and its links as the whole scene (for drawNear over the cached layer). */
function dragInput(input: DrawInput, drag: DragScene): DrawInput {
  const node = drag.node;
  const isImplication = node.kind === 'implication';
  return { ...input, links: drag.links, groups: isImplication ? new Map() : new Map([[node.color, [node]]]), implications: isImplication ? [node] : [] };
}

/** Links and nodes as vector shapes (the near level of detail); `linkShare` scales the links'
 * opacity (0.7 matches the pixel layer's links). */
function drawNear(ctx: CanvasRenderingContext2D, input: DrawInput, v: View & { rr: number }, linkShare = 1): void {
  const { k, rr, visible } = v;
  const { settings } = input;
  if (settings.linkOpacity > 0) {
    const a = settings.linkOpacity * linkShare;
    strokeLinks(ctx, input, input.links, v, `rgba(${colors.link.join(', ')}, ${a})`, `rgba(${colors.link.join(', ')}, ${Math.min(1, a + 0.25)})`, 1 / k);
  }
  const asSquares = rr * k < 1.8;
  const outline = rr * k >= 3;
  const flush = (fill: string, stroke: string | null, width: number) => {
    ctx.fillStyle = fill;
    ctx.fill();
    if (stroke) {
      ctx.strokeStyle = stroke;
      ctx.lineWidth = width;
      ctx.stroke();
    }
    ctx.beginPath();
  };
  for (const [color, group] of input.groups) {
    ctx.beginPath();
    let count = 0;
    for (const n of group) {
      if (!visible(n.x, n.y)) continue;
      if (asSquares) ctx.rect(n.x - rr, n.y - rr, rr * 2, rr * 2);
      else {
        ctx.moveTo(n.x + rr, n.y);
        ctx.arc(n.x, n.y, rr, 0, TAU);
      }
      if (++count % BATCH === 0) flush(color, outline ? colors.outline : null, 1.4 / k);
    }
    flush(color, outline ? colors.outline : null, 1.4 / k);
  }
  const d = Math.max(v.r * 0.8, 1 / k);
  ctx.beginPath();
  let count = 0;
  for (const n of input.implications) {
    if (!visible(n.x, n.y)) continue;
    ctx.moveTo(n.x, n.y - d);
    ctx.lineTo(n.x + d, n.y);
    ctx.lineTo(n.x, n.y + d);
    ctx.lineTo(n.x - d, n.y);
    ctx.closePath();
    if (++count % BATCH === 0) flush(colors.implication, outline ? colors.outline : null, 1 / k);
  }
  flush(colors.implication, outline ? colors.outline : null, 1 / k);
}

/** How far a cluster's hull reaches beyond its nodes' centres, world units. */
export function hullPad(nodeSize: number): number {
  return nodeSize * 2.4 + 8;
}

/** Hulls (recomputed when their nodes moved) of the clusters that reach into `area` and show at
 * zoom `k` (`clusterShown`: files inside folders only when large enough on screen). */
function collectHulls(
  clusters: HullCluster[],
  nodeSize: number,
  area: Bounds,
  k: number,
  viewport: { width: number; height: number },
  drag: DragScene | null,
  skipDragged = false,
): HullCluster[] {
  const pad = hullPad(nodeSize);
  const out: HullCluster[] = [];
  for (const c of clusters) {
    const dragged = !!drag && drag.clusters.has(c);
    if (dragged && skipDragged) continue;
    if (c.hullDirty || !c.hull) {
      // A cluster holding the dragged node: its other members' corners plus the node (cheap).
      c.hull = paddedHull(
        dragged ? dragHullPoints(drag!, c) : c.nodes.map((n): Point => [n.x, n.y]),
        pad,
        c.nodes.length > 2000 ? 8 : 14,
      );
      const step = Math.ceil(c.hull.length / 16);
      c.coarse = c.hull.filter((_, i) => i % step === 0);
      c.box = boundsOf(c.hull.map(([x, y]) => ({ x, y })));
      c.hullDirty = false;
    }
    const box = c.box;
    if (!box || c.hull.length < 3) continue;
    if (box.x1 < area.x0 || box.x0 > area.x1 || box.y1 < area.y0 || box.y0 > area.y1) continue;
    if (!clusterShown(c.level ?? 'top', Math.max(box.x1 - box.x0, box.y1 - box.y0), k, viewport)) continue;
    out.push(c);
  }
  return out;
}

/** Translucent hulls, one path per colour and up to HULL_BATCH hulls (a few fills instead of one per
 * session, but never thousands of subpaths in one path: Canvas 2D rasterizes those super-linearly,
 * seconds for 10,000 sessions of one node); small ones with fewer corners. */
function paintHulls(ctx: CanvasRenderingContext2D, hulls: readonly HullCluster[], k: number): void {
  const byColor = new Map<string, HullCluster[]>();
  for (const c of hulls) {
    let list = byColor.get(c.color);
    if (!list) byColor.set(c.color, (list = []));
    list.push(c);
  }
  ctx.lineJoin = 'round';
  ctx.lineWidth = 1.25 / k;
  for (const [color, list] of byColor) {
    ctx.fillStyle = rgba(color, 0.075);
    ctx.strokeStyle = rgba(color, 0.34);
    for (let start = 0; start < list.length; start += HULL_BATCH) {
      ctx.beginPath();
      for (const c of list.slice(start, start + HULL_BATCH)) {
        const small = (c.box!.x1 - c.box!.x0) * k < 150;
        const hull = small && c.coarse && c.coarse.length >= 3 ? c.coarse : c.hull!;
        ctx.moveTo(hull[0][0], hull[0][1]);
        for (let i = 1; i < hull.length; i++) ctx.lineTo(hull[i][0], hull[i][1]);
        ctx.closePath();
      }
      ctx.fill();
      ctx.stroke();
    }
  }
}

/** Share of the viewport rendered beyond each edge, so a pan reuses the layer. */
const FAR_MARGIN = 0.35;
const FAR_MAX_PX = 4096;

/**
 * The scene (hulls, links, nodes) of a crowded view as cached layers covering the viewport plus a
 * margin at the zoom they were rendered for: vector shapes, or far out pixels (links and nodes
 * written into a pixel buffer over a hull layer). While only the camera's translation changes
 * they are blitted where they belong (a pan costs one or two drawImage calls whatever the graph's
 * size). During a zoom gesture they are blitted scaled (briefly soft) and rendered again once the
 * zoom rests; a moved node, new data or new settings render them again at once. Highlights, rings
 * and labels are drawn over them every frame.
 */
export class SceneLayer {
  private readonly points = new PointCloud();
  private readonly requestRedraw: () => void;
  private layerCanvas: HTMLCanvasElement | null = null;
  private pointCanvas: HTMLCanvasElement | null = null;
  private sceneKey = '';
  private renderedK = 0;
  private region: Bounds | null = null;
  private renderedAt = 0;
  private lastK = 0;
  private lastZoomAt = 0;
  private restTimer = 0;

  /** `requestRedraw` is called when the zoom comes to rest, to render the layers sharp again. */
  constructor(requestRedraw: () => void) {
    this.requestRedraw = requestRedraw;
  }

  /** `overlay` (a node being dragged): `hulls` painted over the hull layer, `items` over the
   * scene, both in world coordinates. */
  draw(ctx: CanvasRenderingContext2D, input: DrawInput, v: LayerView, overlay: { hulls: () => void; items: () => void } | null = null): void {
    const { width, height, dpr, settings } = input;
    const { k, tx, ty } = v;
    const now = performance.now();
    if (k !== this.lastK) {
      this.lastK = k;
      this.lastZoomAt = now;
    }
    const view = { x0: -tx / k, y0: -ty / k, x1: (width - tx) / k, y1: (height - ty) / k };
    const sceneKey = `${v.mode}|${dpr}|${settings.hulls}|${settings.linkOpacity}|${settings.nodeSize}|${input.sceneVersion}|${colorsVersion}`;
    const region = this.region;
    const covered = !!region && view.x0 >= region.x0 && view.y0 >= region.y0 && view.x1 <= region.x1 && view.y1 <= region.y1;
    const sameScene = sceneKey === this.sceneKey && !!this.layerCanvas;
    const ratio = k / (this.renderedK || k);
    const zooming = now - this.lastZoomAt < 150;
    const reuse = sameScene && covered && (k === this.renderedK || (zooming && ratio > 0.55 && ratio < 1.8));
    if (!reuse) {
      // While the scene keeps changing (a running simulation, a drag) a margin would be thrown
      // away with the next frame: render just the viewport then.
      const moving = sceneKey !== this.sceneKey && this.sceneKey !== '' && now - this.renderedAt < 200;
      const mx = moving ? 0 : (view.x1 - view.x0) * FAR_MARGIN;
      const my = moving ? 0 : (view.y1 - view.y0) * FAR_MARGIN;
      const maxWorld = FAR_MAX_PX / (k * dpr);
      const next = {
        x0: view.x0 - mx,
        y0: view.y0 - my,
        x1: Math.min(view.x1 + mx, view.x0 - mx + maxWorld),
        y1: Math.min(view.y1 + my, view.y0 - my + maxWorld),
      };
      this.render(input, next, v);
      this.sceneKey = sceneKey;
      this.renderedK = k;
      this.region = next;
      this.renderedAt = now;
    } else if (k !== this.renderedK) {
      // Scaled for now: render sharp once the wheel rests.
      window.clearTimeout(this.restTimer);
      this.restTimer = window.setTimeout(() => this.requestRedraw(), 160);
    }
    const r = this.region!;
    const dx = (r.x0 * k + tx) * dpr;
    const dy = (r.y0 * k + ty) * dpr;
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    const scaled = k !== this.renderedK;
    const blit = (c: HTMLCanvasElement) => {
      if (scaled) ctx.drawImage(c, dx, dy, (r.x1 - r.x0) * k * dpr, (r.y1 - r.y0) * k * dpr);
      else ctx.drawImage(c, Math.round(dx), Math.round(dy));
    };
    if (this.layerCanvas) blit(this.layerCanvas);
    if (overlay) {
      ctx.restore();
      overlay.hulls();
      ctx.save();
      ctx.setTransform(1, 0, 0, 1, 0, 0);
    }
    if (v.mode === 'pixels' && this.pointCanvas) blit(this.pointCanvas);
    ctx.restore();
    overlay?.items();
  }

  dispose(): void {
    window.clearTimeout(this.restTimer);
  }

  private render(input: DrawInput, region: Bounds, v: LayerView): void {
    const { dpr, settings } = input;
    const s = v.k * dpr;
    const W = Math.max(1, Math.round((region.x1 - region.x0) * s));
    const H = Math.max(1, Math.round((region.y1 - region.y0) * s));
    this.layerCanvas ??= document.createElement('canvas');
    if (this.layerCanvas.width !== W || this.layerCanvas.height !== H) {
      this.layerCanvas.width = W;
      this.layerCanvas.height = H;
    }
    const g = this.layerCanvas.getContext('2d');
    if (!g) return;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, W, H);
    g.setTransform(s, 0, 0, s, -region.x0 * s, -region.y0 * s);
    if (settings.hulls) paintHulls(g, collectHulls(input.clusters as HullCluster[], settings.nodeSize, region, v.k, input, input.drag, true), v.k);
    // While a node is dragged the layer holds everything but it (drawn over the layer each frame).
    const drag = input.drag;
    const scene = drag ? { ...input, links: drag.staticLinks, groups: drag.staticGroups, implications: drag.staticImplications } : input;
    if (v.mode === 'vector') {
      const inside = (x: number, y: number) => x >= region.x0 && x <= region.x1 && y >= region.y0 && y <= region.y1;
      drawNear(g, scene, { k: v.k, r: v.r, rr: v.rr, vx0: region.x0, vy0: region.y0, vx1: region.x1, vy1: region.y1, visible: inside });
      return;
    }
    this.pointCanvas = this.points.render({
      width: W,
      height: H,
      scale: s,
      ox: -region.x0 * s,
      oy: -region.y0 * s,
      links: scene.links,
      linkRgb: colors.link,
      linkAlpha: settings.linkOpacity * 0.7,
      groups: scene.groups,
      implications: scene.implications,
      implicationColor: colors.implication,
      nodeRadius: v.nodeRadius,
    });
  }
}
