/**
 * The offline demo model, as the page treats it (issue 29, item 3): a lesson starts on it only after
 * the learner chose it on the demo screen, and each of its replies carries a visible demo mark.
 * Pure.
 */

/** Where "New lesson" leads when lessons would run on the offline demo model. */
export const DEMO_ROUTE = '/demo';

/** The server's refusal code for a lesson on the demo model that the learner did not choose. */
export const DEMO_NOT_CHOSEN = 'demo_not_chosen';

/** The mark on a demo reply: short, and says what matters. */
export const DEMO_MARK = 'Demo model: may be wrong';

/** Whether a reply was written by the offline demo model: its metadata says `demo: true` (the server
 * marks each reply of that model, live and in the saved record). */
export function isDemoReply(metadata: unknown): boolean {
  return typeof metadata === 'object' && metadata !== null && (metadata as { demo?: unknown }).demo === true;
}
