// What a canvas label typesets (issue 28, item 6): a proposition's name (or a chain's line) with
// TeX in it is drawn with its math rendered by KaTeX (components/library/graph/mathLabels.ts),
// shortened first like a plain label. Pure: no canvas, no DOM, no KaTeX.

import { plainMath, splitMath, type MathSegment } from '../math';

/**
 * The pieces of a label to typeset, at most about `maxChars` characters long as read (a formula
 * counts the length of its plain reading, `plainMath`), or null when the label has no math (it is
 * drawn as plain text) or begins with a formula longer than that (its plain reading is shortened
 * instead). Text is cut at `maxChars` and a formula that does not fit is left out, an ellipsis
 * standing for what was cut. Display math is set inline, as in the chain table.
 *
 * @param text the label as the server wrote it (`$..$`, `$$..$$`, `\(..\)` delimiters).
 * @param maxChars the longest label, in characters (36 for a proposition, 90 for a chain).
 */
export function labelSegments(text: string, maxChars: number): MathSegment[] | null {
  const segments = splitMath(text.trim());
  if (!segments.some((s) => s.kind === 'math')) return null;
  const out: MathSegment[] = [];
  let used = 0;
  for (const s of segments) {
    if (s.kind === 'text') {
      if (used + s.text.length <= maxChars) {
        out.push(s);
        used += s.text.length;
        continue;
      }
      const room = maxChars - used - 1;
      const cut = room > 0 ? s.text.slice(0, room).trimEnd() : '';
      out.push({ kind: 'text', text: `${cut}…` });
      return out;
    }
    const len = plainMath(`$${s.tex}$`).length;
    if (used + len > maxChars) {
      if (!out.length) return null;
      const last = out[out.length - 1];
      if (last.kind === 'text') out[out.length - 1] = { kind: 'text', text: `${last.text.trimEnd()} …` };
      else out.push({ kind: 'text', text: ' …' });
      return out;
    }
    out.push({ kind: 'math', tex: s.tex, display: false });
    used += len;
  }
  return out;
}
