// What the browser sends with a turn (issue 15: a turn must cost the same at message 10,000 as at
// message 10). The server takes only the LAST message of a `POST /api/chat` body — a new learner
// message; or, after `addToolOutput`, the assistant message whose questions were answered — and
// reads everything before it from the session record (server/services/classroom/turn.py `start`). So the
// body carries that one message, plus what the server reads besides: `id`, `trigger` (a
// regenerate) and `messageId`. Whatever else the transport would send (its `body` option, a
// sendMessage's `body`) is kept.

/** The `POST /api/chat` body of a turn. */
export interface TurnRequestBody<M> {
  [key: string]: unknown;
  id: string;
  trigger: string;
  messageId?: string;
  messages: M[];
}

/** What `DefaultChatTransport` hands `prepareSendMessagesRequest` (the parts we read). */
export interface TurnRequestInput<M> {
  id: string;
  messages: readonly M[];
  trigger: string;
  messageId?: string | undefined;
  body?: Record<string, unknown> | undefined;
}

/** Only the last message (empty stays empty: the server answers 400, as for any empty body). */
export function lastMessageOnly<M>(messages: readonly M[]): M[] {
  return messages.length === 0 ? [] : [messages[messages.length - 1]];
}

/** The body of a turn: `{...body, id, trigger, messageId?, messages: [<the last message>]}`. */
export function turnRequestBody<M>({ id, messages, trigger, messageId, body }: TurnRequestInput<M>): TurnRequestBody<M> {
  const out: TurnRequestBody<M> = { ...(body ?? {}), id, trigger, messages: lastMessageOnly(messages) };
  if (messageId !== undefined) out.messageId = messageId;
  return out;
}
