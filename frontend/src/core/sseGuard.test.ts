import { describe, expect, it } from 'vitest';
import { CONNECTION_LOST, guardStream } from './sseGuard';

const encoder = new TextEncoder();

/** A body that yields these pieces, then ends (or fails with `error`). */
function body(pieces: string[], error?: Error): ReadableStream<Uint8Array> {
  const queue = [...pieces];
  return new ReadableStream({
    pull(controller) {
      const piece = queue.shift();
      if (piece !== undefined) controller.enqueue(encoder.encode(piece));
      else if (error) controller.error(error);
      else controller.close();
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let out = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out += decoder.decode(value, { stream: true });
  }
}

const ev = (n: number) => `data: {"type":"text-delta","delta":"${n}"}\n\n`;
const DONE = 'data: [DONE]\n\n';

describe('guardStream', () => {
  it('passes a complete stream through untouched and never reattaches', async () => {
    let calls = 0;
    const out = await readAll(guardStream(body([ev(1), ev(2).slice(0, 10), ev(2).slice(10), DONE]), async () => (calls++, null)));
    expect(out).toBe(ev(1) + ev(2) + DONE);
    expect(calls).toBe(0);
  });

  it('a clean EOF without the terminal reattaches once and skips what was already passed on', async () => {
    const replay = body([ev(1), ev(2), ev(3), DONE]); // the turn from its start
    let calls = 0;
    const out = await readAll(guardStream(body([ev(1), ev(2)]), async () => (calls++, replay)));
    expect(out).toBe(ev(1) + ev(2) + ev(3) + DONE);
    expect(calls).toBe(1);
  });

  it('a rejected read reattaches too; a turn already ended (204) completes with the terminal', async () => {
    const out = await readAll(guardStream(body([ev(1)], new TypeError('network error')), async () => null));
    expect(out).toBe(ev(1) + DONE);
  });

  it('a second failure errors the stream (the banner and Retry), never an endless reattachment', async () => {
    let calls = 0;
    const stream = guardStream(body([ev(1)]), async () => (calls++, body([ev(1), ev(2)])));
    await expect(readAll(stream)).rejects.toThrow(CONNECTION_LOST);
    expect(calls).toBe(1);
  });

  it('a failing reattachment errors the stream', async () => {
    const stream = guardStream(body([ev(1)]), async () => {
      throw new TypeError('unreachable');
    });
    await expect(readAll(stream)).rejects.toThrow(CONNECTION_LOST);
  });

  it('after the learner stopped, nothing is retried', async () => {
    let calls = 0;
    const stream = guardStream(body([ev(1)], new DOMException('aborted', 'AbortError')), async () => (calls++, null), () => true);
    await expect(readAll(stream)).rejects.toThrow();
    expect(calls).toBe(0);
  });
});
