'use strict';
/** The device-flow state machine (pure) and its polling loop with an injected clock and sleep. */
const test = require('node:test');
const assert = require('node:assert/strict');
const flow = require('../subscriptions/device-flow.cjs');

test('pending waits one interval; slow_down adds 5 s (or takes the larger value the server sends)', () => {
  const state = { interval: 5, deadline: 1000 };
  assert.deepEqual(flow.nextStep(state, { kind: 'pending' }, 100), { action: 'wait', interval: 5, delayMs: 5000 });
  assert.deepEqual(flow.nextStep(state, { kind: 'slow_down' }, 100), { action: 'wait', interval: 10, delayMs: 10000 });
  assert.deepEqual(flow.nextStep(state, { kind: 'slow_down', interval: 30 }, 100), { action: 'wait', interval: 30, delayMs: 30000 });
  assert.deepEqual(flow.nextStep(state, { kind: 'slow_down', interval: '7' }, 100), { action: 'wait', interval: 10, delayMs: 10000 });
  // Never waits past the code's deadline, and gives up once it passed.
  assert.deepEqual(flow.nextStep(state, { kind: 'pending' }, 998), { action: 'wait', interval: 5, delayMs: 2000 });
  assert.equal(flow.nextStep(state, { kind: 'pending' }, 1000).reason, 'expired');
});

test('expired_token, access_denied and unknown answers end the flow in plain words', () => {
  const state = { interval: 5, deadline: 1000 };
  const expired = flow.nextStep(state, { kind: 'expired' }, 1);
  assert.equal(expired.action, 'fail');
  assert.match(expired.message, /expired.*Connect again/);
  const denied = flow.nextStep(state, { kind: 'denied' }, 1);
  assert.equal(denied.reason, 'denied');
  assert.match(denied.message, /declined/);
  assert.equal(flow.nextStep(state, { kind: 'failed', message: 'The X login failed (HTTP 500).' }, 1).message, 'The X login failed (HTTP 500).');
  assert.equal(flow.nextStep(state, undefined, 1).action, 'fail');
  assert.deepEqual(flow.nextStep(state, { kind: 'granted', grant: { a: 1 } }, 1), { action: 'done', grant: { a: 1 } });
});

test('intervals from the server are normalised (strings, junk, bounds)', () => {
  assert.equal(flow.normaliseInterval('5'), 5);
  assert.equal(flow.normaliseInterval(' 8 '), 8);
  assert.equal(flow.normaliseInterval(undefined), 5);
  assert.equal(flow.normaliseInterval('soon'), 5);
  assert.equal(flow.normaliseInterval(-3), 5);
  assert.equal(flow.normaliseInterval(0.2), 1);
  assert.equal(flow.normaliseInterval(3600), 60);
});

test('refresh ahead of expiry: 5 minutes before, or at 80 % of a short life', () => {
  assert.equal(flow.refreshAt(10000, 6400), 10000 - 300);
  assert.equal(flow.refreshAt(1000, 0), 1000 - 200);
  assert.equal(flow.refreshAt(100, 200), 200, 'already expired: now');
  assert.equal(flow.refreshAt(undefined, 50), 50);
  // Before use (load, server start): renew when less than a minute is left.
  assert.equal(flow.needsRefresh(10000, 9939), false);
  assert.equal(flow.needsRefresh(10000, 9940), true);
  assert.equal(flow.needsRefresh(10000, 20000), true);
  assert.equal(flow.needsRefresh(undefined, 1), true);
});

test('pollUntilDone: pending -> slow_down -> granted with the waits the RFC asks for', async () => {
  let nowMs = 0;
  const waits = [];
  const answers = [{ kind: 'pending' }, { kind: 'slow_down' }, { kind: 'pending' }, { kind: 'granted', grant: 'g' }];
  const grant = await flow.pollUntilDone({
    interval: '5',
    deadline: 900,
    pollOnce: async () => answers.shift(),
    sleep: async (ms) => {
      waits.push(ms);
      nowMs += ms;
    },
    now: () => nowMs,
  });
  assert.equal(grant, 'g');
  assert.deepEqual(waits, [5000, 5000, 10000, 10000]);
});

test('pollUntilDone: abort stops it (FlowCancelled), failures carry the reason', async () => {
  const abort = new AbortController();
  let polls = 0;
  const run = flow.pollUntilDone({
    interval: 1,
    deadline: 1e9,
    pollOnce: async () => {
      polls += 1;
      if (polls === 2) abort.abort();
      return { kind: 'pending' };
    },
    sleep: async () => {},
    now: () => 0,
    signal: abort.signal,
  });
  await assert.rejects(run, flow.FlowCancelled);
  assert.equal(polls, 2);
  await assert.rejects(
    flow.pollUntilDone({ interval: 1, deadline: 1e9, pollOnce: async () => ({ kind: 'denied' }), sleep: async () => {}, now: () => 0 }),
    (error) => error.reason === 'denied',
  );
  // realSleep honours an abort at once.
  const controller = new AbortController();
  const sleeping = flow.realSleep(60000, controller.signal);
  controller.abort();
  await assert.rejects(sleeping, flow.FlowCancelled);
});
