// remark-math understands $...$ and $$...$$ (display math only when the $$
// fences stand on their own lines). Models often write LaTeX with \( ... \),
// \[ ... \] or a one-line $$ ... $$; rewrite those (outside code) so they
// render, the last two as display math.

// Code spans and fenced blocks (a fence still open at the end of a streaming
// message counts as code up to the end).
const CODE = /(```[\s\S]*?(?:```|$)|~~~[\s\S]*?(?:~~~|$)|`[^`\n]+`)/g;

function rewriteText(text: string): string {
  const blocks = text.replace(/^([ \t]*)\$\$([^\n$][^\n]*?)\$\$[ \t]*$/gm, (_m, indent: string, body: string) => `${indent}$$\n${indent}${body.trim()}\n${indent}$$`);
  return mapFormulas(blocks, rewriteDelimiters, unescapeBrackets);
}

/** `\[..\]` and `\(..\)` as display / inline dollars (text outside formulas only: `mapFormulas`). */
function rewriteDelimiters(text: string): string {
  return text
    .replace(/\\\[([\s\S]+?)\\\]/g, (_m, body: string) => `\n$$\n${body.trim()}\n$$\n`)
    .replace(/\\\(([\s\S]+?)\\\)/g, (_m, body: string) => `$${body.trim()}$`);
}

/**
 * Escaped square brackets inside a formula as the brackets they stand for: tools that escape
 * `[`/`]` for Markdown write `$$x \in \[0,1\]$$`, and KaTeX has no `\[` command (a red error).
 * Every other escape stays, `\\[2pt]` (a row break with its spacing) too. Issue 28, item 9.
 */
export function unescapeBrackets(tex: string): string {
  if (!tex.includes('\\[') && !tex.includes('\\]')) return tex;
  let out = '';
  for (let i = 0; i < tex.length; i++) {
    const c = tex[i];
    if (c === '\\' && i + 1 < tex.length) {
      const next = tex[i + 1];
      out += next === '[' || next === ']' ? next : c + next;
      i++;
    } else out += c;
  }
  return out;
}

/**
 * `text` cut into formulas and the text between them, each piece mapped: `inside(tex)` for the
 * body of a `$$..$$` (which may span lines) or of a `$..$` (within one line), `outside(text)`
 * for the rest, so a `\[` inside a formula is never taken for a display delimiter. A `\$` is a
 * literal dollar; a delimiter that is never closed is text.
 */
export function mapFormulas(text: string, outside: (text: string) => string, inside: (tex: string) => string): string {
  if (!text.includes('$')) return outside(text);
  let out = '';
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c !== '$') {
      i++;
      continue;
    }
    const display = text[i + 1] === '$';
    const width = display ? 2 : 1;
    let end = -1;
    for (let j = i + width; j < text.length; j++) {
      const d = text[j];
      if (d === '\\') {
        j++;
        continue;
      }
      if (!display && d === '\n') break;
      if (d === '$' && (display ? text[j + 1] === '$' : text[j + 1] !== '$')) {
        end = j;
        break;
      }
    }
    if (end < 0) {
      i += width;
      continue;
    }
    out += outside(text.slice(from, i)) + text.slice(i, i + width) + inside(text.slice(i + width, end)) + text.slice(end, end + width);
    i = from = end + width;
  }
  return out + outside(text.slice(from));
}

export function normalizeMathDelimiters(markdown: string): string {
  if (!markdown.includes('\\(') && !markdown.includes('\\[') && !markdown.includes('$$')) return markdown;
  return markdown
    .split(CODE)
    .map((segment, i) => (i % 2 === 1 ? segment : rewriteText(segment)))
    .join('');
}

// ---------------------------------------------------------------------------
// One-line math (labels, names, statements, options): the display seam

/** A piece of a one-line text: plain words, or TeX to typeset (inline or display). */
export type MathSegment = { kind: 'text'; text: string } | { kind: 'math'; tex: string; display: boolean };

// Something that only reads as TeX: a command, a super/subscript, or braces.
const TEX_HINT = /\\[A-Za-z]+|[_^]|[{}]/;

/** Positions of the unescaped `$` of `text` (a `\$` is a literal dollar). */
function dollarPositions(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] === '$') out.push(i);
  }
  return out;
}

/**
 * Math healing at the display seam: a text whose `$` delimiters do not pair up
 * (a model cut short, or a label written `Limits $\lim_{h \to 0}`) is mended
 * before rendering. A lone `$` followed by something that reads as TeX is
 * (or by a letter) is closed at the end of the text; any other lone `$` (a
 * price, "$5") becomes a
 * literal `\$`. Balanced text (and text without `$`) is returned unchanged;
 * `\(..\)` and `\[..\]` outside formulas become `$..$` / `$$..$$` first, and an escaped bracket
 * inside one is a bracket (`unescapeBrackets`).
 */
export function healMath(text: string): string {
  let t = mapFormulas(
    text,
    (plain) =>
      plain
        .replace(/\\\[([\s\S]+?)\\\]/g, (_m, body: string) => `$$${body.trim()}$$`)
        .replace(/\\\(([\s\S]+?)\\\)/g, (_m, body: string) => `$${body.trim()}$`),
    unescapeBrackets,
  );
  if (!t.includes('$')) return t;
  // Pair the delimiters left to right: `$$` opens/closes display math, `$` inline.
  const positions = dollarPositions(t);
  let open: { at: number; width: number } | null = null;
  for (let k = 0; k < positions.length; k++) {
    const at = positions[k];
    const width = positions[k + 1] === at + 1 ? 2 : 1;
    if (width === 2) k++;
    if (open === null) open = { at, width };
    else if (open.width === width) open = null;
    // a `$` inside `$$..$$` (or `$$` inside `$..$`) is left to KaTeX
  }
  if (open === null) return t;
  const rest = t.slice(open.at + open.width);
  if (rest.trim() && (TEX_HINT.test(rest) || /^[A-Za-z(\\]/.test(rest))) return t.trimEnd() + '$'.repeat(open.width);
  t = t.slice(0, open.at) + '\\$'.repeat(open.width) + rest;
  return t;
}

/**
 * A one-line text split into plain and math segments, after `healMath`. A
 * literal `\$` reads as `$` in a text segment. Empty math (`$$`) is dropped.
 */
export function splitMath(text: string): MathSegment[] {
  const healed = healMath(text);
  const out: MathSegment[] = [];
  let plain = '';
  const flush = () => {
    if (plain) out.push({ kind: 'text', text: plain });
    plain = '';
  };
  let i = 0;
  while (i < healed.length) {
    const c = healed[i];
    if (c === '\\' && healed[i + 1] === '$') {
      plain += '$';
      i += 2;
      continue;
    }
    if (c === '$') {
      const display = healed[i + 1] === '$';
      const delim = display ? '$$' : '$';
      const start = i + delim.length;
      let end = -1;
      for (let j = start; j < healed.length; j++) {
        if (healed[j] === '\\') {
          j++;
          continue;
        }
        if (healed.startsWith(delim, j)) {
          end = j;
          break;
        }
      }
      if (end === -1) {
        // cannot happen after healing; keep the text readable all the same
        plain += healed.slice(i);
        break;
      }
      flush();
      const tex = healed.slice(start, end).trim();
      if (tex) out.push({ kind: 'math', tex, display });
      i = end + delim.length;
      continue;
    }
    plain += c;
    i++;
  }
  flush();
  return out;
}

const TEX_WORDS: Record<string, string> = {
  to: '→', rightarrow: '→', Rightarrow: '⇒', implies: '⇒', leftarrow: '←', iff: '⇔', mapsto: '↦',
  le: '≤', leq: '≤', ge: '≥', geq: '≥', ne: '≠', neq: '≠', approx: '≈', equiv: '≡', sim: '~',
  cdot: '·', times: '×', div: '÷', pm: '±', mp: '∓', infty: '∞', partial: '∂', nabla: '∇',
  in: '∈', notin: '∉', subset: '⊂', subseteq: '⊆', cup: '∪', cap: '∩', emptyset: '∅', forall: '∀',
  exists: '∃', neg: '¬', land: '∧', lor: '∨', wedge: '∧', vee: '∨', sum: 'Σ', prod: 'Π', int: '∫',
  oint: '∮', ldots: '…', cdots: '⋯', dots: '…', circ: '∘', degree: '°', prime: '′',
  alpha: 'α', beta: 'β', gamma: 'γ', delta: 'δ', epsilon: 'ε', varepsilon: 'ε', zeta: 'ζ', eta: 'η',
  theta: 'θ', iota: 'ι', kappa: 'κ', lambda: 'λ', mu: 'μ', nu: 'ν', xi: 'ξ', pi: 'π', rho: 'ρ',
  sigma: 'σ', tau: 'τ', phi: 'φ', varphi: 'φ', chi: 'χ', psi: 'ψ', omega: 'ω',
  Gamma: 'Γ', Delta: 'Δ', Theta: 'Θ', Lambda: 'Λ', Xi: 'Ξ', Pi: 'Π', Sigma: 'Σ', Phi: 'Φ', Psi: 'Ψ', Omega: 'Ω',
  lim: 'lim', sin: 'sin', cos: 'cos', tan: 'tan', log: 'log', ln: 'ln', exp: 'exp', max: 'max', min: 'min',
  det: 'det', gcd: 'gcd', deg: 'deg', quad: ' ', qquad: ' ', ',': ' ', ';': ' ', '!': '', ' ': ' ',
  left: '', right: '', displaystyle: '', mathrm: '', mathbf: '', mathit: '', text: '', operatorname: '',
  lbrace: '{', rbrace: '}', langle: '⟨', rangle: '⟩', vert: '|', mid: '|',
};
const SUPERSCRIPTS: Record<string, string> = {
  '0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹',
  '+': '⁺', '-': '⁻', '=': '⁼', '(': '⁽', ')': '⁾', n: 'ⁿ', i: 'ⁱ',
};
const SUBSCRIPTS: Record<string, string> = {
  '0': '₀', '1': '₁', '2': '₂', '3': '₃', '4': '₄', '5': '₅', '6': '₆', '7': '₇', '8': '₈', '9': '₉',
  '+': '₊', '-': '₋', '=': '₌', '(': '₍', ')': '₎',
};

/** The `{...}` group starting at `s[i]` (`i` on the `{`): [inner text, index after it]. */
function group(s: string, i: number): [string, number] {
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    if (s[j] === '{') depth++;
    else if (s[j] === '}' && --depth === 0) return [s.slice(i + 1, j), j + 1];
  }
  return [s.slice(i + 1), s.length];
}

/** One argument of a command or script at `s[i]`: a braced group, a command, or one character. */
function argument(s: string, i: number): [string, number] {
  while (s[i] === ' ') i++;
  if (s[i] === '{') return group(s, i);
  if (s[i] === '\\') {
    const m = /^\\([A-Za-z]+|.)/.exec(s.slice(i));
    if (m) return [m[0], i + m[0].length];
  }
  return [s[i] ?? '', i + 1];
}

function scripted(text: string, table: Record<string, string>, mark: string): string {
  const chars = [...text];
  if (chars.length && chars.every((c) => table[c] !== undefined)) return chars.map((c) => table[c]).join('');
  return chars.length === 1 ? `${mark}${text}` : `${mark}(${text})`;
}

/** TeX as readable plain text: commands mapped to symbols or words, fractions and roots spelled out. */
function texToPlain(tex: string): string {
  let out = '';
  let i = 0;
  while (i < tex.length) {
    const c = tex[i];
    if (c === '\\') {
      const m = /^\\([A-Za-z]+|.)/.exec(tex.slice(i));
      const name = m ? m[1] : '';
      i += m ? m[0].length : 1;
      if (name === 'frac' || name === 'dfrac' || name === 'tfrac') {
        const [a, j] = argument(tex, i);
        const [b, k] = argument(tex, j);
        i = k;
        const num = texToPlain(a);
        const den = texToPlain(b);
        const wrap = (x: string) => (x.length > 1 && /[^\w.′]/.test(x) ? `(${x})` : x);
        out += `${wrap(num)}/${wrap(den)}`;
      } else if (name === 'sqrt') {
        const [a, j] = argument(tex, i);
        i = j;
        const inner = texToPlain(a);
        out += inner.length > 1 ? `√(${inner})` : `√${inner}`;
      } else if (name in TEX_WORDS) {
        const word = TEX_WORDS[name];
        // an operator name followed by a letter needs a space ("\sin x" -> "sin x")
        out += /^[a-z]{2,}$/.test(word) && /^\s*[A-Za-z0-9(]/.test(tex.slice(i)) ? `${word} ` : word;
        if (/^[a-z]{2,}$/.test(word)) while (tex[i] === ' ') i++;
      } else if (name === '{' || name === '}' || name === '$' || name === '%' || name === '&' || name === '_' || name === '#') {
        out += name;
      } else {
        out += name; // an unknown command: its name reads better than nothing
      }
    } else if (c === '^' || c === '_') {
      const [a, j] = argument(tex, i + 1);
      i = j;
      out += scripted(texToPlain(a), c === '^' ? SUPERSCRIPTS : SUBSCRIPTS, c === '^' ? '^' : '_');
    } else if (c === '{' || c === '}') {
      i++;
    } else if (c === '~') {
      out += ' ';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out.replace(/\s+/g, ' ').trim();
}

/**
 * A one-line text with its math turned into readable plain text, for places
 * that cannot typeset (the graph canvas's labels, a title attribute): the `$`
 * delimiters go, `\lim_{h \to 0}` reads "lim_(h → 0)", `\frac{a}{b}` "a/b",
 * `x^2` "x²". Never contains a `$` that came from a delimiter.
 */
export function plainMath(text: string): string {
  if (!text.includes('$') && !text.includes('\\(') && !text.includes('\\[')) return text;
  return splitMath(text)
    .map((s) => (s.kind === 'text' ? s.text : texToPlain(s.tex)))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
}
