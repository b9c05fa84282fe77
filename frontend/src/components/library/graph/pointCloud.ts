// The far level of detail: when thousands of nodes are on screen and each is only a pixel or
// two wide, paths and arcs cost the Canvas 2D rasterizer microseconds apiece (tens of ms per
// frame). Then links and nodes are written straight into a pixel buffer instead (aliased lines
// and tiny disc stamps, which is all a 2 px node can show), uploaded once with putImageData and
// composited over the hulls with one drawImage (see SceneLayer in draw.ts, which also keeps the
// result while only the camera's translation changes). No read-back from the visible canvas.

import type { RenderLink, RenderNode } from '../../../core/library/scene';

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([0x0a0b0c0d]).buffer)[0] === 0x0d;

/** True when this machine can use the pixel path (ImageData words are little-endian RGBA). */
export function pointCloudSupported(): boolean {
  return LITTLE_ENDIAN && typeof document !== 'undefined';
}

function parseHex(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** An opaque colour as an ImageData word (little-endian: 0xAABBGGRR). */
function word(rgb: [number, number, number], alpha = 255): number {
  return ((alpha << 24) | (rgb[2] << 16) | (rgb[1] << 8) | rgb[0]) >>> 0;
}

/** A small disc (or diamond) as pixel offsets with their coverage (255: fully inside). */
interface Stamp {
  offsets: Int32Array;
  coverage: Uint8Array;
}

const stamps = new Map<string, Stamp>();

/** The stamp for a radius in device pixels (cached per quarter pixel); edge pixels are antialiased. */
function stampFor(radius: number, diamond = false): Stamp {
  const r = Math.max(0.5, Math.round(radius * 4) / 4);
  const key = `${diamond ? 'd' : 'c'}${r}`;
  let stamp = stamps.get(key);
  if (stamp) return stamp;
  const reach = Math.ceil(r + 0.5);
  const offsets: number[] = [];
  const coverage: number[] = [];
  const SUB = 4;
  for (let dy = -reach; dy <= reach; dy++) {
    for (let dx = -reach; dx <= reach; dx++) {
      let inside = 0;
      for (let sy = 0; sy < SUB; sy++) {
        for (let sx = 0; sx < SUB; sx++) {
          const x = dx - 0.5 + (sx + 0.5) / SUB;
          const y = dy - 0.5 + (sy + 0.5) / SUB;
          if (diamond ? Math.abs(x) + Math.abs(y) <= r : x * x + y * y <= r * r) inside++;
        }
      }
      if (!inside) continue;
      offsets.push(dx, dy);
      coverage.push(Math.round((inside / (SUB * SUB)) * 255));
    }
  }
  stamp = { offsets: Int32Array.from(offsets), coverage: Uint8Array.from(coverage) };
  stamps.set(key, stamp);
  return stamp;
}

export interface PointCloudInput {
  /** Device pixels. */
  width: number;
  height: number;
  /** World → device pixels: X = x * scale + ox. */
  scale: number;
  ox: number;
  oy: number;
  links: readonly RenderLink[];
  linkRgb: [number, number, number];
  linkAlpha: number;
  groups: ReadonlyMap<string, readonly RenderNode[]>;
  implications: readonly RenderNode[];
  implicationColor: string;
  /** Node radius in device pixels. */
  nodeRadius: number;
}

export class PointCloud {
  private canvas: HTMLCanvasElement | null = null;
  private image: ImageData | null = null;
  private pixels: Uint32Array | null = null;
  private colorWords = new Map<string, number>();

  private surface(width: number, height: number): { canvas: HTMLCanvasElement; image: ImageData; pixels: Uint32Array } | null {
    if (!this.canvas) this.canvas = document.createElement('canvas');
    if (!this.image || this.image.width !== width || this.image.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
      const g = this.canvas.getContext('2d');
      if (!g) return null;
      this.image = g.createImageData(width, height);
      this.pixels = new Uint32Array(this.image.data.buffer);
    }
    return { canvas: this.canvas, image: this.image, pixels: this.pixels! };
  }

  private colorWord(hex: string): number {
    let w = this.colorWords.get(hex);
    if (w === undefined) {
      w = word(parseHex(hex));
      this.colorWords.set(hex, w);
    }
    return w;
  }

  /** Draw links and nodes into the buffer; returns the canvas holding them (transparent elsewhere). */
  render(input: PointCloudInput): HTMLCanvasElement | null {
    const { width: W, height: H, scale, ox, oy } = input;
    const s = this.surface(W, H);
    if (!s) return null;
    const px = s.pixels;
    px.fill(0);

    // Links: aliased lines, alpha accumulating where they cross.
    const a = Math.round(Math.min(1, input.linkAlpha) * 255);
    if (a > 0) {
      const [lr, lg, lb] = input.linkRgb;
      const rgb = (lb << 16) | (lg << 8) | lr;
      // Links shorter than a node is wide hide under their nodes: not drawn.
      const minLen = Math.max(1, input.nodeRadius * 1.5);
      const Wm = W - 1;
      const Hm = H - 1;
      for (const l of input.links) {
        let x0 = l.source.x * scale + ox;
        let y0 = l.source.y * scale + oy;
        let x1 = l.target.x * scale + ox;
        let y1 = l.target.y * scale + oy;
        if ((x0 < 0 && x1 < 0) || (x0 > Wm && x1 > Wm) || (y0 < 0 && y1 < 0) || (y0 > Hm && y1 > Hm)) continue;
        let dx = x1 - x0;
        let dy = y1 - y0;
        if (dx * dx + dy * dy < minLen * minLen) continue;
        // Clip to the buffer once (Liang–Barsky), so the loop needs no bounds checks.
        let t0 = 0;
        let t1 = 1;
        const clip = (p: number, q: number): boolean => {
          if (p === 0) return q >= 0;
          const t = q / p;
          if (p < 0) {
            if (t > t1) return false;
            if (t > t0) t0 = t;
          } else {
            if (t < t0) return false;
            if (t < t1) t1 = t;
          }
          return true;
        };
        if (!clip(-dx, x0) || !clip(dx, Wm - x0) || !clip(-dy, y0) || !clip(dy, Hm - y0)) continue;
        x1 = x0 + dx * t1;
        y1 = y0 + dy * t1;
        x0 += dx * t0;
        y0 += dy * t0;
        dx = x1 - x0;
        dy = y1 - y0;
        const adx = dx < 0 ? -dx : dx;
        const ady = dy < 0 ? -dy : dy;
        const steps = Math.min(8192, Math.ceil(adx > ady ? adx : ady));
        if (steps < 1) continue;
        const sx = dx / steps;
        const sy = dy / steps;
        for (let i = 0; i <= steps; i++) {
          const idx = ((y0 + sy * i) | 0) * W + ((x0 + sx * i) | 0);
          const old = px[idx] >>> 24;
          px[idx] = (((old ? old + (((255 - old) * a) >> 8) : a) << 24) | rgb) >>> 0;
        }
      }
    }

    // Nodes: stamps, opaque inside and blended at the edge.
    const plot = (nodes: readonly RenderNode[], color: number, stamp: Stamp) => {
      const { offsets, coverage } = stamp;
      const rgbOnly = color & 0xffffff;
      const n = coverage.length;
      for (const node of nodes) {
        const cx = Math.round(node.x * scale + ox);
        const cy = Math.round(node.y * scale + oy);
        if (cx < -8 || cy < -8 || cx >= W + 8 || cy >= H + 8) continue;
        for (let j = 0; j < n; j++) {
          const xi = cx + offsets[2 * j];
          const yi = cy + offsets[2 * j + 1];
          if (xi < 0 || yi < 0 || xi >= W || yi >= H) continue;
          const idx = yi * W + xi;
          const c = coverage[j];
          if (c === 255) {
            px[idx] = color;
            continue;
          }
          const old = px[idx];
          const oldA = old >>> 24;
          if (!oldA) {
            px[idx] = ((c << 24) | rgbOnly) >>> 0;
            continue;
          }
          // mix towards the node's colour by its coverage; alpha grows the same way
          const f = c / 255;
          const r0 = old & 255;
          const g0 = (old >>> 8) & 255;
          const b0 = (old >>> 16) & 255;
          const r1 = (r0 + ((rgbOnly & 255) - r0) * f) | 0;
          const g1 = (g0 + (((rgbOnly >>> 8) & 255) - g0) * f) | 0;
          const b1 = (b0 + (((rgbOnly >>> 16) & 255) - b0) * f) | 0;
          const a1 = (oldA + (255 - oldA) * f) | 0;
          px[idx] = ((a1 << 24) | (b1 << 16) | (g1 << 8) | r1) >>> 0;
        }
      }
    };
    plot(input.implications, this.colorWord(input.implicationColor), stampFor(input.nodeRadius * 0.75, true));
    const disc = stampFor(input.nodeRadius);
    for (const [color, group] of input.groups) plot(group, this.colorWord(color), disc);

    const g = s.canvas.getContext('2d');
    if (!g) return null;
    g.putImageData(s.image, 0, 0);
    return s.canvas;
  }
}
