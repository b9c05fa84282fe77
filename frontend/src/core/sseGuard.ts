// A turn's SSE stream, guarded (seed §5, "recovery never blindly resends"): a stream that ends
// without its terminal (`data: [DONE]`) or whose read is rejected is not a finished reply. The
// guard then reattaches once, read-only (`GET /api/chats/{id}/stream` replays the running turn
// from its start; the events already passed on are skipped), and a second failure errors the
// stream, so the learner sees the error banner and Retry instead of a reply silently cut short.

export const CONNECTION_LOST = 'The connection to the server was lost before the reply finished; Retry re-reads the lesson.';

/**
 * @param body the turn's response body (SSE bytes).
 * @param reattach opens the read-only reattachment: its body, or null when no turn runs any more
 *   (204: the reply is saved, the stream is completed with its terminal).
 * @param aborted whether the learner stopped (then nothing is retried).
 */
export function guardStream(
  body: ReadableStream<Uint8Array>,
  reattach: () => Promise<ReadableStream<Uint8Array> | null>,
  aborted: () => boolean = () => false,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let reader = body.getReader();
  let delivered = 0;
  let reattached = false;

  return new ReadableStream<Uint8Array>({
    async start(controller) {
      let skip = 0;
      for (;;) {
        const decoder = new TextDecoder();
        let buffer = '';
        let terminal = false;
        let failure: unknown = null;
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, '\n');
            let cut: number;
            while ((cut = buffer.indexOf('\n\n')) >= 0) {
              const event = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              if (skip > 0) {
                skip--;
                continue;
              }
              controller.enqueue(encoder.encode(`${event}\n\n`));
              delivered++;
              if (event.split('\n').some((line) => line.trim() === 'data: [DONE]')) terminal = true;
            }
          }
        } catch (err) {
          failure = err;
        }
        if (terminal) {
          controller.close();
          return;
        }
        if (aborted()) {
          controller.error(failure ?? new DOMException('The request was aborted.', 'AbortError'));
          return;
        }
        if (reattached) {
          controller.error(new Error(CONNECTION_LOST));
          return;
        }
        reattached = true;
        let next: ReadableStream<Uint8Array> | null;
        try {
          next = await reattach();
        } catch {
          controller.error(new Error(CONNECTION_LOST));
          return;
        }
        if (next === null) {
          controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          controller.close();
          return;
        }
        reader = next.getReader();
        skip = delivered;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
