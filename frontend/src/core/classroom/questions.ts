// Question core: seeded option shuffling and quiz grading, mirrored from
// server/core/classroom/questions.py. Both sides pass tests/vectors/questions.json, so
// the dock's option order and verdict equal the server's.
//
// The shuffle is Fisher-Yates driven by mulberry32, seeded with the 32-bit
// FNV-1a hash of the tool call id's UTF-8 bytes (all unsigned 32-bit maths).

export const MAX_OPTIONS = 6;
export const QUESTION_TOOLS = ['quiz', 'ask_user_question'] as const;
export type QuestionTool = (typeof QUESTION_TOOLS)[number];

export interface QuizInput {
  question: string;
  options: string[];
  correct: number;
  explanation: string;
  node: string | null;
}

export interface AskInput {
  question: string;
  options: string[];
}

export interface QuizResult {
  kind: 'quiz';
  chosen: number;
  chosenText: string;
  correct: boolean;
  correctIndex: number;
  correctText: string;
}

export interface AskResult {
  kind: 'answer';
  answer: string;
  chosen: number | null;
}

/** An answer that does not fit its question (or a malformed question); the message says why. */
export class AnswerRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerRejected';
  }
}

const encoder = new TextEncoder();

/** 32-bit FNV-1a of the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The canonical JavaScript mulberry32: a generator of floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The order the dock shows `count` options in: `order[i]` is the authored
 * index shown at position i. Deterministic per tool call id.
 */
export function displayOrder(toolCallId: string, count: number): number[] {
  const order = Array.from({ length: Math.max(0, count) }, (_, i) => i);
  const rand = mulberry32(fnv1a32(toolCallId));
  for (let i = order.length - 1; i >= 1; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

// ---------------------------------------------------------------------------
// Validation (mirrors the pydantic contracts in server/core/contracts/questions.py)

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python's len() of a str counts code points, not UTF-16 units. */
function pyLen(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function str(obj: Record<string, unknown>, key: string, min: number, max: number): string {
  const value = obj[key];
  if (typeof value !== 'string') throw new AnswerRejected(`${key}: a string is required`);
  const len = pyLen(value);
  if (len < min) throw new AnswerRejected(`${key}: at least ${min} character(s) required`);
  if (len > max) throw new AnswerRejected(`${key}: at most ${max} characters allowed`);
  return value;
}

function int(value: unknown, key: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new AnswerRejected(`${key}: an integer is required`);
  return value;
}

function forbidExtra(obj: Record<string, unknown>, allowed: string[], what: string): void {
  const extra = Object.keys(obj).filter((k) => !allowed.includes(k));
  if (extra.length) throw new AnswerRejected(`${what}: unexpected field ${extra[0]}`);
}

/** Validate a quiz call's input (options are trimmed). Throws AnswerRejected. */
export function parseQuizInput(raw: unknown): QuizInput {
  if (!isRecord(raw)) throw new AnswerRejected('quiz: the question is not an object');
  forbidExtra(raw, ['question', 'options', 'correct', 'explanation', 'node'], 'quiz');
  const question = str(raw, 'question', 1, 4000);
  if (!Array.isArray(raw.options) || raw.options.some((o) => typeof o !== 'string')) {
    throw new AnswerRejected('options: a list of strings is required');
  }
  if (raw.options.length < 2 || raw.options.length > MAX_OPTIONS) {
    throw new AnswerRejected(`options: between 2 and ${MAX_OPTIONS} options required`);
  }
  const options = (raw.options as string[]).map((o) => o.trim());
  if (options.some((o) => !o)) throw new AnswerRejected('options: options must not be blank');
  if (new Set(options).size !== options.length) throw new AnswerRejected('options: options must be distinct');
  if (options.some((o) => pyLen(o) > 1000)) throw new AnswerRejected('options: each option must be at most 1000 characters');
  const correct = int(raw.correct, 'correct');
  if (correct < 0) throw new AnswerRejected('correct: must be >= 0');
  const explanation = str(raw, 'explanation', 1, 4000);
  let node: string | null = null;
  if (raw.node !== undefined && raw.node !== null) node = str(raw, 'node', 0, 64);
  if (correct >= options.length) {
    throw new AnswerRejected(
      `correct is ${correct} but there are ${options.length} options (valid indexes 0..${options.length - 1})`,
    );
  }
  return { question, options, correct, explanation, node };
}

/** Validate an ask_user_question call's input. Throws AnswerRejected. */
export function parseAskInput(raw: unknown): AskInput {
  if (!isRecord(raw)) throw new AnswerRejected('ask_user_question: the question is not an object');
  forbidExtra(raw, ['question', 'options'], 'ask_user_question');
  const question = str(raw, 'question', 1, 2000);
  let options: string[] = [];
  if (raw.options !== undefined) {
    if (!Array.isArray(raw.options) || raw.options.some((o) => typeof o !== 'string')) {
      throw new AnswerRejected('options: a list of strings is required');
    }
    if (raw.options.length > MAX_OPTIONS) throw new AnswerRejected(`options: at most ${MAX_OPTIONS} suggestions allowed`);
    options = raw.options as string[];
  }
  return { question, options };
}

/** The input as a quiz, or null when it is not a valid one (for rendering). */
export function quizInputOrNull(raw: unknown): QuizInput | null {
  try {
    return parseQuizInput(raw);
  } catch {
    return null;
  }
}

export function askInputOrNull(raw: unknown): AskInput | null {
  try {
    return parseAskInput(raw);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// Grading

/** Grade an answer given as an authored index. Throws AnswerRejected when it is no option. */
export function gradeQuiz(quiz: Pick<QuizInput, 'options' | 'correct'>, chosen: number): QuizResult {
  if (!Number.isInteger(chosen) || chosen < 0 || chosen >= quiz.options.length) {
    throw new AnswerRejected(`chosen option ${chosen} does not exist (0..${quiz.options.length - 1})`);
  }
  return {
    kind: 'quiz',
    chosen,
    chosenText: quiz.options[chosen],
    correct: chosen === quiz.correct,
    correctIndex: quiz.correct,
    correctText: quiz.options[quiz.correct],
  };
}

/**
 * Validate a learner's answer against its question and return the canonical
 * tool output (what the server stores). A quiz is re-graded (a client verdict
 * is ignored); an ask answer is trimmed. Throws AnswerRejected.
 */
export function settleAnswer(tool: string, input: unknown, output: unknown): QuizResult | AskResult {
  if (tool === 'quiz') {
    const quiz = parseQuizInput(input);
    if (!isRecord(output)) throw new AnswerRejected('quiz answer: not an object');
    if (output.kind !== undefined && output.kind !== 'quiz') throw new AnswerRejected("quiz answer: kind must be 'quiz'");
    const chosen = int(output.chosen, 'quiz answer: chosen');
    if (chosen < 0) throw new AnswerRejected('quiz answer: chosen must be >= 0');
    return gradeQuiz(quiz, chosen);
  }
  if (tool === 'ask_user_question') {
    const ask = parseAskInput(input);
    if (!isRecord(output)) throw new AnswerRejected('ask_user_question answer: not an object');
    if (output.kind !== undefined && output.kind !== 'answer') {
      throw new AnswerRejected("ask_user_question answer: kind must be 'answer'");
    }
    const answer = str(output, 'answer', 1, 4000);
    let chosen: number | null = null;
    if (output.chosen !== undefined && output.chosen !== null) {
      chosen = int(output.chosen, 'ask_user_question answer: chosen');
      if (chosen < 0) throw new AnswerRejected('ask_user_question answer: chosen must be >= 0');
      if (chosen >= ask.options.length) throw new AnswerRejected(`chosen suggestion ${chosen} does not exist`);
    }
    const text = answer.trim();
    if (!text) throw new AnswerRejected('the answer is empty');
    return { kind: 'answer', answer: text, chosen };
  }
  throw new AnswerRejected(`${tool} is not a question tool`);
}
