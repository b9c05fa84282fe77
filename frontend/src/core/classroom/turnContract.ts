// The client side of the turn contract, as pure decisions (the fetching lives
// in src/turnClient.ts). The session record on the server is the truth; the
// browser's copy is a view of it plus, at most, learner input not yet accepted.

import type { MessageLike } from '../toolParts';
import { answeredQuestionIds, awaitsContinuation, pendingQuestions } from './transcript';

/** Waits between re-checks while another turn runs: 0.5 s, 1 s, 2 s, then 5 s. */
export const RETRY_DELAYS_MS = [500, 1000, 2000, 5000] as const;
/** Give up waiting for another turn after about this long. */
export const WAIT_LIMIT_MS = 60_000;

export function retryDelay(attempt: number): number {
  return RETRY_DELAYS_MS[Math.min(Math.max(0, attempt), RETRY_DELAYS_MS.length - 1)];
}

/**
 * The record's messages followed by the local messages it does not have (the
 * learner's unsent messages), so nothing typed is lost when re-syncing.
 */
export function mergeUnsent<M extends MessageLike>(record: readonly M[], local: readonly M[]): M[] {
  const ids = new Set(record.map((m) => m.id));
  return [...record, ...local.filter((m) => !ids.has(m.id))];
}

/**
 * The record with our not-yet-accepted input: answers (our copy of the
 * record's last assistant message) replace that message, learner messages
 * the record lacks go after it.
 */
export function withLocalInput<M extends MessageLike>(record: readonly M[], local: readonly M[]): M[] {
  const last = local[local.length - 1];
  if (last?.role === 'assistant' && record[record.length - 1]?.id === last.id) return [...record.slice(0, -1), last];
  return mergeUnsent(record, local);
}

export type Recovery<M> =
  /** Nothing to send: show the record as it is. */
  | { kind: 'sync' }
  /** Our input was accepted and its turn runs: follow that turn's stream. */
  | { kind: 'follow' }
  /** Another turn runs and our input is not accepted yet: wait, then decide again. */
  | { kind: 'wait' }
  /** Our input is not in the record and nothing runs: send these messages. */
  | { kind: 'resend'; messages: M[] };

/**
 * What to do with a request whose fate is unknown (a network failure, a 409
 * turn_running, the Retry button), given a fresh copy of the record.
 *
 * `sent` is what the client sent (or would send): its last message is either
 * the learner's new message or the assistant message carrying answers
 * (addToolOutput). Answers are never resent blindly: only while the record
 * still has those questions pending.
 */
export function decideRecovery<M extends MessageLike>(
  record: { messages: readonly M[]; running: boolean },
  sent: readonly M[],
): Recovery<M> {
  const last = sent[sent.length - 1];
  if (!last) return { kind: 'sync' };
  if (last.role === 'assistant') {
    const answered = new Set(answeredQuestionIds(last));
    const recordLast = record.messages[record.messages.length - 1];
    const stillPending =
      answered.size > 0 &&
      recordLast?.id === last.id &&
      pendingQuestions(record.messages).some((q) => answered.has(q.part.toolCallId));
    if (stillPending) {
      return record.running ? { kind: 'wait' } : { kind: 'resend', messages: [...record.messages.slice(0, -1), last] };
    }
    if (record.running) return { kind: 'follow' };
    // Answers saved, but the continuation failed before its first word: continue from the record.
    if (recordLast?.id === last.id && awaitsContinuation(record.messages)) {
      return { kind: 'resend', messages: [...record.messages] };
    }
    return { kind: 'sync' };
  }
  if (last.role !== 'user') return record.running ? { kind: 'follow' } : { kind: 'sync' };
  const index = record.messages.findIndex((m) => m.id === last.id);
  if (index === -1) {
    return record.running ? { kind: 'wait' } : { kind: 'resend', messages: mergeUnsent(record.messages, sent) };
  }
  if (record.running) return { kind: 'follow' };
  // Accepted but never answered (its turn produced nothing): the server takes it again.
  if (index === record.messages.length - 1) return { kind: 'resend', messages: [...record.messages] };
  // Our message was answered with a question whose answer was saved, and nothing after it.
  if (awaitsContinuation(record.messages)) return { kind: 'resend', messages: [...record.messages] };
  return { kind: 'sync' };
}

/**
 * Whether the client may post the current messages automatically (after
 * addToolOutput): only when the last assistant message carries an answer the
 * learner gave in this tab and that was not sent yet.
 */
export function hasUnsentAnswer(messages: readonly MessageLike[], answeredHere: ReadonlySet<string>): boolean {
  const last = messages[messages.length - 1];
  return answeredQuestionIds(last).some((id) => answeredHere.has(id));
}

/**
 * Reattaching to a turn that continues an assistant message (the learner had
 * answered its question) replays only the turn's new parts, and the AI SDK
 * resets the message on the replay's first `start`. While that replay runs,
 * show the record's earlier parts of the message in front of the streamed
 * ones. `base` is the record's copy of that message (null: nothing to do).
 */
export function withResumeBase<M extends MessageLike>(messages: readonly M[], base: M | null): M[] {
  if (!base) return [...messages];
  return messages.map((m) => {
    if (m.id !== base.id || m.role !== 'assistant' || m === base) return m;
    if (base.parts.length === 0 || m.parts.includes(base.parts[0])) return m;
    const streamedIds = new Set(m.parts.map(callIdOf).filter((id): id is string => id !== null));
    const baseIds = base.parts.map(callIdOf).filter((id): id is string => id !== null);
    if (baseIds.some((id) => streamedIds.has(id))) return m;
    if (baseIds.length === 0 && m.parts.length > 0 && JSON.stringify(m.parts[0]) === JSON.stringify(base.parts[0])) return m;
    return { ...m, parts: [...base.parts, ...m.parts] };
  });
}

function callIdOf(part: unknown): string | null {
  if (typeof part !== 'object' || part === null) return null;
  const id = (part as { toolCallId?: unknown }).toolCallId;
  return typeof id === 'string' ? id : null;
}

/** What a view knows about its session's running turn, for the automatic follows. */
export interface TurnRow {
  running?: boolean;
  updatedAt: string;
}

/**
 * Whether a view may follow (reattach to) the running turn it just read, on its own (the session
 * row said a turn runs, or its own request failed while the turn went on): once per turn. A turn's
 * write-ahead stamps the record's `updatedAt` and nothing else rewrites it until the turn ends (a
 * rename may; that allows one more follow, never a loop), so `followed`, the `updatedAt` of the
 * running record this view last followed (null: none), names the turn. A second failure of the
 * same turn's follow leaves the error banner and Retry (seed §5); an explicit Retry may follow
 * again.
 */
export function mayFollow(record: TurnRow, followed: string | null): boolean {
  return record.running === true && record.updatedAt !== followed;
}

/**
 * Whether the session row (another window's turn, a server-initiated one, a rename) calls for
 * re-reading the record. Never while this view's own request runs or waits; a running turn only
 * when this view may still follow it (so an error while the turn runs does not start a read and a
 * follow again and again); else when the row changed since the record was last shown.
 */
export function needsExternalRead(
  row: TurnRow | undefined,
  view: { idle: boolean; waiting: boolean; knownUpdatedAt: string; followed: string | null },
): boolean {
  if (!row || !view.idle || view.waiting) return false;
  if (row.running) return mayFollow(row, view.followed);
  return row.updatedAt !== view.knownUpdatedAt;
}
