import type { UIMessage } from 'ai';
import { isSteerMessage } from '../workbench/workbench';

// Helpers around AI SDK v6 UIMessage ({id, role, parts: [...]}).

const ROLES = new Set(['system', 'user', 'assistant']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Defensive normalisation of the messages a chat record carries: drops
 * anything that is not a UIMessage and turns a legacy `content` string into a
 * text part, so useChat never receives something it cannot render.
 */
export function normalizeMessages(raw: unknown): UIMessage[] {
  if (!Array.isArray(raw)) return [];
  const out: UIMessage[] = [];
  raw.forEach((item, index) => {
    if (!isRecord(item)) return;
    const role = item.role;
    if (typeof role !== 'string' || !ROLES.has(role)) return;
    const id = typeof item.id === 'string' && item.id ? item.id : `msg-${index}`;
    let parts: unknown[];
    if (Array.isArray(item.parts)) {
      parts = item.parts.filter((p) => isRecord(p) && typeof p.type === 'string');
    } else if (typeof item.content === 'string') {
      parts = [{ type: 'text', text: item.content }];
    } else {
      parts = [];
    }
    out.push({ ...item, id, role, parts } as UIMessage);
  });
  return out;
}

/** All text parts of a message joined (used for user bubbles). */
export function messageText(message: Pick<UIMessage, 'parts'>): string {
  return message.parts
    .filter((p): p is { type: 'text'; text: string } => p.type === 'text' && typeof (p as { text?: unknown }).text === 'string')
    .map((p) => p.text)
    .join('\n\n');
}

/** True if the message has something to show (text or reasoning). */
export function hasVisibleText(message: Pick<UIMessage, 'parts'>): boolean {
  return message.parts.some(
    (p) => (p.type === 'text' || p.type === 'reasoning') && ((p as { text?: string }).text ?? '').trim() !== '',
  );
}

/**
 * Whether to show the "…" typing indicator after the transcript: the request
 * is in flight and the assistant has not shown any text yet.
 */
export function showTypingIndicator(status: string, messages: Pick<UIMessage, 'role' | 'parts'>[]): boolean {
  if (status === 'submitted') return true;
  if (status !== 'streaming') return false;
  const last = messages[messages.length - 1];
  return !last || last.role !== 'assistant' || !hasVisibleText(last);
}

/**
 * Whether the teacher's last reply may be written again ("Regenerate"): the transcript ends with
 * an assistant reply that answers the learner's own message (not a steer, the server's job
 * result), and no turn is running (`status` "ready" or "error"). The server takes such a
 * `regenerate-message` turn: it drops the replies after that learner message and writes a new one
 * (server/core/classroom/turns.py `accept_learner_message`).
 */
export function canRegenerate(status: string, messages: readonly Pick<UIMessage, 'role' | 'parts'>[]): boolean {
  if (status !== 'ready' && status !== 'error') return false;
  const last = messages[messages.length - 1];
  const before = messages[messages.length - 2];
  if (!last || !before || last.role !== 'assistant' || before.role !== 'user') return false;
  return !isSteerMessage(before);
}
