import './markdown.css';
import { memo } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import rehypeKatex from 'rehype-katex';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import { healMath, normalizeMathDelimiters } from '../core/math';
import { scrollToAnchor } from './scroll';

const remarkPlugins: Options['remarkPlugins'] = [remarkGfm, remarkMath];
const rehypePlugins: Options['rehypePlugins'] = [[rehypeKatex, { throwOnError: false, strict: false }]];

const components: Components = {
  // Links from the model open in a new tab and never get the opener. An in-page link (a research
  // card's [n] citation) scrolls to its target instead, leaving the URL alone.
  a: ({ node: _node, href, ...props }) =>
    href?.startsWith('#') ? (
      <a
        {...props}
        href={href}
        onClick={(e) => {
          if (scrollToAnchor(href.slice(1))) e.preventDefault();
        }}
      />
    ) : (
      <a {...props} href={href} target="_blank" rel="noreferrer noopener" />
    ),
};

// For short texts inside buttons and lines (quiz options): paragraphs become spans, and
// unbalanced `$` are healed first (core/math.ts healMath, the display seam).
const inlineComponents: Components = {
  ...components,
  p: ({ node: _node, ...props }) => <span {...props} />,
};

function MarkdownImpl({ text, inline = false }: { text: string; inline?: boolean }) {
  if (inline) {
    return (
      <span className="markdown markdown-inline">
        <ReactMarkdown remarkPlugins={remarkPlugins} rehypePlugins={rehypePlugins} components={inlineComponents}>
          {normalizeMathDelimiters(healMath(text))}
        </ReactMarkdown>
      </span>
    );
  }
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={remarkPlugins} rehypePlugins={rehypePlugins} components={components}>
        {normalizeMathDelimiters(text)}
      </ReactMarkdown>
    </div>
  );
}

const Markdown = memo(MarkdownImpl);
export default Markdown;
