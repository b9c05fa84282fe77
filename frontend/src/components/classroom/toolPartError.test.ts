// A failed tool call in the transcript speaks plain words (a new-user trial read "The model's tool
// call failed: … (quiz)" as jargon): what went wrong, and that the model may try again.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ToolPart } from '../../core/toolParts';
import ToolPartView from './ToolPartView';

function failed(type: string, errorText: string): ToolPart {
  return { type, toolCallId: 'call_1', state: 'output-error', input: {}, errorText } as unknown as ToolPart;
}

describe('a failed tool call', () => {
  it('says what went wrong in plain words, without the tool name', () => {
    for (const type of ['tool-list_sessions', 'tool-probe_done']) {
      const html = renderToStaticMarkup(
        createElement(ToolPartView, { part: failed(type, 'its answer could not be read as a quiz (invalid JSON)'), pending: false }),
      );
      expect(html).toContain('did not work (its answer could not be read as a quiz (invalid JSON)); it may try again.');
      expect(html).not.toContain('tool call');
      expect(html).not.toMatch(/\((probe_done|list_sessions)\)/);
    }
  });
});

describe('a refused draft plan', () => {
  it('shows the friendly line only, never the text meant for the model', () => {
    const modelText = 'plan_init failed: lines 2, 3: the plan has a cycle (a → b → a). Fix the mermaid and call plan_init again.';
    const html = renderToStaticMarkup(createElement(ToolPartView, { part: failed('tool-plan_init', modelText), pending: false }));
    expect(html).toContain('A draft plan was refused; the teacher is revising it.');
    expect(html).not.toContain('plan_init');
    expect(html).not.toContain('mermaid');
    expect(html).not.toContain('cycle');
  });
});

describe('a question sent back to the teacher', () => {
  it('shows one plain line, never the instructions meant for the model or their markup', () => {
    const modelText =
      "option 3 ('-3.00,\"False &#39;') is not words: markup (&#). Each option must be a plain answer a learner can read. Call the tool again with fixed options.";
    for (const type of ['tool-quiz', 'tool-ask_user_question']) {
      const html = renderToStaticMarkup(createElement(ToolPartView, { part: failed(type, modelText), pending: false }));
      expect(html).toContain('A draft question was sent back; the teacher is writing it again.');
      expect(html).not.toContain('Call the tool again');
      expect(html).not.toContain('&amp;#39;');
      expect(html).not.toContain('option 3');
    }
  });

  it('an instruction to the model from any tool is not shown either', () => {
    const html = renderToStaticMarkup(
      createElement(ToolPartView, { part: failed('tool-list_propositions', "no session 'x' in the graph; call list_sessions for the ids"), pending: false }),
    );
    expect(html).toContain('was sent back; it is trying again.');
    expect(html).not.toContain('list_sessions');
  });
});
