// The chat transport's fetch: the client half of the turn contract.
//
// - Every POST carries only the last message (the server reads the rest from the record), also
//   when a recovery re-sends: the decisions below read only the last message of what was sent.
// - 409 turn_running: wait (0.5 s, 1 s, 2 s, then every 5 s, ~60 s in all),
//   re-read the record, merge the learner's unsent input after it, re-send.
// - A network failure: re-read the record before anything is sent again;
//   answers are re-sent only while their questions are still pending there,
//   a turn that runs is followed (its stream from the start), else we sync.
// - A stream that ends without its terminal, or whose read fails: one read-only
//   reattachment (core/sseGuard.ts), then the error banner; never a re-send.
// The decisions are pure (core/turnContract.ts); this file only does the I/O.

import type { UIMessage } from 'ai';
import * as api from '../../api';
import { parseErrorText } from '../../core/errors';
import { guardStream } from '../../core/sseGuard';
import { lastMessageOnly } from '../../core/classroom/turnRequest';
import { WAIT_LIMIT_MS, decideRecovery, retryDelay, withLocalInput, type Recovery } from '../../core/classroom/turnContract';

export interface TurnClientHooks {
  chatId: string;
  /** Replace the chat's messages (useChat's setMessages). */
  setMessages: (messages: UIMessage[]) => void;
  /** True while waiting for another turn of this session to end. */
  onWaiting: (waiting: boolean) => void;
  /** A fresh copy of the record was read. */
  onRecord: (record: api.ChatRecord) => void;
  /** A request to /api/chat or the reattach stream is about to go out. */
  onRequest: (messages: UIMessage[] | null) => void;
}

interface ChatBody {
  id: string;
  messages: UIMessage[];
  [key: string]: unknown;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' };

/** A stream with no chunks: the SDK settles without a reply (used when there is nothing to send). */
function emptyStream(): Response {
  return new Response('data: [DONE]\n\n', { status: 200, headers: SSE_HEADERS });
}

function abortError(): DOMException {
  return new DOMException('The request was aborted.', 'AbortError');
}

function sleep(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError());
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      reject(abortError());
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function isAbort(err: unknown, signal: AbortSignal | null | undefined): boolean {
  return !!signal?.aborted || (err instanceof Error && err.name === 'AbortError');
}

function urlOf(input: RequestInfo | URL): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

function isChatPost(url: string, init: RequestInit | undefined): boolean {
  const path = new URL(url, window.location.href).pathname;
  return path === '/api/chat' && (init?.method ?? 'GET').toUpperCase() === 'POST' && typeof init?.body === 'string';
}

function isStreamGet(url: string): boolean {
  return /^\/api\/chats\/[^/]+\/stream$/.test(new URL(url, window.location.href).pathname);
}

export function createTurnFetch(hooks: TurnClientHooks): typeof fetch {
  const streamUrl = `/api/chats/${encodeURIComponent(hooks.chatId)}/stream`;

  /** A turn's 200 event stream, guarded: one read-only reattachment if it ends early. */
  function guarded(res: Response, signal: AbortSignal | null | undefined): Response {
    const type = res.headers.get('content-type') ?? '';
    if (res.status !== 200 || !res.body || !type.startsWith('text/event-stream')) return res;
    const reattach = async () => {
      const again = await fetch(streamUrl, { signal: signal ?? undefined });
      if (again.status === 204) return null; // the turn ended: its reply is in the record
      if (again.status !== 200 || !again.body) throw new Error(`reattachment answered ${again.status}`);
      return again.body;
    };
    return new Response(guardStream(res.body, reattach, () => !!signal?.aborted), {
      status: res.status,
      headers: res.headers,
    });
  }

  async function readRecord(): Promise<api.ChatRecord> {
    const record = await api.getChat(hooks.chatId);
    hooks.onRecord(record);
    return record;
  }

  async function follow(record: api.ChatRecord, signal: AbortSignal | null | undefined): Promise<Response> {
    hooks.onRequest(null);
    const res = await fetch(streamUrl, { signal: signal ?? undefined });
    if (res.status === 204) {
      // The turn ended in between: its reply is in the record now.
      hooks.setMessages((await readRecord().catch(() => record)).messages);
      return emptyStream();
    }
    return guarded(res, signal);
  }

  return async function turnFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const url = urlOf(input);
    if (isStreamGet(url)) {
      hooks.onRequest(null);
      return guarded(await fetch(input, init), init?.signal);
    }
    if (!isChatPost(url, init)) return fetch(input, init);

    const body = JSON.parse(init!.body as string) as ChatBody;
    const signal = init!.signal;

    // `messages` is what the view shows (a recovery's record plus our input); the server takes only
    // the last one, so only that goes on the wire (core/turnRequest.ts, issue 15).
    const post = async (messages: UIMessage[]): Promise<Response> => {
      hooks.onRequest(messages);
      const sent = JSON.stringify({ ...body, messages: lastMessageOnly(messages) });
      return guarded(await fetch(url, { ...init, body: sent }), signal);
    };

    /** Act on a decision; `sent` is what we last tried to send. */
    async function act(decision: Recovery<UIMessage>, record: api.ChatRecord, sent: UIMessage[]): Promise<Response> {
      switch (decision.kind) {
        case 'sync':
          hooks.setMessages(record.messages);
          return emptyStream();
        case 'follow':
          return follow(record, signal);
        case 'wait':
          return waitForTurn(sent, null);
        case 'resend': {
          hooks.setMessages(decision.messages);
          return checked(await post(decision.messages), decision.messages);
        }
      }
    }

    /** A 409 turn_running answer starts the wait; any other answer goes to the SDK as it is. */
    async function checked(res: Response, sent: UIMessage[]): Promise<Response> {
      if (res.status !== 409) return res;
      const text = await res.text();
      if (parseErrorText(text).code === 'turn_running') return waitForTurn(sent, text);
      return new Response(text, { status: res.status, headers: res.headers });
    }

    async function waitForTurn(sent: UIMessage[], refusal: string | null): Promise<Response> {
      hooks.onWaiting(true);
      try {
        const started = Date.now();
        let lastRefusal = refusal ?? '{"error":"turn_running"}';
        for (let attempt = 0; Date.now() - started < WAIT_LIMIT_MS; attempt++) {
          await sleep(retryDelay(attempt), signal);
          let record: api.ChatRecord;
          try {
            record = await readRecord();
          } catch (err) {
            if (isAbort(err, signal)) throw err;
            continue; // the server may be restarting; keep waiting
          }
          const decision = decideRecovery(record, sent);
          if (decision.kind === 'wait') {
            hooks.setMessages(withLocalInput(record.messages, sent));
            continue;
          }
          if (decision.kind !== 'resend') return act(decision, record, sent);
          hooks.setMessages(decision.messages);
          const res = await post(decision.messages);
          if (res.status !== 409) return res;
          const text = await res.text();
          if (parseErrorText(text).code !== 'turn_running') return new Response(text, { status: 409, headers: res.headers });
          lastRefusal = text;
          sent = decision.messages;
        }
        // Gave up: the SDK shows the refusal in the error banner.
        return new Response(lastRefusal, { status: 409, headers: { 'content-type': 'application/json' } });
      } finally {
        hooks.onWaiting(false);
      }
    }

    let res: Response;
    try {
      res = await post(body.messages);
    } catch (err) {
      if (isAbort(err, signal)) throw err;
      // Network failure: did the server take it? Never re-send blindly.
      let record: api.ChatRecord;
      try {
        record = await readRecord();
      } catch {
        throw err; // still unreachable: the SDK reports the original failure
      }
      return act(decideRecovery(record, body.messages), record, body.messages);
    }
    return checked(res, body.messages);
  };
}
