import { describe, expect, it } from 'vitest';
import type { MessageLike } from '../toolParts';
import { answeredQuestionIds, answersById, pendingQuestions } from './transcript';

const quiz = (id: string, state: string) => ({
  type: 'tool-quiz',
  toolCallId: id,
  state,
  input: { question: 'Q', options: ['a', 'b'], correct: 0, explanation: 'e' },
});
const ask = (id: string, state: string) => ({ type: 'tool-ask_user_question', toolCallId: id, state, input: { question: 'Q' } });

describe('pendingQuestions', () => {
  it('returns pending quiz/ask parts of the last assistant message', () => {
    const messages: MessageLike[] = [
      { id: 'a0', role: 'assistant', parts: [quiz('old', 'input-available')] },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          quiz('q1', 'output-available'),
          quiz('q2', 'input-available'),
          ask('k1', 'input-available'),
          quiz('q3', 'input-streaming'),
          { type: 'tool-plan_init', toolCallId: 'p', state: 'input-available' },
        ],
      },
    ];
    expect(pendingQuestions(messages).map((q) => [q.tool, q.part.toolCallId])).toEqual([
      ['quiz', 'q2'],
      ['ask_user_question', 'k1'],
    ]);
  });

  it('is empty when the learner spoke last', () => {
    expect(
      pendingQuestions([
        { id: 'a', role: 'assistant', parts: [quiz('q', 'input-available')] },
        { id: 'u', role: 'user', parts: [{ type: 'text', text: 'skip' }] },
      ]),
    ).toEqual([]);
    expect(pendingQuestions([])).toEqual([]);
  });
});

describe('answeredQuestionIds', () => {
  it('lists answered question calls', () => {
    expect(
      answeredQuestionIds({ id: 'a', role: 'assistant', parts: [quiz('q1', 'output-available'), ask('k', 'input-available')] }),
    ).toEqual(['q1']);
    expect(answeredQuestionIds(undefined)).toEqual([]);
  });
});

describe('answersById', () => {
  it('maps answered question calls to their outputs', () => {
    const answered = { ...quiz('q1', 'output-available'), output: { kind: 'quiz', chosen: 1 } };
    const map = answersById([
      { id: 'a', role: 'assistant', parts: [answered, quiz('q2', 'input-available')] },
      { id: 'u', role: 'user', parts: [{ ...answered, toolCallId: 'qx' }] },
    ]);
    expect([...map.entries()]).toEqual([['q1', { kind: 'quiz', chosen: 1 }]]);
  });
});
