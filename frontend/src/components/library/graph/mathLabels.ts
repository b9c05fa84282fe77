// Canvas labels with their math rendered (issue 28, item 6). A label with TeX in it
// (core/library/labelMath.ts) is typeset by KaTeX once: its HTML is laid out in a hidden host in
// the page (KaTeX's stylesheet and fonts are the page's own, main.tsx), then what the browser laid
// out is painted into a small canvas: each glyph run with its computed font at its place, each
// rule (a fraction line, an overline, a box) as a rectangle, each KaTeX SVG (root signs, wide
// accents, stretchy arrows) as its paths, a halo under all of it like the plain labels'. Those
// bitmaps are cached by label text, colours and device pixel ratio (LRU), so a frame only blits
// them: panning costs a `drawImage` per visible math label whatever the formula.
//
// A label drawn that is not typeset yet is drawn as plain text this frame (`plainMath`); at the
// end of the frame a batch of those is typeset (one layout for the batch, a time budget per
// frame) and a redraw requested. A label whose fonts are not loaded yet waits for them
// (`document.fonts.load`) and is typeset then.

import katex from 'katex';
import type { MathSegment } from '../../../core/math';
import { labelSegments } from '../../../core/library/labelMath';

/** A typeset label: `canvas` holds it at `dpr` device pixels per CSS px, `pad` px of halo around
 * a `width` × `height` CSS px box. */
export interface MathLabel {
  canvas: HTMLCanvasElement;
  width: number;
  height: number;
  pad: number;
}

/** Cached bitmaps kept, and their device pixels in all (4 bytes each: 32 MB): the least recently
 * drawn go first. A frame draws at most 300 labels (draw.ts MAX_LABELS). */
const CACHE_MAX = 600;
const CACHE_PIXELS = 8_000_000;
/** The time one frame may spend typesetting (ms), and the most labels in one batch (one layout):
 * a batch is sized from the cost per label measured so far, so a frame stays within the budget
 * even on a slow machine (one label at least). */
const FRAME_BUDGET_MS = 5;
const BATCH_MAX = 24;
/** Halo width (px), as the plain labels' `lineWidth`. */
const HALO = 3.5;
const PAD = 2;
/** Largest drawn label (CSS px): a bigger formula is scaled down to fit. */
const MAX_WIDTH = 520;
const MAX_HEIGHT = 44;
/** Font-load attempts before a label is painted with whatever fonts there are. */
const FONT_TRIES = 3;

type Op =
  | { kind: 'text'; text: string; x: number; y: number; font: string; color: string }
  | { kind: 'rect'; x: number; y: number; w: number; h: number; color: string }
  | { kind: 'path'; path: Path2D; m: [number, number, number, number, number, number]; clip: Box; color: string; stroke: number };

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

interface Wanted {
  key: string;
  segments: MathSegment[];
  color: string;
  halo: string;
  dpr: number;
  tries: number;
}

export class MathLabels {
  private readonly requestRedraw: () => void;
  private readonly cache = new Map<string, MathLabel | null>();
  private readonly wanted = new Map<string, Wanted>();
  private pixels = 0;
  /** Main-thread ms per label typeset, a moving average (the batch size follows it). */
  private perLabelMs = 1;
  private host: HTMLDivElement | null = null;
  private disposed = false;
  /** Labels typeset so far, and the main-thread time that took (ms): the bench's figures. */
  typesetCount = 0;
  typesetMs = 0;

  /** `requestRedraw` is called when labels asked for are ready to be drawn. */
  constructor(requestRedraw: () => void) {
    this.requestRedraw = requestRedraw;
  }

  /**
   * The typeset bitmap of a label, or null: no math in it (draw it as plain text), or not
   * typeset yet (draw it as plain text this frame and, when it was placed, `want` it).
   *
   * @param text the label as the server wrote it; `maxChars` its longest reading (labelMath.ts).
   * @param color, halo the text and halo colours (CSS); `dpr` device pixels per CSS px.
   */
  get(text: string, maxChars: number, color: string, halo: string, dpr: number): MathLabel | null {
    const key = `${maxChars}|${dpr}|${color}|${halo}|${text}`;
    const hit = this.cache.get(key);
    if (hit === undefined) return null;
    // most recently used last (the LRU order)
    this.cache.delete(key);
    this.cache.set(key, hit);
    return hit;
  }

  /** Ask for a label to be typeset at the end of the frame (`endFrame`): one that was drawn as
   * plain text for want of its bitmap. Only drawn labels are asked for: a frame considers many
   * more (every node on screen) than it has room for. Same arguments as `get`. */
  want(text: string, maxChars: number, color: string, halo: string, dpr: number): void {
    const key = `${maxChars}|${dpr}|${color}|${halo}|${text}`;
    if (this.cache.has(key) || this.wanted.has(key)) return;
    const segments = labelSegments(text, maxChars);
    if (segments) this.wanted.set(key, { key, segments, color, halo, dpr, tries: 0 });
    else this.remember(key, null);
  }

  /** Called once a frame's labels are drawn: typesets labels asked for (within the frame's time
   * budget) and asks for a redraw when some became ready or some are left. */
  endFrame(): void {
    if (!this.wanted.size || this.disposed) return;
    const t0 = performance.now();
    let ready = 0;
    let spent = 0;
    while (this.wanted.size && spent < FRAME_BUDGET_MS) {
      const room = Math.floor((FRAME_BUDGET_MS - spent) / this.perLabelMs);
      const batch = [...this.wanted.values()].slice(0, Math.max(1, Math.min(BATCH_MAX, room)));
      for (const w of batch) this.wanted.delete(w.key);
      const t1 = performance.now();
      ready += this.typeset(batch);
      const ms = performance.now() - t1;
      this.perLabelMs = 0.7 * this.perLabelMs + 0.3 * (ms / batch.length);
      spent = performance.now() - t0;
      if (room < 1) break;
    }
    this.typesetCount += ready;
    this.typesetMs += performance.now() - t0;
    if (ready || this.wanted.size) this.requestRedraw();
  }

  dispose(): void {
    this.disposed = true;
    this.host?.remove();
    this.host = null;
    this.cache.clear();
    this.wanted.clear();
    this.pixels = 0;
  }

  private remember(key: string, label: MathLabel | null): void {
    const size = (l: MathLabel | null | undefined) => (l ? l.canvas.width * l.canvas.height : 0);
    this.pixels += size(label);
    for (const [oldest, old] of this.cache) {
      if (this.cache.size < CACHE_MAX && this.pixels <= CACHE_PIXELS) break;
      this.cache.delete(oldest);
      this.pixels -= size(old);
    }
    this.cache.set(key, label);
  }

  private ensureHost(): HTMLDivElement {
    if (!this.host) {
      const host = document.createElement('div');
      host.setAttribute('aria-hidden', 'true');
      host.dataset.testid = 'graph-math-host';
      // Laid out (fonts load, boxes measure) but never seen, and kept out of the page's layout.
      host.style.cssText =
        'position:fixed;left:-20000px;top:0;width:16000px;height:4000px;contain:strict;visibility:hidden;pointer-events:none;' +
        `font:12px ${LABEL_FONT_STACK};white-space:nowrap;line-height:normal;`;
      document.body.appendChild(host);
      this.host = host;
    }
    return this.host;
  }

  /** Lay out a batch in the hidden host (one layout), paint each label whose fonts are loaded;
   * returns how many became ready. */
  private typeset(batch: Wanted[]): number {
    const host = this.ensureHost();
    const rows = batch.map((w) => {
      const row = document.createElement('div');
      row.style.cssText = `position:absolute;left:0;top:0;display:inline-block;color:${w.color}`;
      row.innerHTML = labelHtml(w.segments);
      host.appendChild(row);
      return row;
    });
    let ready = 0;
    rows.forEach((row, i) => {
      const w = batch[i];
      const { ops, box } = collectOps(row);
      const missing = ops.find((op): op is Extract<Op, { kind: 'text' }> => op.kind === 'text' && !fontReady(op.font, op.text));
      if (missing && w.tries < FONT_TRIES) {
        this.waitForFont(missing.font, missing.text, { ...w, tries: w.tries + 1 });
        return;
      }
      this.remember(w.key, paint(ops, box, w));
      ready++;
    });
    for (const row of rows) row.remove();
    return ready;
  }

  private waitForFont(font: string, text: string, w: Wanted): void {
    const retry = () => {
      if (this.disposed) return;
      this.wanted.set(w.key, w);
      this.requestRedraw();
    };
    document.fonts.load(font, text).then(retry, retry);
  }
}

/** Fonts known loaded (a loaded font stays loaded: `document.fonts.check` is asked once). */
const loadedFonts = new Set<string>();

function fontReady(font: string, text: string): boolean {
  if (loadedFonts.has(font)) return true;
  const ready = document.fonts.check(font, text);
  if (ready) loadedFonts.add(font);
  return ready;
}

/** The plain labels' font stack (draw.ts LABEL_FONT). */
export const LABEL_FONT_STACK = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/** KaTeX's HTML per formula (formulas repeat across labels: a name's in its chains' lines). */
const formulas = new Map<string, string>();

/** A label's HTML: words as text, formulas as KaTeX's HTML (no MathML: nothing to paint there). */
export function labelHtml(segments: readonly MathSegment[]): string {
  return segments
    .map((s) => {
      if (s.kind === 'text') return `<span>${s.text.replace(/[&<>"]/g, (c) => ESCAPES[c])}</span>`;
      let html = formulas.get(s.tex);
      if (html === undefined) {
        html = katex.renderToString(s.tex, { throwOnError: false, strict: false, displayMode: false, output: 'html' });
        if (formulas.size >= 2000) formulas.clear();
        formulas.set(s.tex, html);
      }
      return html;
    })
    .join('');
}

/** What the browser laid out in `root`, as paint operations relative to `root`'s top left, and
 * the box they cover (CSS px). */
function collectOps(root: HTMLElement): { ops: Op[]; box: Box } {
  const origin = root.getBoundingClientRect();
  const ox = origin.left;
  const oy = origin.top;
  const box: Box = { x0: 0, y0: 0, x1: origin.width, y1: origin.height };
  const grow = (x0: number, y0: number, x1: number, y1: number) => {
    box.x0 = Math.min(box.x0, x0);
    box.y0 = Math.min(box.y0, y0);
    box.x1 = Math.max(box.x1, x1);
    box.y1 = Math.max(box.y1, y1);
  };
  const ops: Op[] = [];
  const range = document.createRange();
  const measure = measuringContext();
  const walk = (el: Element) => {
    for (const child of el.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        const text = (child.textContent ?? '').replace(/\u200b/g, '');
        if (!text.trim()) continue;
        const style = getComputedStyle(el);
        range.selectNodeContents(child);
        const r = range.getBoundingClientRect();
        if (!r.width) continue;
        const font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        let ascent = ascents.get(font);
        if (ascent === undefined) {
          ascent = r.height * 0.8;
          if (measure) {
            measure.font = font;
            const m = measure.measureText(text);
            if (m.fontBoundingBoxAscent !== undefined) ascent = m.fontBoundingBoxAscent;
          }
          ascents.set(font, ascent);
        }
        ops.push({ kind: 'text', text, x: r.left - ox, y: r.top - oy + ascent, font, color: style.color });
        grow(r.left - ox, r.top - oy, r.right - ox, r.bottom - oy);
      } else if (child instanceof SVGSVGElement) {
        svgOps(child, ox, oy, ops);
      } else if (child instanceof HTMLElement) {
        if (MAY_PAINT.test(child.className) || child.style.borderWidth || child.style.borderBottomWidth || child.style.borderTopWidth || child.style.backgroundColor) ruleOps(child, ox, oy, ops);
        walk(child);
      }
    }
  };
  walk(root);
  return { ops, box };
}

/** KaTeX's classes of boxes drawn with borders or a background (fraction lines, over- and
 * underlines, \rule, array lines, \boxed, \colorbox): only these (and elements with such an inline
 * style) are asked for their borders, which keeps a label's typesetting cheap. */
const MAY_PAINT = /frac-line|overline-line|underline-line|\brule\b|hline|hdashline|vertical-separator|fbox|fcolorbox|boxpad|colorbox|cancel|sout/;

/** A font's ascent above the baseline (px), measured once per font. */
const ascents = new Map<string, number>();

let measuring: CanvasRenderingContext2D | null | undefined;
function measuringContext(): CanvasRenderingContext2D | null {
  if (measuring === undefined) measuring = document.createElement('canvas').getContext('2d');
  return measuring;
}

/** An element's visible borders (fraction lines, over- and underlines, boxes) and background. */
function ruleOps(el: HTMLElement, ox: number, oy: number, ops: Op[]): void {
  const style = getComputedStyle(el);
  const top = style.borderTopStyle !== 'none' ? Number.parseFloat(style.borderTopWidth) : 0;
  const right = style.borderRightStyle !== 'none' ? Number.parseFloat(style.borderRightWidth) : 0;
  const bottom = style.borderBottomStyle !== 'none' ? Number.parseFloat(style.borderBottomWidth) : 0;
  const left = style.borderLeftStyle !== 'none' ? Number.parseFloat(style.borderLeftWidth) : 0;
  const background = style.backgroundColor;
  const painted = background && background !== 'transparent' && !/rgba\(.*,\s*0\)$/.test(background);
  if (!(top > 0 || right > 0 || bottom > 0 || left > 0 || painted)) return;
  const r = el.getBoundingClientRect();
  const x = r.left - ox;
  const y = r.top - oy;
  if (painted) ops.push({ kind: 'rect', x, y, w: r.width, h: r.height, color: background });
  if (top > 0) ops.push({ kind: 'rect', x, y, w: r.width, h: top, color: style.borderTopColor });
  if (bottom > 0) ops.push({ kind: 'rect', x, y: y + r.height - bottom, w: r.width, h: bottom, color: style.borderBottomColor });
  if (left > 0) ops.push({ kind: 'rect', x, y, w: left, h: r.height, color: style.borderLeftColor });
  if (right > 0) ops.push({ kind: 'rect', x: x + r.width - right, y, w: right, h: r.height, color: style.borderRightColor });
}

/** A KaTeX SVG's paths (filled) and lines (stroked), mapped from its viewBox to where it was laid
 * out and clipped to it and to its nearest clipping ancestor (KaTeX's `hide-tail`). */
function svgOps(svg: SVGSVGElement, ox: number, oy: number, ops: Op[]): void {
  const r = svg.getBoundingClientRect();
  if (!r.width || !r.height) return;
  let clip: Box = { x0: r.left - ox, y0: r.top - oy, x1: r.right - ox, y1: r.bottom - oy };
  for (let p = svg.parentElement; p; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
      const c = p.getBoundingClientRect();
      clip = { x0: Math.max(clip.x0, c.left - ox), y0: Math.max(clip.y0, c.top - oy), x1: Math.min(clip.x1, c.right - ox), y1: Math.min(clip.y1, c.bottom - oy) };
      break;
    }
    if (p.classList.contains('katex')) break;
  }
  const vb = svg.viewBox.baseVal;
  const vw = vb && vb.width ? vb.width : r.width;
  const vh = vb && vb.height ? vb.height : r.height;
  const [align, slice] = (svg.getAttribute('preserveAspectRatio') ?? 'xMidYMid meet').split(/\s+/);
  let sx = r.width / vw;
  let sy = r.height / vh;
  let dx = 0;
  let dy = 0;
  if (align !== 'none') {
    const s = slice === 'slice' ? Math.max(sx, sy) : Math.min(sx, sy);
    sx = sy = s;
    const spareX = r.width - vw * s;
    const spareY = r.height - vh * s;
    dx = align.startsWith('xMid') ? spareX / 2 : align.startsWith('xMax') ? spareX : 0;
    dy = align.includes('YMid') ? spareY / 2 : align.includes('YMax') ? spareY : 0;
  }
  const m: [number, number, number, number, number, number] = [sx, 0, 0, sy, r.left - ox + dx - (vb?.x ?? 0) * sx, r.top - oy + dy - (vb?.y ?? 0) * sy];
  const color = getComputedStyle(svg).fill.startsWith('rgb') ? getComputedStyle(svg).fill : getComputedStyle(svg).color;
  for (const shape of svg.querySelectorAll('path, line')) {
    if (shape.tagName === 'path') {
      const d = shape.getAttribute('d');
      if (d) ops.push({ kind: 'path', path: new Path2D(d), m, clip, color, stroke: 0 });
    } else {
      const line = shape as SVGLineElement;
      const path = new Path2D();
      path.moveTo(line.x1.baseVal.value, line.y1.baseVal.value);
      path.lineTo(line.x2.baseVal.value, line.y2.baseVal.value);
      const width = Number.parseFloat(getComputedStyle(line).strokeWidth) || 1;
      ops.push({ kind: 'path', path, m: [1, 0, 0, 1, r.left - ox, r.top - oy], clip, color: getComputedStyle(line).stroke || color, stroke: width });
    }
  }
}

/** Paint the operations into a canvas: the halo first (text stroked, rules and paths widened),
 * then the label itself. A label larger than MAX_WIDTH × MAX_HEIGHT is scaled down to fit. */
function paint(ops: readonly Op[], box: Box, w: Wanted): MathLabel | null {
  const width = box.x1 - box.x0;
  const height = box.y1 - box.y0;
  if (!(width > 0 && height > 0)) return null;
  const scale = Math.min(1, MAX_WIDTH / width, MAX_HEIGHT / height);
  const cw = width * scale;
  const ch = height * scale;
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil((cw + 2 * PAD) * w.dpr);
  canvas.height = Math.ceil((ch + 2 * PAD) * w.dpr);
  const g = canvas.getContext('2d');
  if (!g) return null;
  const base = (): void => g.setTransform(w.dpr * scale, 0, 0, w.dpr * scale, (PAD - box.x0 * scale) * w.dpr, (PAD - box.y0 * scale) * w.dpr);
  g.lineJoin = 'round';
  g.textBaseline = 'alphabetic';
  g.textAlign = 'left';
  for (const halo of [true, false]) {
    for (const op of ops) {
      base();
      if (op.kind === 'text') {
        g.font = op.font;
        if (halo) {
          g.lineWidth = HALO;
          g.strokeStyle = w.halo;
          g.strokeText(op.text, op.x, op.y);
        } else {
          g.fillStyle = op.color;
          g.fillText(op.text, op.x, op.y);
        }
      } else if (op.kind === 'rect') {
        const h = halo ? HALO / 2 : 0;
        g.fillStyle = halo ? w.halo : op.color;
        g.fillRect(op.x - h, op.y - h, op.w + 2 * h, op.h + 2 * h);
      } else {
        g.save();
        g.beginPath();
        const hc = halo ? HALO / 2 : 0;
        g.rect(op.clip.x0 - hc, op.clip.y0 - hc, op.clip.x1 - op.clip.x0 + 2 * hc, op.clip.y1 - op.clip.y0 + 2 * hc);
        g.clip();
        g.transform(...op.m);
        const unit = Math.abs(op.m[0]) || 1;
        if (halo) {
          g.strokeStyle = w.halo;
          g.lineWidth = (HALO + op.stroke) / unit;
          g.stroke(op.path);
        } else if (op.stroke) {
          g.strokeStyle = op.color;
          g.lineWidth = op.stroke / unit;
          g.stroke(op.path);
        } else {
          g.fillStyle = op.color;
          g.fill(op.path);
        }
        g.restore();
      }
    }
  }
  return { canvas, width: cw, height: ch, pad: PAD };
}
