// Which messages the transcript draws (issue 15: a 10,000-message lesson must open and turn).
// Drawing every message of a long lesson takes the browser minutes, so the transcript draws the
// most recent ones and a "Show earlier messages" control reveals more, a step at a time. Only the
// transcript's DOM is windowed: the question dock, the plan panel, the phase and the artifact
// index still read the whole message list.
//
// The window is anchored to the end: `limit` is how many of the most recent messages are drawn,
// so a new message (the learner's, the reply) stays in view and the oldest drawn one leaves. A drawn
// dispatch card's artifact is always drawn too: it is saved at or after the message that called it.

/** How many of the most recent messages are drawn at first. */
export const TRANSCRIPT_WINDOW = 200;
/** How many more each "Show earlier messages" reveals. */
export const TRANSCRIPT_STEP = 200;

export interface TranscriptWindow {
  /** Index of the first drawn message. */
  start: number;
  /** Messages before the window (not drawn). */
  hidden: number;
  /** How many a "Show earlier messages" would reveal now (0: nothing is hidden). */
  next: number;
}

/** The window over `total` messages that draws the last `limit` of them. */
export function transcriptWindow(total: number, limit: number, step: number = TRANSCRIPT_STEP): TranscriptWindow {
  const count = Math.max(0, Math.floor(total));
  const shown = Math.min(count, Math.max(1, Math.floor(limit)));
  const start = count - shown;
  return { start, hidden: start, next: Math.min(start, Math.max(1, Math.floor(step))) };
}

/** The limit after one "Show earlier messages" (never past what there is). */
export function revealEarlier(total: number, limit: number, step: number = TRANSCRIPT_STEP): number {
  const { start, next } = transcriptWindow(total, limit, step);
  return total - start + next;
}
