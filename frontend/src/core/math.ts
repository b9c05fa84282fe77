// remark-math understands $...$ and $$...$$ (display math only when the $$
// fences stand on their own lines). Models often write LaTeX with \( ... \),
// \[ ... \] or a one-line $$ ... $$; rewrite those (outside code) so they
// render, the last two as display math.

// Code spans and fenced blocks (a fence still open at the end of a streaming
// message counts as code up to the end).
const CODE = /(```[\s\S]*?(?:```|$)|~~~[\s\S]*?(?:~~~|$)|`[^`\n]+`)/g;

function rewriteText(text: string): string {
  return text
    .replace(/\\\[([\s\S]+?)\\\]/g, (_m, body: string) => `\n$$\n${body.trim()}\n$$\n`)
    .replace(/\\\(([\s\S]+?)\\\)/g, (_m, body: string) => `$${body.trim()}$`)
    .replace(/^([ \t]*)\$\$([^\n$][^\n]*?)\$\$[ \t]*$/gm, (_m, indent: string, body: string) => `${indent}$$\n${indent}${body.trim()}\n${indent}$$`);
}

export function normalizeMathDelimiters(markdown: string): string {
  if (!markdown.includes('\\(') && !markdown.includes('\\[') && !markdown.includes('$$')) return markdown;
  return markdown
    .split(CODE)
    .map((segment, i) => (i % 2 === 1 ? segment : rewriteText(segment)))
    .join('');
}
