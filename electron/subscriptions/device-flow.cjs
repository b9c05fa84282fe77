'use strict';
/**
 * The device authorization grant (RFC 8628) as pure decisions, shared by every subscription
 * provider, plus the one loop that applies them with an injected clock and sleep.
 *
 * A provider's poll answers one of these outcomes (normalised by the provider module):
 *   {kind: 'granted', grant}        the user approved; `grant` is provider data (never logged)
 *   {kind: 'pending'}               authorization_pending: ask again after `interval`
 *   {kind: 'slow_down', interval?}  slow_down: the interval grows by 5 s (or to the server's value)
 *   {kind: 'expired'}               expired_token: the user code ran out
 *   {kind: 'denied'}                access_denied: the user said no
 *   {kind: 'failed', message}       anything else, in plain words
 *
 * Times: `interval` in seconds, `deadline` and `expiresAt` in epoch seconds; `now()` in ms.
 * Source: RFC 8628 §3.4-3.5 (slow_down "MUST be increased by 5 seconds"); seed §8.1.
 */

const SLOW_DOWN_STEP_S = 5;
const DEFAULT_INTERVAL_S = 5;
const MIN_INTERVAL_S = 1;
const MAX_INTERVAL_S = 60;
/** Refresh this long before the access token expires (or at 80 % of a shorter lifetime). */
const REFRESH_LEAD_S = 300;
/** A saved token with less life than this is renewed before it is pushed. */
const MIN_VALID_S = 60;

class FlowCancelled extends Error {
  constructor() {
    super('the login was cancelled');
    this.name = 'FlowCancelled';
  }
}

/** A sane polling interval in seconds from whatever the server sent (string or number). */
function normaliseInterval(value, fallback = DEFAULT_INTERVAL_S) {
  const n = typeof value === 'string' ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) return fallback;
  return Math.min(MAX_INTERVAL_S, Math.max(MIN_INTERVAL_S, Math.round(n)));
}

/**
 * The next step of a flow after one poll.
 *
 * @param {{interval: number, deadline: number}} flow interval (s) and user-code deadline (epoch s)
 * @param {{kind: string, grant?: object, interval?: number, message?: string}} outcome
 * @param {number} nowS epoch seconds
 * @returns {{action: 'wait', interval: number, delayMs: number}
 *          | {action: 'done', grant: object}
 *          | {action: 'fail', reason: 'expired'|'denied'|'failed', message: string}}
 */
function nextStep(flow, outcome, nowS) {
  switch (outcome && outcome.kind) {
    case 'granted':
      return { action: 'done', grant: outcome.grant };
    case 'expired':
      return { action: 'fail', reason: 'expired', message: 'The code expired before it was entered. Connect again.' };
    case 'denied':
      return { action: 'fail', reason: 'denied', message: 'The login was declined. Connect again to retry.' };
    case 'pending':
    case 'slow_down': {
      let interval = flow.interval;
      if (outcome.kind === 'slow_down') {
        const told = normaliseInterval(outcome.interval, 0);
        interval = Math.min(MAX_INTERVAL_S, Math.max(interval + SLOW_DOWN_STEP_S, told));
      }
      if (nowS >= flow.deadline) {
        return { action: 'fail', reason: 'expired', message: 'The code expired before it was entered. Connect again.' };
      }
      const delayMs = Math.max(0, Math.min(interval, flow.deadline - nowS)) * 1000;
      return { action: 'wait', interval, delayMs };
    }
    default:
      return {
        action: 'fail',
        reason: 'failed',
        message: (outcome && outcome.message) || 'The login failed for an unknown reason. Connect again.',
      };
  }
}

/**
 * When to refresh a token expiring at `expiresAt` (epoch s) that was issued (or last looked at)
 * at `sinceS`: REFRESH_LEAD_S before expiry, or at 80 % of its life when that is shorter.
 * Returns epoch seconds, never before `sinceS`.
 */
function refreshAt(expiresAt, sinceS) {
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return sinceS;
  const life = expiresAt - sinceS;
  if (life <= 0) return sinceS;
  return Math.max(sinceS, expiresAt - Math.min(REFRESH_LEAD_S, life * 0.2));
}

/** Whether a saved token must be renewed before use: it expires within MIN_VALID_S (or has no expiry). */
function needsRefresh(expiresAt, nowS) {
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return true;
  return expiresAt - nowS <= MIN_VALID_S;
}

/**
 * Poll until the flow ends. `pollOnce()` resolves to an outcome (above); `sleep(ms, signal)`
 * resolves after ms or rejects when the signal aborts; `now()` is epoch ms.
 * Resolves with the grant; rejects with FlowCancelled on abort, or an Error in plain words.
 */
async function pollUntilDone({ interval, deadline, pollOnce, sleep, now, signal }) {
  const flow = { interval: normaliseInterval(interval), deadline };
  let step = { action: 'wait', interval: flow.interval, delayMs: flow.interval * 1000 };
  for (;;) {
    if (signal && signal.aborted) throw new FlowCancelled();
    await sleep(step.delayMs, signal);
    if (signal && signal.aborted) throw new FlowCancelled();
    const outcome = await pollOnce();
    if (signal && signal.aborted) throw new FlowCancelled();
    step = nextStep(flow, outcome, now() / 1000);
    if (step.action === 'done') return step.grant;
    if (step.action === 'fail') {
      const error = new Error(step.message);
      error.reason = step.reason;
      throw error;
    }
    flow.interval = step.interval;
  }
}

/** sleep(ms, signal) on real timers; rejects with FlowCancelled when the signal aborts. */
function realSleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) {
      reject(new FlowCancelled());
      return;
    }
    const timer = setTimeout(() => {
      if (signal) signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (typeof timer.unref === 'function') timer.unref();
    function onAbort() {
      clearTimeout(timer);
      reject(new FlowCancelled());
    }
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}

module.exports = {
  SLOW_DOWN_STEP_S,
  DEFAULT_INTERVAL_S,
  REFRESH_LEAD_S,
  MIN_VALID_S,
  FlowCancelled,
  normaliseInterval,
  nextStep,
  refreshAt,
  needsRefresh,
  pollUntilDone,
  realSleep,
};
