// Painting a laid-out label into a bitmap (issue 28, item 6; used by mathLabels.ts): what the
// browser laid out for a label's KaTeX HTML is read back as paint operations (each glyph run
// with its computed font at its place, each rule - a fraction line, an overline, a box - as a
// rectangle, each KaTeX SVG - root signs, wide accents, stretchy arrows - as its paths), then
// painted into a small canvas, a halo under all of it like the plain labels'.

/** A typeset label: `canvas` holds it at `dpr` device pixels per CSS px, `pad` px of halo around
 * a `width` × `height` CSS px box. */
export interface MathLabel {
  canvas: HTMLCanvasElement;
  width: number;
  height: number;
  pad: number;
}

/** Halo width (px), as the plain labels' `lineWidth`. */
const HALO = 3.5;
const PAD = 2;
/** Largest drawn label (CSS px): a bigger formula is scaled down to fit. */
const MAX_WIDTH = 520;
const MAX_HEIGHT = 44;

export type TextOp = { kind: 'text'; text: string; x: number; y: number; font: string; color: string };
export type Op =
  | TextOp
  | { kind: 'rect'; x: number; y: number; w: number; h: number; color: string }
  | { kind: 'path'; path: Path2D; m: [number, number, number, number, number, number]; clip: Box; color: string; stroke: number };

/** A box in CSS px (x0 < x1, y0 < y1). */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** What the browser laid out in `root`, as paint operations relative to `root`'s top left, and
 * the box they cover (CSS px). */
export function collectOps(root: HTMLElement): { ops: Op[]; box: Box } {
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
export function paint(ops: readonly Op[], box: Box, haloColor: string, dpr: number): MathLabel | null {
  const width = box.x1 - box.x0;
  const height = box.y1 - box.y0;
  if (!(width > 0 && height > 0)) return null;
  const scale = Math.min(1, MAX_WIDTH / width, MAX_HEIGHT / height);
  const cw = width * scale;
  const ch = height * scale;
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil((cw + 2 * PAD) * dpr);
  canvas.height = Math.ceil((ch + 2 * PAD) * dpr);
  const g = canvas.getContext('2d');
  if (!g) return null;
  const base = (): void => g.setTransform(dpr * scale, 0, 0, dpr * scale, (PAD - box.x0 * scale) * dpr, (PAD - box.y0 * scale) * dpr);
  g.lineJoin = 'round';
  g.textBaseline = 'alphabetic';
  g.textAlign = 'left';
  for (const haloPass of [true, false]) {
    for (const op of ops) {
      base();
      if (op.kind === 'text') {
        g.font = op.font;
        if (haloPass) {
          g.lineWidth = HALO;
          g.strokeStyle = haloColor;
          g.strokeText(op.text, op.x, op.y);
        } else {
          g.fillStyle = op.color;
          g.fillText(op.text, op.x, op.y);
        }
      } else if (op.kind === 'rect') {
        const h = haloPass ? HALO / 2 : 0;
        g.fillStyle = haloPass ? haloColor : op.color;
        g.fillRect(op.x - h, op.y - h, op.w + 2 * h, op.h + 2 * h);
      } else {
        g.save();
        g.beginPath();
        const hc = haloPass ? HALO / 2 : 0;
        g.rect(op.clip.x0 - hc, op.clip.y0 - hc, op.clip.x1 - op.clip.x0 + 2 * hc, op.clip.y1 - op.clip.y0 + 2 * hc);
        g.clip();
        g.transform(...op.m);
        const unit = Math.abs(op.m[0]) || 1;
        if (haloPass) {
          g.strokeStyle = haloColor;
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
