import { describe, expect, it } from 'vitest';
import { lastMessageOnly, turnRequestBody } from './turnRequest';

interface Msg {
  id: string;
  role: 'user' | 'assistant';
  parts: unknown[];
}

const LEARNER = 'Could you show me why the chain rule multiplies derivatives?';
const TEACHER = 'Think of the inner function as a machine that stretches its input by a local factor. '.repeat(4).slice(0, 380);

function history(n: number): Msg[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { id: `m${i}`, role: 'user', parts: [{ type: 'text', text: LEARNER }] }
      : { id: `m${i}`, role: 'assistant', parts: [{ type: 'text', text: TEACHER }] },
  );
}

function user(id: string, text: string): Msg {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

describe('turnRequestBody', () => {
  it('sends a new learner message alone, with the session id and trigger', () => {
    const sent = user('u_new', 'And what about cos(x^3)?');
    const body = turnRequestBody({ id: 'c_1', messages: [...history(6), sent], trigger: 'submit-message', body: {} });
    expect(body).toEqual({ id: 'c_1', trigger: 'submit-message', messages: [sent] });
    expect('messageId' in body).toBe(false);
  });

  it('sends the answered assistant message (addToolOutput) alone', () => {
    const answered: Msg = {
      id: 'm5',
      role: 'assistant',
      parts: [
        { type: 'text', text: 'Quick check:' },
        { type: 'tool-quiz', toolCallId: 'q1', state: 'output-available', input: { question: '2+2?' }, output: { answer: '4' } },
      ],
    };
    const body = turnRequestBody({ id: 'c_1', messages: [...history(5), answered], trigger: 'submit-message' });
    expect(body.messages).toEqual([answered]);
    expect(body.messages[0]).toBe(answered);
  });

  it('keeps trigger and messageId of a regenerate (the learner message it re-asks)', () => {
    const messages = history(8).slice(0, 7); // the SDK dropped the reply being regenerated
    const body = turnRequestBody({ id: 'c_1', messages, trigger: 'regenerate-message', messageId: 'm7' });
    expect(body).toEqual({ id: 'c_1', trigger: 'regenerate-message', messageId: 'm7', messages: [messages[6]] });
    expect(body.messages[0].role).toBe('user');
  });

  it('keeps the other fields the transport sends, but never lets them replace the turn fields', () => {
    const body = turnRequestBody({
      id: 'c_1',
      messages: history(3),
      trigger: 'submit-message',
      body: { extra: 1, id: 'wrong', messages: [] },
    });
    expect(body.extra).toBe(1);
    expect(body.id).toBe('c_1');
    expect(body.messages).toHaveLength(1);
  });

  it('costs the same at message 10,000 as at message 10', () => {
    const sizeAt = (n: number) =>
      JSON.stringify(turnRequestBody({ id: 'c_1', messages: [...history(n), user('u_new', LEARNER)], trigger: 'submit-message' })).length;
    expect(sizeAt(10_000)).toBe(sizeAt(10));
    expect(sizeAt(10_000)).toBeLessThan(1_000);
  });
});

describe('lastMessageOnly', () => {
  it('is the last message, or nothing', () => {
    expect(lastMessageOnly([1, 2, 3])).toEqual([3]);
    expect(lastMessageOnly([])).toEqual([]);
  });
});
