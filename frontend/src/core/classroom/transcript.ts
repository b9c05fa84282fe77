// Reading the transcript's questions and continuations (mirrors server/core/transcript.py); the tool
// parts themselves are read by ../toolParts.ts.

import { asToolPart, toolNameOf, type MessageLike, type ToolPart } from '../toolParts';
import { QUESTION_TOOLS, type QuestionTool } from './questions';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isQuestionTool(name: string | null): name is QuestionTool {
  return name !== null && (QUESTION_TOOLS as readonly string[]).includes(name);
}

/** A called tool without a result yet. */
export function isDangling(part: ToolPart): boolean {
  return part.state === 'input-available' || part.state === 'input-streaming';
}

/** Tool parts named `tool` of all assistant messages, in transcript order. */
export function toolParts(messages: readonly MessageLike[], tool: string): ToolPart[] {
  const out: ToolPart[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const raw of message.parts) {
      const part = asToolPart(raw);
      if (part && toolNameOf(part) === tool) out.push(part);
    }
  }
  return out;
}

export interface PendingQuestion {
  tool: QuestionTool;
  part: ToolPart;
}

/**
 * Question calls awaiting the learner: the quiz/ask parts in state
 * input-available of the last message, only when that message is the
 * assistant's (a later learner message interrupts them).
 */
export function pendingQuestions(messages: readonly MessageLike[]): PendingQuestion[] {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'assistant') return [];
  const out: PendingQuestion[] = [];
  for (const raw of last.parts) {
    const part = asToolPart(raw);
    if (!part || part.state !== 'input-available') continue;
    const name = toolNameOf(part);
    if (isQuestionTool(name)) out.push({ tool: name, part });
  }
  return out;
}

/**
 * Whether the learner's answers were saved but the teacher never went on (mirrors
 * `awaits_continuation` in server/core/transcript.py): the last message is the assistant's, none
 * of its questions is pending, and its last part (step markers aside) is an answered question.
 * Retry continues such a lesson by posting that message again; the server takes it once.
 */
export function awaitsContinuation(messages: readonly MessageLike[]): boolean {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'assistant' || pendingQuestions(messages).length) return false;
  const parts = last.parts.filter((p) => !(isRecord(p) && p.type === 'step-start'));
  const final = asToolPart(parts[parts.length - 1]);
  return !!final && final.state === 'output-available' && isQuestionTool(toolNameOf(final));
}

/** Ids of the question calls of `message` that carry an answer (state output-available). */
export function answeredQuestionIds(message: MessageLike | undefined): string[] {
  if (!message || message.role !== 'assistant') return [];
  const ids: string[] = [];
  for (const raw of message.parts) {
    const part = asToolPart(raw);
    if (part && part.state === 'output-available' && isQuestionTool(toolNameOf(part))) ids.push(part.toolCallId);
  }
  return ids;
}

/**
 * The recorded answer (output) of each answered question call, by toolCallId.
 * A verdict shown from a local grade is only kept while the transcript holds
 * that same answer (a refused or superseded answer drops it).
 */
export function answersById(messages: readonly MessageLike[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const raw of message.parts) {
      const part = asToolPart(raw);
      if (part && part.state === 'output-available' && isQuestionTool(toolNameOf(part))) out.set(part.toolCallId, part.output);
    }
  }
  return out;
}
