import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AnswerRejected, displayOrder, fnv1a32, gradeQuiz, mulberry32, parseQuizInput, settleAnswer } from './questions';

// The shared vectors (tests/vectors/generate.py); the Python core passes the same file.
interface QuestionVectors {
  anchors: { fnv1a32: Record<string, number>; mulberry32_seed1: number[] };
  fnv1a32: Record<string, number>;
  shuffles: { toolCallId: string; count: number; order: number[] }[];
  answers: { name: string; tool: string; input: unknown; output: unknown; result?: unknown; error?: boolean }[];
}

const vectors = JSON.parse(
  readFileSync(new URL('../../../../tests/vectors/questions.json', import.meta.url), 'utf8'),
) as QuestionVectors;

describe('vectors: anchors', () => {
  it('fnv1a32 reference values', () => {
    for (const [text, hash] of Object.entries(vectors.anchors.fnv1a32)) expect(fnv1a32(text)).toBe(hash);
  });

  it('mulberry32 seeded with 1', () => {
    const rand = mulberry32(1);
    for (const value of vectors.anchors.mulberry32_seed1) expect(rand()).toBe(value);
  });
});

describe('vectors: fnv1a32 of call ids (UTF-8 bytes)', () => {
  it.each(Object.entries(vectors.fnv1a32))('%j', (text, hash) => {
    expect(fnv1a32(text)).toBe(hash);
  });
});

describe('vectors: shuffles', () => {
  it.each(vectors.shuffles.map((s) => [s.toolCallId, s.count, s.order] as const))('%j x %i', (id, count, order) => {
    expect(displayOrder(id, count)).toEqual(order);
  });
});

describe('vectors: answers', () => {
  it.each(vectors.answers.map((a) => [a.name, a] as const))('%s', (_name, a) => {
    if (a.error) {
      expect(() => settleAnswer(a.tool, a.input, a.output)).toThrow(AnswerRejected);
    } else {
      expect(settleAnswer(a.tool, a.input, a.output)).toEqual(a.result);
    }
  });
});

describe('displayOrder', () => {
  it('is a permutation and deterministic', () => {
    const order = displayOrder('call_xyz', 5);
    expect([...order].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(displayOrder('call_xyz', 5)).toEqual(order);
  });
});

describe('parseQuizInput / gradeQuiz', () => {
  const quiz = { question: 'Q?', options: [' a ', 'b'], correct: 0, explanation: 'because' };

  it('trims options and defaults node', () => {
    expect(parseQuizInput(quiz)).toEqual({ question: 'Q?', options: ['a', 'b'], correct: 0, explanation: 'because', node: null });
  });

  it('rejects duplicates, blanks, extra fields and too few options', () => {
    expect(() => parseQuizInput({ ...quiz, options: ['a', ' a'] })).toThrow(/distinct/);
    expect(() => parseQuizInput({ ...quiz, options: ['a', '  '] })).toThrow(/blank/);
    expect(() => parseQuizInput({ ...quiz, extra: 1 })).toThrow(/unexpected/);
    expect(() => parseQuizInput({ ...quiz, options: ['a'] })).toThrow(/between 2 and 6/);
  });

  it('grades by authored index', () => {
    expect(gradeQuiz({ options: ['x', 'y'], correct: 1 }, 1)).toEqual({
      kind: 'quiz',
      chosen: 1,
      chosenText: 'y',
      correct: true,
      correctIndex: 1,
      correctText: 'y',
    });
    expect(() => gradeQuiz({ options: ['x', 'y'], correct: 1 }, 2)).toThrow(AnswerRejected);
  });

  it('rejects unknown tools', () => {
    expect(() => settleAnswer('plan_init', {}, {})).toThrow(/not a question tool/);
  });
});
