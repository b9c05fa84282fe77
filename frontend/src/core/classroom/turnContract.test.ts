import { describe, expect, it } from 'vitest';
import {
  decideRecovery,
  hasUnsentAnswer,
  mayFollow,
  mergeUnsent,
  needsExternalRead,
  retryDelay,
  withLocalInput,
  withResumeBase,
} from './turnContract';
import type { MessageLike } from '../toolParts';
import { awaitsContinuation } from './transcript';

const user = (id: string): MessageLike => ({ id, role: 'user', parts: [{ type: 'text', text: id }] });
const quiz = (id: string, state: string, output?: unknown) => ({
  type: 'tool-quiz',
  toolCallId: id,
  state,
  input: { question: 'Q', options: ['a', 'b'], correct: 0, explanation: 'e' },
  ...(output ? { output } : {}),
});
const pendingA: MessageLike = { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, quiz('q1', 'input-available')] };
const answeredA: MessageLike = {
  id: 'a1',
  role: 'assistant',
  parts: [{ type: 'step-start' }, quiz('q1', 'output-available', { kind: 'quiz', chosen: 0 })],
};

describe('retryDelay', () => {
  it('backs off 500, 1000, 2000, then 5000', () => {
    expect([0, 1, 2, 3, 4, 10].map(retryDelay)).toEqual([500, 1000, 2000, 5000, 5000, 5000]);
  });
});

describe('mergeUnsent', () => {
  it('keeps the record and appends local messages it lacks', () => {
    const merged = mergeUnsent([user('u1'), pendingA], [user('u1'), user('u2')]);
    expect(merged.map((m) => m.id)).toEqual(['u1', 'a1', 'u2']);
    expect(merged[1]).toBe(pendingA);
  });
});

describe('decideRecovery: answers', () => {
  it('resends only while the question is still pending and nothing runs', () => {
    const decision = decideRecovery({ messages: [user('u1'), pendingA], running: false }, [user('u1'), answeredA]);
    expect(decision).toEqual({ kind: 'resend', messages: [user('u1'), answeredA] });
  });

  it('syncs when the answer was already taken and the teacher went on', () => {
    const continued: MessageLike = { ...answeredA, parts: [...answeredA.parts, { type: 'text', text: 'Right.' }] };
    expect(decideRecovery({ messages: [user('u1'), continued], running: false }, [user('u1'), answeredA])).toEqual({ kind: 'sync' });
  });

  it('continues from the record when the answer was saved but the teacher never went on (no stranded lesson)', () => {
    expect(decideRecovery({ messages: [user('u1'), answeredA], running: false }, [user('u1'), answeredA])).toEqual({
      kind: 'resend',
      messages: [user('u1'), answeredA],
    });
    // also after a reload, when the local copy is the record itself
    expect(decideRecovery({ messages: [user('u1'), answeredA], running: false }, [user('u1')])).toEqual({
      kind: 'resend',
      messages: [user('u1'), answeredA],
    });
    expect(awaitsContinuation([user('u1'), answeredA])).toBe(true);
    expect(awaitsContinuation([user('u1'), pendingA])).toBe(false);
    expect(awaitsContinuation([user('u1'), { ...answeredA, parts: [...answeredA.parts, { type: 'step-start' }] }])).toBe(true);
    expect(awaitsContinuation([user('u1')])).toBe(false);
  });

  it('follows when the answer was taken and the turn runs', () => {
    expect(decideRecovery({ messages: [user('u1'), answeredA], running: true }, [user('u1'), answeredA])).toEqual({ kind: 'follow' });
  });

  it('waits while another turn runs and the question is still pending', () => {
    expect(decideRecovery({ messages: [user('u1'), pendingA], running: true }, [user('u1'), answeredA])).toEqual({ kind: 'wait' });
  });

  it('syncs when the learner moved on in the record', () => {
    expect(decideRecovery({ messages: [user('u1'), pendingA, user('u9')], running: false }, [user('u1'), answeredA])).toEqual({
      kind: 'sync',
    });
  });
});

describe('decideRecovery: learner messages', () => {
  it('resends a message the record lacks (merged after the record)', () => {
    const d = decideRecovery({ messages: [user('u1'), pendingA], running: false }, [user('u1'), user('u2')]);
    expect(d).toEqual({ kind: 'resend', messages: [user('u1'), pendingA, user('u2')] });
  });

  it('waits while another turn runs', () => {
    expect(decideRecovery({ messages: [user('u1')], running: true }, [user('u1'), user('u2')])).toEqual({ kind: 'wait' });
  });

  it('follows its own running turn, syncs an answered one, resends an unanswered last one', () => {
    expect(decideRecovery({ messages: [user('u1'), user('u2')], running: true }, [user('u1'), user('u2')])).toEqual({ kind: 'follow' });
    expect(decideRecovery({ messages: [user('u2'), pendingA], running: false }, [user('u2')])).toEqual({ kind: 'sync' });
    expect(decideRecovery({ messages: [user('u2')], running: false }, [user('u2')])).toEqual({ kind: 'resend', messages: [user('u2')] });
  });

  it('syncs when there is nothing to send', () => {
    expect(decideRecovery({ messages: [], running: false }, [])).toEqual({ kind: 'sync' });
  });
});

describe('hasUnsentAnswer', () => {
  it('needs an answer given here on the last message', () => {
    expect(hasUnsentAnswer([user('u1'), answeredA], new Set(['q1']))).toBe(true);
    expect(hasUnsentAnswer([user('u1'), answeredA], new Set())).toBe(false);
    expect(hasUnsentAnswer([user('u1'), pendingA], new Set(['q1']))).toBe(false);
    expect(hasUnsentAnswer([answeredA, user('u2')], new Set(['q1']))).toBe(false);
  });
});

describe('withResumeBase', () => {
  const base: MessageLike = answeredA;
  const replayed: MessageLike = { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'next' }] };

  it('puts the record parts in front of a replayed continuation', () => {
    const out = withResumeBase([user('u1'), replayed], base);
    expect(out[1].parts).toEqual([...base.parts, ...replayed.parts]);
  });

  it('leaves complete messages and other ids alone', () => {
    const full: MessageLike = { ...replayed, parts: [...base.parts, ...replayed.parts] };
    expect(withResumeBase([user('u1'), full], base)[1]).toBe(full);
    expect(withResumeBase([user('u1'), base], base)[1]).toBe(base);
    const other = { ...replayed, id: 'zz' };
    expect(withResumeBase([other], base)[0]).toBe(other);
    expect(withResumeBase([other], null)[0]).toBe(other);
  });
});

describe('withLocalInput', () => {
  it('replaces the record copy of our answered message, appends unsent messages', () => {
    expect(withLocalInput([user('u1'), pendingA], [user('u1'), answeredA])).toEqual([user('u1'), answeredA]);
    expect(withLocalInput([user('u1'), pendingA], [user('u1'), user('u2')]).map((m) => m.id)).toEqual(['u1', 'a1', 'u2']);
  });
});

describe('mayFollow / needsExternalRead: one automatic follow per turn', () => {
  const view = { idle: true, waiting: false, knownUpdatedAt: 't0', followed: null as string | null };

  it('follows a running turn once, and a later turn again', () => {
    expect(mayFollow({ running: true, updatedAt: 't1' }, null)).toBe(true);
    expect(mayFollow({ running: true, updatedAt: 't1' }, 't1')).toBe(false); // that turn's follow failed
    expect(mayFollow({ running: true, updatedAt: 't2' }, 't1')).toBe(true); // the next turn
    expect(mayFollow({ running: false, updatedAt: 't2' }, null)).toBe(false); // nothing runs
  });

  it('reads a running row only while its turn was not followed yet (no loop on error)', () => {
    const row = { running: true, updatedAt: 't1' };
    expect(needsExternalRead(row, view)).toBe(true);
    expect(needsExternalRead(row, { ...view, followed: 't1' })).toBe(false);
    expect(needsExternalRead({ running: true, updatedAt: 't3' }, { ...view, followed: 't1' })).toBe(true);
  });

  it('reads an idle row only when it changed since the record was shown', () => {
    expect(needsExternalRead({ running: false, updatedAt: 't0' }, view)).toBe(false);
    expect(needsExternalRead({ updatedAt: 't0' }, view)).toBe(false);
    expect(needsExternalRead({ running: false, updatedAt: 't1' }, view)).toBe(true);
    expect(needsExternalRead({ running: false, updatedAt: 't1' }, { ...view, followed: 't1' })).toBe(true);
  });

  it('never reads while this view is busy or waiting, or has no row', () => {
    const row = { running: true, updatedAt: 't1' };
    expect(needsExternalRead(row, { ...view, idle: false })).toBe(false);
    expect(needsExternalRead(row, { ...view, waiting: true })).toBe(false);
    expect(needsExternalRead(undefined, view)).toBe(false);
  });
});
