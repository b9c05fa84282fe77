'use strict';
/**
 * main.cjs wiring of the subscription logins under plain Node: the fake `electron` module, a fake
 * sidecar whose origin is a loopback receiver standing in for the server's
 * /api/shell/subscription-auth routes, and loopback fakes of the providers (env-configured).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createFakeElectron, createFakeSidecar, loadMain } = require('./helpers/fake-electron.cjs');
const { startFakeProviders, startAuthReceiver } = require('./helpers/fake-providers.cjs');

const CHANNELS = ['lh:subscriptions-status', 'lh:subscriptions-login', 'lh:subscriptions-cancel', 'lh:subscriptions-logout'];

async function boot(t) {
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-main-subs-'));
  const clock = { nowS: () => Math.floor(Date.now() / 1000) };
  const fake = await startFakeProviders(clock);
  fake.interval = 1; // the real poll loop runs here: keep it to one second
  const receiver = await startAuthReceiver();
  const saved = { ...process.env };
  Object.assign(process.env, fake.env, { LH_SHELL_SECRET: 'inherited-secret-must-not-pass' });
  const { electron, calls } = createFakeElectron({ userData });
  const { sidecar, record } = createFakeSidecar({ port: receiver.port });
  const main = loadMain({ electron, sidecar });
  t.after(async () => {
    if (main.state.subscriptions) main.state.subscriptions.close();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await Promise.all([fake.close(), receiver.close()]);
    fs.rmSync(userData, { recursive: true, force: true });
  });
  await main.start();
  const origin = `http://127.0.0.1:${receiver.port}`;
  const trusted = { senderFrame: { url: `${origin}/settings` } };
  return { main, calls, record, fake, receiver, userData, origin, trusted };
}

async function until(predicate, what) {
  const deadline = Date.now() + 8000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('subscription IPC: foreign origins refused; LH_SHELL_SECRET per launch in env only; login, push with both headers, resync after restart, logout', async (t) => {
  const { main, calls, record, fake, receiver, userData, origin, trusted } = await boot(t);

  // The shell secret: 64 hex, in the server's environment only, not the inherited one, not argv.
  const [{ env, args }] = record.starts;
  assert.match(env.LH_SHELL_SECRET, /^[0-9a-f]{64}$/);
  assert.notEqual(env.LH_SHELL_SECRET, env.LH_API_TOKEN);
  assert.ok(!args.join(' ').includes(env.LH_SHELL_SECRET));
  assert.ok(!args.join(' ').includes('inherited-secret'));

  // Foreign senders are refused on every channel, and nothing reaches a provider.
  for (const channel of CHANNELS) {
    assert.equal(typeof calls.ipc[channel], 'function', channel);
    for (const url of ['https://evil.example/', 'file:///index.html', `http://127.0.0.1:${receiver.port + 1}/`, `http://127.0.0.1:${receiver.port}@evil.example/`]) {
      await assert.rejects(calls.ipc[channel]({ senderFrame: { url } }, 'chatgpt'), /refused/, `${channel} ${url}`);
    }
    await assert.rejects(calls.ipc[channel]({}, 'chatgpt'), /refused/);
  }
  assert.equal(fake.requests.length, 0);
  await assert.rejects(calls.ipc['lh:subscriptions-login'](trusted, 'openrouter'), /unknown subscription/);

  const initial = await calls.ipc['lh:subscriptions-status'](trusted);
  assert.equal(initial.mode, 'desktop');
  assert.deepEqual(Object.keys(initial.providers).sort(), ['chatgpt', 'github-copilot-subscription', 'xai-subscription']);
  assert.equal(initial.providers.chatgpt.state, 'disconnected');

  // Login from the page: a code to show, the verification page opened in the system browser.
  const pending = await calls.ipc['lh:subscriptions-login'](trusted, 'chatgpt');
  assert.equal(pending.providers.chatgpt.state, 'pending');
  assert.equal(pending.providers.chatgpt.userCode, 'CHAT-1234');
  assert.ok(calls.openExternal.includes(`${fake.base}/codex/device`));
  await until(async () => (await calls.ipc['lh:subscriptions-status'](trusted)).providers.chatgpt.state === 'connected', 'connected');
  await until(() => receiver.requests.length >= 1, 'the push');
  const push = receiver.requests[0];
  assert.equal(push.method, 'PUT');
  assert.equal(push.path, '/api/shell/subscription-auth/chatgpt');
  assert.equal(push.headers['x-lh-token'], env.LH_API_TOKEN);
  assert.equal(push.headers['x-lh-shell-secret'], env.LH_SHELL_SECRET);
  assert.deepEqual(Object.keys(push.body).sort(), ['accessToken', 'accountId', 'baseUrl', 'expiresAt']);
  assert.ok(!JSON.stringify(push.body).includes('chatgpt-refresh'));
  assert.ok(fs.existsSync(path.join(userData, 'subscriptions', 'chatgpt.json')));

  // A server restart (a key change) gets the saved connection pushed again, same secret.
  await calls.ipc['lh:set-api-key'](trusted, 'openai', 'sk-test-key-123');
  assert.equal(record.starts.length, 2);
  assert.equal(record.starts[1].env.LH_SHELL_SECRET, env.LH_SHELL_SECRET);
  await until(() => receiver.requests.filter((r) => r.method === 'PUT').length >= 2, 'the push after the restart');
  assert.deepEqual(receiver.requests.filter((r) => r.method === 'PUT')[1].body, push.body);

  const out = await calls.ipc['lh:subscriptions-logout'](trusted, 'chatgpt');
  assert.equal(out.providers.chatgpt.state, 'disconnected');
  await until(() => receiver.requests.some((r) => r.method === 'DELETE'), 'the DELETE');

  // No token, refresh token or secret in main's log.
  const logText = fs.readFileSync(main.state.logFile, 'utf8');
  assert.match(logText, /subscriptions: chatgpt: connected/);
  for (const secret of [push.body.accessToken, 'chatgpt-refresh', env.LH_SHELL_SECRET, env.LH_API_TOKEN, 'verifier-1']) {
    assert.ok(!logText.includes(secret), `log holds ${secret.slice(0, 12)}…`);
  }
  assert.equal(origin, main.state.origin);
});
