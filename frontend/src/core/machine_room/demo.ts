/**
 * The offline demo model, as the page treats it (issue 29, item 3): a lesson starts on it only after
 * the learner chose it on the demo screen, and each of its replies carries a visible demo mark.
 * Pure.
 */

/** Where "New lesson" leads when lessons would run on the offline demo model. */
export const DEMO_ROUTE = '/demo';

/** The server's refusal code for a lesson on the demo model that the learner did not choose. */
export const DEMO_NOT_CHOSEN = 'demo_not_chosen';

/** The provider id of the bundled offline demo model. */
export const OFFLINE_PROVIDER = 'local';

/**
 * Whether saving a lesson's model as `next` switches it to the offline demo model, which the learner
 * must confirm first (issue 29, item 4: PUT /api/chats/{id}/settings refuses it with
 * demo_not_chosen unless the body says demo). A lesson already on the demo model is no new switch.
 */
export function needsDemoConfirm(currentProvider: string | null | undefined, next: string): boolean {
  return next === OFFLINE_PROVIDER && currentProvider !== OFFLINE_PROVIDER;
}

/** The mark on a demo reply: short, and says what matters. */
export const DEMO_MARK = 'Demo model: may be wrong';

/** Whether a reply was written by the offline demo model: its metadata says `demo: true` (the server
 * marks each reply of that model, live and in the saved record). */
export function isDemoReply(metadata: unknown): boolean {
  return typeof metadata === 'object' && metadata !== null && (metadata as { demo?: unknown }).demo === true;
}

/** A duration in plain words: "about 40 s", "about 3 min". */
export function aboutDuration(seconds: number): string {
  if (seconds < 60) return `about ${Math.max(1, Math.round(seconds))} s`;
  return `about ${Math.round(seconds / 60)} min`;
}

function positive(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/**
 * The banner's line on the demo model's speed (issue 29, item 3): while it writes a reply
 * (`writing`), the expected wait from its speed measured on this computer; when idle, that speed;
 * null when idle and nothing is measured yet.
 */
export function demoWaitLine(offline: { tokensPerSecond?: number | null; expectedWaitS?: number | null } | null | undefined, writing: boolean): string | null {
  const rate = offline?.tokensPerSecond;
  const wait = offline?.expectedWaitS;
  if (!positive(rate) || !positive(wait)) {
    return writing ? 'The demo model is writing a reply. Its speed on this computer is measured after its first reply.' : null;
  }
  const speed = `${rate < 10 ? rate.toFixed(1) : Math.round(rate)} tokens/s`;
  return writing
    ? `The demo model is writing a reply: expect ${aboutDuration(wait)} (it writes ${speed} on this computer).`
    : `On this computer the demo model writes ${speed}: a reply takes ${aboutDuration(wait)}.`;
}
