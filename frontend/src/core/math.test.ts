import { describe, expect, it } from 'vitest';
import { mapFormulas, normalizeMathDelimiters, unescapeBrackets } from './math';

describe('normalizeMathDelimiters', () => {
  it('leaves dollar math and plain text alone', () => {
    const s = 'Euler: $e^{i\\pi}+1=0$ and\n\n$$\n\\int_0^1 x\\,dx\n$$\n\nplain text, $5 and $$ alone';
    expect(normalizeMathDelimiters(s)).toBe(s);
  });

  it('turns a one-line $$...$$ into a display block', () => {
    expect(normalizeMathDelimiters('so\n\n$$ \\int_0^1 x\\,dx $$\n\nok')).toBe('so\n\n$$\n\\int_0^1 x\\,dx\n$$\n\nok');
    // inline $$ inside a sentence stays as it is
    expect(normalizeMathDelimiters('a $$x$$ b')).toBe('a $$x$$ b');
  });

  it('rewrites \\( \\) to inline dollars', () => {
    expect(normalizeMathDelimiters('so \\( x^2 \\) grows')).toBe('so $x^2$ grows');
  });

  it('rewrites \\[ \\] to a display block', () => {
    expect(normalizeMathDelimiters('see\n\\[\n a+b \n\\]\nok')).toBe('see\n\n$$\na+b\n$$\n\nok');
  });

  it('does not touch code spans or fenced code', () => {
    const s = 'inline `\\(x\\)` and\n```\nprint("\\(y\\)")\n```\nbut \\(z\\)';
    expect(normalizeMathDelimiters(s)).toBe('inline `\\(x\\)` and\n```\nprint("\\(y\\)")\n```\nbut $z$');
  });

  it('treats an unclosed fence (while streaming) as code', () => {
    const s = 'a \\(b\\)\n```tex\n\\(c\\)';
    expect(normalizeMathDelimiters(s)).toBe('a $b$\n```tex\n\\(c\\)');
  });

  it('leaves an unclosed delimiter alone', () => {
    expect(normalizeMathDelimiters('half \\( open')).toBe('half \\( open');
  });
});

import { healMath, plainMath, splitMath } from './math';

describe('healMath (the display seam)', () => {
  it('leaves balanced text alone', () => {
    expect(healMath('Limits $\\lim_{h \\to 0}$ and $x$')).toBe('Limits $\\lim_{h \\to 0}$ and $x$');
    expect(healMath('plain words')).toBe('plain words');
  });

  it('closes a lone $ that opens TeX', () => {
    expect(healMath('Limits $\\lim_{h \\to 0}')).toBe('Limits $\\lim_{h \\to 0}$');
    expect(healMath('$x^2$ and $y^3')).toBe('$x^2$ and $y^3$');
    expect(healMath('Area $$\\int_0^1 x\\,dx')).toBe('Area $$\\int_0^1 x\\,dx$$');
  });

  it('makes a lone price a literal dollar', () => {
    expect(healMath('It costs $5 now')).toBe('It costs \\$5 now');
  });

  it('reads \\( \\) and \\[ \\] as dollars', () => {
    expect(healMath('so \\(x^2\\) grows')).toBe('so $x^2$ grows');
  });
});

describe('splitMath', () => {
  it('splits text and math, inline and display', () => {
    expect(splitMath('F $= ma$ and $$E=mc^2$$')).toEqual([
      { kind: 'text', text: 'F ' },
      { kind: 'math', tex: '= ma', display: false },
      { kind: 'text', text: ' and ' },
      { kind: 'math', tex: 'E=mc^2', display: true },
    ]);
  });

  it('keeps a literal dollar as text', () => {
    expect(splitMath('It costs $5 now')).toEqual([{ kind: 'text', text: 'It costs $5 now' }]);
  });

  it('heals before splitting', () => {
    expect(splitMath('Limits $\\lim_{h \\to 0}')).toEqual([
      { kind: 'text', text: 'Limits ' },
      { kind: 'math', tex: '\\lim_{h \\to 0}', display: false },
    ]);
  });
});

describe('plainMath (canvas labels)', () => {
  it('strips delimiters and maps common commands', () => {
    expect(plainMath('Limits $\\lim_{h \\to 0}$')).toBe('Limits lim_(h → 0)');
    expect(plainMath('$F = ma$')).toBe('F = ma');
    expect(plainMath('$\\frac{d}{dx} x^2 = 2x$')).toBe('d/dx x² = 2x');
    expect(plainMath('$\\frac{f(x+h)-f(x)}{h}$')).toBe('(f(x+h)-f(x))/h');
    expect(plainMath('$\\sqrt{2}$ is irrational')).toBe('√2 is irrational');
    expect(plainMath('$a_{n+1} \\le a_n$')).toBe('a_(n+1) ≤ a_n');
    expect(plainMath('$\\sin x \\cdot \\pi$')).toBe('sin x · π');
    expect(plainMath('$e^{i\\pi}$')).toBe('e^(iπ)');
  });

  it('never leaves a delimiter $, even unbalanced', () => {
    for (const s of ['Limits $\\lim_{h \\to 0}', '$x$ and $y', '$$\\int_0^1 x\\,dx$$', 'a \\(x^2\\) b']) {
      expect(plainMath(s)).not.toContain('$');
    }
    expect(plainMath('It costs $5')).toBe('It costs $5'); // a price is not a delimiter
    expect(plainMath('no math here')).toBe('no math here');
  });
});

// Issue 28, item 9: notes converted by tools that escape brackets write `\[`/`\]` inside formulas.
describe('escaped brackets inside a formula', () => {
  it('stay part of a $$ display formula (no display delimiter, no KaTeX error)', () => {
    const note = 'The interval\n\n$$\nf\\colon \\[0,1\\] \\to \\mathbb{R}\n$$\n\nis closed.';
    expect(normalizeMathDelimiters(note)).toBe('The interval\n\n$$\nf\\colon [0,1] \\to \\mathbb{R}\n$$\n\nis closed.');
  });

  it('stay part of a one-line $$ formula and of an inline $ formula', () => {
    expect(normalizeMathDelimiters('so\n\n$$ x \\in \\[a, b\\] $$\n\nok')).toBe('so\n\n$$\nx \\in [a, b]\n$$\n\nok');
    expect(normalizeMathDelimiters('take $x \\in \\[0,1\\]$ here')).toBe('take $x \\in [0,1]$ here');
  });

  it('leave a row break with its spacing alone, and \\[ \\] outside formulas still display', () => {
    const aligned = '$$\n\\begin{aligned} a &= b \\\\[2pt] c &= d \\end{aligned}\n$$';
    expect(normalizeMathDelimiters(aligned)).toBe(aligned);
    expect(normalizeMathDelimiters('a $y$ and \\[ x^2 \\] b')).toBe('a $y$ and \n$$\nx^2\n$$\n b');
  });

  it('do not break one-line labels (healMath, splitMath, plainMath)', () => {
    expect(healMath('Interval $$x \\in \\[0,1\\]$$ closed')).toBe('Interval $$x \\in [0,1]$$ closed');
    expect(splitMath('On $\\[a,b\\]$ it is continuous')).toEqual([
      { kind: 'text', text: 'On ' },
      { kind: 'math', tex: '[a,b]', display: false },
      { kind: 'text', text: ' it is continuous' },
    ]);
    expect(plainMath('On $\\[a,b\\]$ it holds')).toBe('On [a,b] it holds');
    // outside a formula \[..\] is still display math
    expect(healMath('see \\[x^2\\]')).toBe('see $$x^2$$');
  });

  it('map formulas and text apart, a lone or escaped dollar being text', () => {
    const pieces: string[] = [];
    mapFormulas('a $x$ b $$y$$ c \\$ d $ e', (t) => (pieces.push(`T:${t}`), t), (m) => (pieces.push(`M:${m}`), m));
    expect(pieces).toEqual(['T:a ', 'M:x', 'T: b ', 'M:y', 'T: c \\$ d $ e']);
    expect(unescapeBrackets('\\[a\\] \\{b\\} \\\\[3pt]')).toBe('[a] \\{b\\} \\\\[3pt]');
  });
});
