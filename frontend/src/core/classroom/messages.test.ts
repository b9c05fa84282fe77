import { describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import { canRegenerate, hasVisibleText, messageText, normalizeMessages, showTypingIndicator } from './messages';

const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] };
const emptyAssistant: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }] };
const assistant: UIMessage = {
  id: 'a2',
  role: 'assistant',
  parts: [{ type: 'step-start' }, { type: 'text', text: 'Hello' }, { type: 'text', text: 'there' }],
};

describe('normalizeMessages', () => {
  it('keeps valid UIMessages untouched', () => {
    expect(normalizeMessages([user, assistant])).toEqual([user, assistant]);
  });

  it('drops junk and fills ids, converts legacy content', () => {
    const out = normalizeMessages([
      null,
      'x',
      { role: 'robot', parts: [] },
      { role: 'assistant', content: 'legacy' },
      { id: 'k', role: 'user', parts: [{ type: 'text', text: 'a' }, 7, { nope: 1 }] },
      { role: 'user' },
    ]);
    expect(out).toEqual([
      { id: 'msg-3', role: 'assistant', content: 'legacy', parts: [{ type: 'text', text: 'legacy' }] },
      { id: 'k', role: 'user', parts: [{ type: 'text', text: 'a' }] },
      { id: 'msg-5', role: 'user', parts: [] },
    ]);
  });

  it('returns [] for a non-array', () => {
    expect(normalizeMessages(undefined)).toEqual([]);
    expect(normalizeMessages({})).toEqual([]);
  });
});

describe('messageText / hasVisibleText', () => {
  it('joins text parts', () => {
    expect(messageText(assistant)).toBe('Hello\n\nthere');
    expect(messageText(emptyAssistant)).toBe('');
  });

  it('detects visible text', () => {
    expect(hasVisibleText(assistant)).toBe(true);
    expect(hasVisibleText(emptyAssistant)).toBe(false);
    expect(hasVisibleText({ parts: [{ type: 'text', text: '  ' }] })).toBe(false);
    expect(hasVisibleText({ parts: [{ type: 'reasoning', text: 'hmm' }] })).toBe(true);
  });
});

describe('showTypingIndicator', () => {
  it('shows while submitted', () => {
    expect(showTypingIndicator('submitted', [user])).toBe(true);
  });

  it('shows while streaming until the assistant has text', () => {
    expect(showTypingIndicator('streaming', [user])).toBe(true);
    expect(showTypingIndicator('streaming', [user, emptyAssistant])).toBe(true);
    expect(showTypingIndicator('streaming', [user, assistant])).toBe(false);
  });

  it('hides when ready or in error', () => {
    expect(showTypingIndicator('ready', [user])).toBe(false);
    expect(showTypingIndicator('error', [user])).toBe(false);
  });
});

describe('canRegenerate', () => {
  const learner = { role: 'user' as const, parts: [{ type: 'text' as const, text: 'Teach me heaps' }] };
  const reply = { role: 'assistant' as const, parts: [{ type: 'text' as const, text: 'A heap is…' }] };
  const steer = { role: 'user' as const, parts: [{ type: 'data-subagent-artifact', data: {} }] } as unknown as typeof learner;

  it('offers the last reply to a learner message once no turn runs', () => {
    expect(canRegenerate('ready', [learner, reply])).toBe(true);
    expect(canRegenerate('error', [learner, reply])).toBe(true);
  });

  it('not while a turn runs, nor for a reply to a steer, nor without a reply', () => {
    expect(canRegenerate('streaming', [learner, reply])).toBe(false);
    expect(canRegenerate('submitted', [learner, reply])).toBe(false);
    expect(canRegenerate('ready', [learner, reply, steer, reply])).toBe(false);
    expect(canRegenerate('ready', [learner])).toBe(false);
    expect(canRegenerate('ready', [reply])).toBe(false);
    expect(canRegenerate('ready', [])).toBe(false);
  });
});
