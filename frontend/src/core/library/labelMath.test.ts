import { describe, expect, it } from 'vitest';
import { labelSegments } from './labelMath';

describe('labelSegments (what a canvas label typesets)', () => {
  it('is null for a label without math: it is drawn as plain text', () => {
    expect(labelSegments('Heaps keep the minimum on top', 36)).toBeNull();
    expect(labelSegments('costs \\$5 only', 36)).toBeNull();
  });

  it('keeps the words and the formula of a short label, display math set inline', () => {
    expect(labelSegments('Kernel $\\sigma^{-1}(321)\\sigma(123)=(r23)$', 60)).toEqual([
      { kind: 'text', text: 'Kernel ' },
      { kind: 'math', tex: '\\sigma^{-1}(321)\\sigma(123)=(r23)', display: false },
    ]);
    expect(labelSegments('$$\\int_0^1 x\\,dx$$ is a half', 36)).toEqual([
      { kind: 'math', tex: '\\int_0^1 x\\,dx', display: false },
      { kind: 'text', text: ' is a half' },
    ]);
  });

  it('counts a formula by its plain reading, not its TeX source', () => {
    // "\frac{a}{b}" reads "a/b": three characters, so it fits in a short label
    expect(labelSegments('Ratio $\\frac{a}{b}$', 10)).toEqual([
      { kind: 'text', text: 'Ratio ' },
      { kind: 'math', tex: '\\frac{a}{b}', display: false },
    ]);
  });

  it('cuts long text with an ellipsis and leaves out a formula that does not fit', () => {
    expect(labelSegments('Monotone $F(x)$ for every real number x and more words', 24)).toEqual([
      { kind: 'text', text: 'Monotone ' },
      { kind: 'math', tex: 'F(x)', display: false },
      { kind: 'text', text: ' for every…' },
    ]);
    expect(labelSegments('A very long lead-in text here $x^2+y^2=z^2$', 32)).toEqual([{ kind: 'text', text: 'A very long lead-in text here …' }]);
  });

  it('is null when the label begins with a formula too long to show (its plain reading is shortened)', () => {
    expect(labelSegments('$a_1 + a_2 + a_3 + a_4 + a_5 + a_6 + a_7 + a_8 + a_9$ sums', 20)).toBeNull();
  });

  it('keeps an escaped bracket inside a formula part of it (issue 28, item 9)', () => {
    expect(labelSegments('On $\\[0,1\\]$ bounded', 36)).toEqual([
      { kind: 'text', text: 'On ' },
      { kind: 'math', tex: '[0,1]', display: false },
      { kind: 'text', text: ' bounded' },
    ]);
  });
});
