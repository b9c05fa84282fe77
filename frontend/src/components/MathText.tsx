import katex from 'katex';
import { memo, useMemo } from 'react';
import { splitMath } from '../core/math';

// Typeset TeX once per distinct string (labels repeat across renders and rows).
const cache = new Map<string, string>();
const CACHE_MAX = 2000;

function typeset(tex: string): string {
  let html = cache.get(tex);
  if (html === undefined) {
    html = katex.renderToString(tex, { throwOnError: false, strict: false, displayMode: false });
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(tex, html);
  }
  return html;
}

/**
 * A one-line text (a label, a name, a statement, an answer) with its math
 * typeset by KaTeX: `$..$`, `$$..$$` (kept inline), `\(..\)`; unbalanced `$`
 * healed first (core/math.ts `healMath`). No Markdown: the text stays one run
 * of words, so it fits buttons, chips, headings and list rows. The KaTeX
 * stylesheet is loaded in main.tsx.
 */
function MathTextImpl({ text, className }: { text: string; className?: string }) {
  const segments = useMemo(() => splitMath(text), [text]);
  if (segments.length === 1 && segments[0].kind === 'text') {
    return className ? <span className={className}>{segments[0].text}</span> : <>{segments[0].text}</>;
  }
  return (
    <span className={className ? `math-text ${className}` : 'math-text'}>
      {segments.map((s, i) =>
        s.kind === 'text' ? <span key={i}>{s.text}</span> : <span key={i} className="math-inline" dangerouslySetInnerHTML={{ __html: typeset(s.tex) }} />,
      )}
    </span>
  );
}

const MathText = memo(MathTextImpl);
export default MathText;
