// Canvas labels with their math rendered (issue 28, item 6). A label with TeX in it
// (core/library/labelMath.ts) is typeset by KaTeX once: its HTML is laid out in a hidden host in
// the page (KaTeX's stylesheet and fonts are the page's own, main.tsx), then what the browser laid
// out is painted into a small canvas: each glyph run with its computed font at its place, each
// rule (a fraction line, an overline, a box) as a rectangle, each KaTeX SVG (root signs, wide
// accents, stretchy arrows) as its paths, a halo under all of it like the plain labels'
// (mathPaint.ts). Those bitmaps are cached by label text, colours and device pixel ratio (LRU), so
// a frame only blits them: panning costs a `drawImage` per visible math label whatever the formula.
//
// A label drawn that is not typeset yet is drawn as plain text this frame (`plainMath`); at the
// end of the frame a batch of those is typeset (one layout for the batch, a time budget per
// frame) and a redraw requested. A label whose fonts are not loaded yet waits for them
// (`document.fonts.load`) and is typeset then.

import katex from 'katex';
import type { MathSegment } from '../../../core/math';
import { labelSegments } from '../../../core/library/labelMath';
import { collectOps, paint, type MathLabel, type TextOp } from './mathPaint';

export type { MathLabel } from './mathPaint';

/** Cached bitmaps kept, and their device pixels in all (4 bytes each: 32 MB): the least recently
 * drawn go first. A frame draws at most 300 labels (draw.ts MAX_LABELS). */
const CACHE_MAX = 600;
const CACHE_PIXELS = 8_000_000;
/** The time one frame may spend typesetting (ms), and the most labels in one batch (one layout):
 * a batch is sized from the cost per label measured so far, so a frame stays within the budget
 * even on a slow machine (one label at least). */
const FRAME_BUDGET_MS = 5;
const BATCH_MAX = 24;
/** Font-load attempts before a label is painted with whatever fonts there are. */
const FONT_TRIES = 3;

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
      const missing = ops.find((op): op is TextOp => op.kind === 'text' && !fontReady(op.font, op.text));
      if (missing && w.tries < FONT_TRIES) {
        this.waitForFont(missing.font, missing.text, { ...w, tries: w.tries + 1 });
        return;
      }
      this.remember(w.key, paint(ops, box, w.halo, w.dpr));
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
