import { describe, expect, it } from 'vitest';
import { labelSegments } from '../../../core/library/labelMath';
import { labelHtml } from './mathLabels';

describe('labelHtml (what a math label lays out before it is painted)', () => {
  it('sets words as escaped text and formulas as KaTeX HTML without MathML (nothing to paint twice)', () => {
    const html = labelHtml(labelSegments('If <a> & $\\frac{a}{b} \\ge 0$ then', 60)!);
    expect(html.startsWith('<span>If &lt;a&gt; &amp; </span><span class="katex">')).toBe(true);
    expect(html).toContain('frac-line');
    expect(html).not.toContain('katex-mathml');
    expect(html.endsWith('<span> then</span>')).toBe(true);
  });

  it('typesets escaped brackets inside a formula without a KaTeX error (issue 28, item 9)', () => {
    const html = labelHtml(labelSegments('On $\\[0,1\\]$ and $$f\\colon \\[a,b\\] \\to \\mathbb{R}$$', 60)!);
    expect(html).not.toContain('katex-error');
    expect(html).toContain('[');
  });
});
