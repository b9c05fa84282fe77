import { memo } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import rehypeKatex from 'rehype-katex';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import { normalizeMathDelimiters } from '../core/math';

const remarkPlugins: Options['remarkPlugins'] = [remarkGfm, remarkMath];
const rehypePlugins: Options['rehypePlugins'] = [[rehypeKatex, { throwOnError: false, strict: false }]];

const components: Components = {
  // Links from the model open in a new tab and never get the opener.
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
};

// For short texts inside buttons and lines (quiz options): paragraphs become spans.
const inlineComponents: Components = {
  ...components,
  p: ({ node: _node, ...props }) => <span {...props} />,
};

function MarkdownImpl({ text, inline = false }: { text: string; inline?: boolean }) {
  if (inline) {
    return (
      <span className="markdown markdown-inline">
        <ReactMarkdown remarkPlugins={remarkPlugins} rehypePlugins={rehypePlugins} components={inlineComponents}>
          {normalizeMathDelimiters(text)}
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
