import { describe, expect, it } from 'vitest';
import { normalizeMathDelimiters } from './math';

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
