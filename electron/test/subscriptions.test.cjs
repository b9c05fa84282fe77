'use strict';
/**
 * Subscription controllers against loopback fakes of each provider (device code, polling,
 * refresh, expiry, revocation), the encrypted credential files, and the push of scoped auth to
 * a fake server. The clock, sleeps and timers are injected so nothing waits for real.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Subscriptions, isOpenableVerificationUri } = require('../subscriptions/index.cjs');
const { FlowCancelled } = require('../subscriptions/device-flow.cjs');
const { createFakeElectron } = require('./helpers/fake-electron.cjs');
const { startFakeProviders, startAuthReceiver } = require('./helpers/fake-providers.cjs');

const START_MS = 1_800_000_000_000;

async function harness(t, { electronOptions = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-subs-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const clock = { ms: START_MS, nowS: () => Math.floor(clock.ms / 1000) };
  const fake = await startFakeProviders(clock);
  const receiver = await startAuthReceiver();
  t.after(() => Promise.all([fake.close(), receiver.close()]));
  const { electron } = createFakeElectron({ userData: dir, ...electronOptions });
  const h = { dir, clock, fake, receiver, delays: [], timers: [], logs: [], opened: [], safeStorage: electron.safeStorage };
  h.make = () =>
    new Subscriptions({
      dir: path.join(dir, 'subscriptions'),
      safeStorage: electron.safeStorage,
      env: fake.env,
      platform: 'linux',
      now: () => clock.ms,
      sleep: async (ms, signal) => {
        if (signal && signal.aborted) throw new FlowCancelled();
        h.delays.push(ms);
        clock.ms += ms;
        await new Promise((r) => setImmediate(r));
        if (signal && signal.aborted) throw new FlowCancelled();
      },
      setTimer: (fn, ms) => {
        const timer = { fn, ms, cleared: false };
        h.timers.push(timer);
        return timer;
      },
      clearTimer: (timer) => {
        timer.cleared = true;
      },
      retryMs: 30000,
      log: (m) => h.logs.push(m),
      openExternal: (url) => h.opened.push(url),
      target: () => ({ origin: receiver.base, token: 'launch-token', secret: 'shell-secret' }),
    });
  h.subs = h.make();
  h.liveTimer = () => h.timers.filter((x) => !x.cleared).at(-1);
  h.file = (id) => path.join(dir, 'subscriptions', `${id}.json`);
  return h;
}

async function until(predicate, what = 'condition') {
  const deadline = Date.now() + 3000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function connected(h, id) {
  await until(async () => (await h.subs.status()).providers[id].state !== 'pending', `${id} to leave pending`);
  return (await h.subs.status()).providers[id];
}

/** Every token the fakes issued, as they appear in the recorded answers. */
function assertNoSecrets(h, text, extra = []) {
  for (const secret of ['chatgpt-refresh', 'xai-refresh', 'gho_github_token_1', 'secret-body-text', 'verifier-1', 'auth-code-1', ...extra]) {
    assert.ok(!text.includes(secret), `found ${secret}`);
  }
}

test('ChatGPT: device code, pending polls, PKCE exchange, encrypted 0600 file, scoped push with both headers', async (t) => {
  const h = await harness(t);
  h.fake.polls.chatgpt = ['pending', 'pending', 'granted'];
  const pending = (await h.subs.login('chatgpt')).providers.chatgpt;
  assert.equal(pending.state, 'pending');
  assert.equal(pending.userCode, 'CHAT-1234');
  assert.equal(pending.verificationUri, `${h.fake.base}/codex/device`);
  assert.equal(pending.expiresAt, Math.floor(START_MS / 1000) + 900);
  assert.deepEqual(h.opened, [`${h.fake.base}/codex/device`]);

  const status = await connected(h, 'chatgpt');
  assert.equal(status.state, 'connected', JSON.stringify(status));
  assert.equal(status.account, 'learner@example.com');
  assert.equal(status.error, null);
  assert.equal(h.fake.count('POST', '/api/accounts/deviceauth/token'), 3);
  const exchange = h.fake.requests.find((r) => r.path === '/oauth/token');
  assert.equal(exchange.body.code_verifier, 'verifier-1');
  assert.equal(exchange.body.redirect_uri, `${h.fake.base}/deviceauth/callback`);
  assert.equal(exchange.body.client_id, 'app_EMoamEEZ73f0CkXaXp7hrann');

  const file = h.file('chatgpt');
  if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const raw = fs.readFileSync(file, 'utf8');
  assert.ok(!raw.includes('chatgpt-refresh') && !raw.includes('acct-42'), 'nothing readable on disk');

  await until(() => h.receiver.requests.length === 1, 'the push');
  const [push] = h.receiver.requests;
  assert.equal(push.method, 'PUT');
  assert.equal(push.path, '/api/shell/subscription-auth/chatgpt');
  assert.equal(push.headers['x-lh-token'], 'launch-token');
  assert.equal(push.headers['x-lh-shell-secret'], 'shell-secret');
  assert.deepEqual(Object.keys(push.body).sort(), ['accessToken', 'accountId', 'baseUrl', 'expiresAt']);
  assert.equal(push.body.accountId, 'acct-42');
  assert.equal(push.body.baseUrl, `${h.fake.base}/codex`);
  assert.equal(push.body.expiresAt, Math.floor(h.clock.ms / 1000) + 3600);
  assertNoSecrets(h, JSON.stringify(push.body));
  assertNoSecrets(h, h.logs.join('\n'), [push.body.accessToken]);
  assertNoSecrets(h, JSON.stringify(await h.subs.status()), [push.body.accessToken]);
});

test('GitHub Copilot: pending -> slow_down (+5 s, or the interval GitHub sends) -> token exchange with the saved GitHub token', async (t) => {
  const h = await harness(t);
  h.fake.polls['github-copilot-subscription'] = ['pending', 'slow_down', 'granted'];
  const id = 'github-copilot-subscription';
  const pending = (await h.subs.login(id)).providers[id];
  assert.equal(pending.userCode, 'GHUB-5678');
  assert.equal(pending.verificationUri, `${h.fake.base}/login/device`);
  const status = await connected(h, id);
  assert.equal(status.state, 'connected', JSON.stringify(status));
  assert.equal(status.account, 'octo-learner');
  assert.deepEqual(h.delays, [5000, 5000, 10000]);
  const device = h.fake.requests.find((r) => r.path === '/login/device/code');
  assert.equal(device.body.client_id, 'Iv1.b507a08c87ecfe98');
  assert.equal(device.body.scope, 'read:user');
  const exchange = h.fake.requests.find((r) => r.path === '/copilot_internal/v2/token');
  assert.equal(exchange.headers.authorization, 'token gho_github_token_1');
  assert.ok(exchange.headers['editor-version']);
  await until(() => h.receiver.requests.length === 1, 'the push');
  const [push] = h.receiver.requests;
  assert.match(push.body.accessToken, /^tid=copilot-/);
  assert.equal(push.body.baseUrl, `${h.fake.base}/copilot`);
  assert.equal(push.body.accountId, null);
  assertNoSecrets(h, JSON.stringify(push.body));
  assertNoSecrets(h, h.logs.join('\n'), [push.body.accessToken]);

  // Renewal is a new exchange with the saved GitHub token: it never leaves main.
  h.liveTimer().fn();
  await until(() => h.receiver.requests.length === 2, 'the second push');
  assert.notEqual(h.receiver.requests[1].body.accessToken, push.body.accessToken);
});

test('xAI: RFC 8628 polling (slow_down twice: 5 -> 10 -> 15 s), refresh-token grant', async (t) => {
  const h = await harness(t);
  const id = 'xai-subscription';
  h.fake.polls[id] = ['pending', 'slow_down', 'slow_down', 'granted'];
  const pending = (await h.subs.login(id)).providers[id];
  assert.equal(pending.verificationUri, `${h.fake.base}/device?user_code=GROK-9012`);
  const status = await connected(h, id);
  assert.equal(status.state, 'connected', JSON.stringify(status));
  assert.equal(status.account, 'grok@example.com');
  assert.deepEqual(h.delays, [5000, 5000, 10000, 15000]);
  await until(() => h.receiver.requests.length === 1, 'the push');
  assert.equal(h.receiver.requests[0].body.baseUrl, `${h.fake.base}/xai/v1`);

  // The refresh is scheduled 5 minutes before expiry.
  const timer = h.liveTimer();
  assert.equal(timer.ms, (3600 - 300) * 1000);
  h.clock.ms += timer.ms;
  timer.fn();
  await until(() => h.receiver.requests.length === 2, 'the push after renewal');
  const refresh = h.fake.requests.filter((r) => r.path === '/oauth2/token').at(-1);
  assert.equal(refresh.body.grant_type, 'refresh_token');
  assert.match(refresh.body.refresh_token, /^xai-refresh-/);
  assert.equal(h.receiver.requests[1].body.expiresAt, Math.floor(h.clock.ms / 1000) + 3600);
});

test('expired_token and access_denied end the login with a clear status; cancel stops polling', async (t) => {
  const h = await harness(t);
  h.fake.polls['xai-subscription'] = ['pending', 'expired'];
  await h.subs.login('xai-subscription');
  const expired = await connected(h, 'xai-subscription');
  assert.equal(expired.state, 'error');
  assert.match(expired.error, /code expired.*Connect again/);

  h.fake.polls['github-copilot-subscription'] = ['denied'];
  await h.subs.login('github-copilot-subscription');
  const denied = await connected(h, 'github-copilot-subscription');
  assert.equal(denied.state, 'error');
  assert.match(denied.error, /declined/);

  h.fake.polls.chatgpt = ['pending'];
  await h.subs.login('chatgpt');
  await until(() => h.fake.count('POST', '/api/accounts/deviceauth/token') >= 1, 'a poll');
  const cancelled = (await h.subs.cancel('chatgpt')).providers.chatgpt;
  assert.equal(cancelled.state, 'disconnected');
  await new Promise((r) => setTimeout(r, 30)); // a poll already on the wire may still land
  const polls = h.fake.count('POST', '/api/accounts/deviceauth/token');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(h.fake.count('POST', '/api/accounts/deviceauth/token'), polls, 'no poll after cancel');
  assert.equal(fs.existsSync(h.file('chatgpt')), false);
});

test('two windows logging in at once get one flow (one code, one poll loop)', async (t) => {
  const h = await harness(t);
  h.fake.polls.chatgpt = ['pending', 'granted'];
  const [a, b] = await Promise.all([h.subs.login('chatgpt'), h.subs.login('chatgpt')]);
  assert.equal(a.providers.chatgpt.userCode, 'CHAT-1234');
  assert.deepEqual(a.providers.chatgpt, b.providers.chatgpt);
  const again = await h.subs.login('chatgpt'); // while pending: the same pending status
  assert.equal(again.providers.chatgpt.state === 'pending' || again.providers.chatgpt.state === 'connected', true);
  await connected(h, 'chatgpt');
  assert.equal(h.fake.count('POST', '/api/accounts/deviceauth/usercode'), 1);
  assert.equal(h.fake.count('POST', '/oauth/token'), 1);
  assert.equal(h.opened.length, 1);
});

test('one serialized refresh per provider: concurrent callers share one request', async (t) => {
  const h = await harness(t);
  await h.subs.login('chatgpt');
  await connected(h, 'chatgpt');
  h.fake.refreshDelayMs = 40;
  const controller = h.subs.controller('chatgpt');
  const before = h.fake.count('POST', '/oauth/token');
  const timer = h.liveTimer();
  const results = await Promise.all([controller.refresh(), controller.refresh(), (timer.fn(), controller.refresh()), h.subs.resync()]);
  assert.equal(h.fake.count('POST', '/oauth/token') - before, 1);
  assert.equal(results[0].state, 'connected');
  assert.equal(controller.refreshing, null);
});

test('revocation: refresh answered invalid_grant -> error "revoked; connect again", file gone, auth withdrawn', async (t) => {
  const h = await harness(t);
  for (const [id, path_] of [['chatgpt', '/oauth/token'], ['xai-subscription', '/oauth2/token']]) {
    await h.subs.login(id);
    await connected(h, id);
    h.fake.refresh[id] = 'revoked';
    const status = await h.subs.controller(id).refresh();
    assert.equal(status.state, 'error', id);
    assert.match(status.error, /revoked.*connect again/, id);
    assert.equal(fs.existsSync(h.file(id)), false, id);
    await until(() => h.receiver.requests.some((r) => r.method === 'DELETE' && r.path.endsWith(`/${id}`)), `DELETE ${id}`);
    assert.ok(h.fake.count('POST', path_) >= 2);
  }
  // Copilot: the saved GitHub token no longer works.
  const id = 'github-copilot-subscription';
  await h.subs.login(id);
  await connected(h, id);
  h.fake.refresh[id] = 'revoked';
  const copilot = await h.subs.controller(id).refresh();
  assert.match(copilot.error, /revoked.*connect again/);
  assertNoSecrets(h, h.logs.join('\n'));
  assertNoSecrets(h, JSON.stringify(await h.subs.status()));
});

test('expiry: a renewal that fails keeps trying; an expired token shows an error until it works', async (t) => {
  const h = await harness(t);
  await h.subs.login('chatgpt');
  await connected(h, 'chatgpt');
  await until(() => h.receiver.requests.length === 1, 'the push');
  h.fake.refresh.chatgpt = 'down';
  h.clock.ms += 3700 * 1000; // past expiry
  const failed = await h.subs.controller('chatgpt').refresh();
  assert.equal(failed.state, 'error');
  assert.match(failed.error, /expired and renewing it failed \(The ChatGPT token renewal failed \(HTTP 503\)\)/);
  const retry = h.liveTimer();
  assert.equal(retry.ms, 30000);
  h.fake.refresh.chatgpt = 'ok';
  retry.fn();
  await until(async () => (await h.subs.status()).providers.chatgpt.state === 'connected', 'renewed');
  await until(() => h.receiver.requests.length === 2, 'the push after renewal');
  assert.equal(h.receiver.requests[1].method, 'PUT');
});

test('a saved connection survives a restart; resync after a server start pushes it again (renewing when due)', async (t) => {
  const h = await harness(t);
  await h.subs.login('chatgpt');
  await connected(h, 'chatgpt');
  await until(() => h.receiver.requests.length === 1, 'the push');
  h.subs.close();

  const second = h.make();
  const status = await second.status();
  assert.equal(status.mode, 'desktop');
  assert.equal(status.providers.chatgpt.state, 'connected');
  assert.equal(status.providers.chatgpt.account, 'learner@example.com');
  assert.equal(status.providers['xai-subscription'].state, 'disconnected');
  await second.resync();
  assert.equal(h.receiver.requests.length, 2);
  assert.deepEqual(h.receiver.requests[1].body, h.receiver.requests[0].body);

  // Near expiry: resync renews first, then pushes the new token.
  h.clock.ms += 3590 * 1000;
  const refreshes = h.fake.count('POST', '/oauth/token');
  await second.resync();
  assert.equal(h.fake.count('POST', '/oauth/token'), refreshes + 1);
  assert.notEqual(h.receiver.requests.at(-1).body.accessToken, h.receiver.requests[0].body.accessToken);
  second.close();
});

test('a failed push is logged without the token and retried at the next renewal', async (t) => {
  const h = await harness(t);
  h.receiver.status = 500;
  await h.subs.login('xai-subscription');
  const status = await connected(h, 'xai-subscription');
  assert.equal(status.state, 'connected');
  await until(() => h.logs.some((m) => m.includes('failed (HTTP 500)')), 'the failure log');
  h.receiver.status = 204;
  h.liveTimer().fn();
  await until(() => h.receiver.requests.length === 2, 'the retry');
  const tokens = h.receiver.requests.map((r) => r.body.accessToken);
  assertNoSecrets(h, h.logs.join('\n'), tokens);
  // No server at all: skipped, logged, no crash.
  const lonely = new Subscriptions({ dir: path.join(h.dir, 'other'), safeStorage: h.safeStorage, env: h.fake.env, log: (m) => h.logs.push(m) });
  assert.equal(await lonely.push('chatgpt', { accessToken: 'x', expiresAt: 1 }), false);
});

test('credential files: wrong permissions, garbage, foreign ciphertext -> error status, file set aside, no crash', async (t) => {
  const h = await harness(t);
  const dir = path.join(h.dir, 'subscriptions');
  fs.mkdirSync(dir, { recursive: true });
  const sealed = (await h.safeStorage.encryptStringAsync(JSON.stringify({ accessToken: 'a', expiresAt: 9e9, refreshToken: 'r' }))).toString('base64');
  fs.writeFileSync(h.file('chatgpt'), JSON.stringify({ version: 1, provider: 'chatgpt', sealed }), { mode: 0o644 });
  fs.chmodSync(h.file('chatgpt'), 0o644);
  fs.writeFileSync(h.file('xai-subscription'), '{not json', { mode: 0o600 });
  fs.writeFileSync(h.file('github-copilot-subscription'), JSON.stringify({ version: 1, provider: 'github-copilot-subscription', sealed: Buffer.from('other-machine').toString('base64') }), { mode: 0o600 });
  const status = (await h.subs.status()).providers;
  if (process.platform !== 'win32') {
    assert.equal(status.chatgpt.state, 'error');
    assert.match(status.chatgpt.error, /other users.*set aside.*connect again/);
  }
  assert.equal(status['xai-subscription'].state, 'error');
  assert.match(status['xai-subscription'].error, /damaged/);
  assert.equal(status['github-copilot-subscription'].state, 'error');
  assert.match(status['github-copilot-subscription'].error, /could not be decrypted/);
  const names = fs.readdirSync(dir).sort();
  assert.equal(names.filter((n) => n.endsWith('.json')).length, process.platform === 'win32' ? 1 : 0);
  assert.equal(names.filter((n) => n.includes('.rejected-')).length, process.platform === 'win32' ? 2 : 3);
  for (const name of names.filter((n) => n.includes('.rejected-'))) {
    if (process.platform !== 'win32') assert.equal(fs.statSync(path.join(dir, name)).mode & 0o777, 0o600);
  }
  // Connecting again works and writes a fresh owner-only file.
  await h.subs.login('xai-subscription');
  assert.equal((await connected(h, 'xai-subscription')).state, 'connected');
  assert.ok(fs.existsSync(h.file('xai-subscription')));
});

test('no OS key store (Linux basic_text): the login is not saved and the status says why', async (t) => {
  const h = await harness(t, { electronOptions: { backend: 'basic_text' } });
  await h.subs.login('chatgpt');
  const status = await connected(h, 'chatgpt');
  assert.equal(status.state, 'error');
  assert.match(status.error, /No OS key store/);
  assert.equal(fs.existsSync(h.file('chatgpt')), false);
  assert.equal(h.receiver.requests.length, 0);
});

test('Copilot without a subscription, unknown providers, logout', async (t) => {
  const h = await harness(t);
  h.fake.copilot = 'no-subscription';
  await h.subs.login('github-copilot-subscription');
  const refused = await connected(h, 'github-copilot-subscription');
  assert.equal(refused.state, 'error');
  assert.match(refused.error, /no active Copilot subscription/);
  await assert.rejects(h.subs.login('openai'), /unknown subscription/);
  await assert.rejects(h.subs.logout('../x'), /unknown subscription/);

  await h.subs.login('chatgpt');
  await connected(h, 'chatgpt');
  const out = (await h.subs.logout('chatgpt')).providers.chatgpt;
  assert.equal(out.state, 'disconnected');
  assert.equal(fs.existsSync(h.file('chatgpt')), false);
  await until(() => h.receiver.requests.some((r) => r.method === 'DELETE'), 'the DELETE');
  const del = h.receiver.requests.find((r) => r.method === 'DELETE');
  assert.equal(del.headers['x-lh-shell-secret'], 'shell-secret');
  assert.equal(del.headers['x-lh-token'], 'launch-token');
});

test('verification pages open only over https (or http on loopback)', () => {
  assert.equal(isOpenableVerificationUri('https://github.com/login/device'), true);
  assert.equal(isOpenableVerificationUri('http://127.0.0.1:5555/device'), true);
  assert.equal(isOpenableVerificationUri('http://localhost:5555/device'), true);
  assert.equal(isOpenableVerificationUri('http://example.com/device'), false);
  assert.equal(isOpenableVerificationUri('javascript:alert(1)'), false);
  assert.equal(isOpenableVerificationUri('file:///etc/passwd'), false);
  assert.equal(isOpenableVerificationUri('https://user:pw@github.com/'), false);
  assert.equal(isOpenableVerificationUri(undefined), false);
});

test('a saved login found expired at start is renewed at once, then pushed', async (t) => {
  const h = await harness(t);
  await h.subs.login('xai-subscription');
  await connected(h, 'xai-subscription');
  await until(() => h.receiver.requests.length === 1, 'the push');
  h.subs.close();
  h.clock.ms += 2 * 3600 * 1000; // the app was closed for two hours
  const refreshes = h.fake.requests.filter((r) => r.path === '/oauth2/token' && r.body.grant_type === 'refresh_token').length;
  const later = h.make();
  await later.status();
  await until(() => h.fake.requests.filter((r) => r.path === '/oauth2/token' && r.body.grant_type === 'refresh_token').length === refreshes + 1, 'the renewal');
  await until(() => h.receiver.requests.length === 2, 'the push of the renewed token');
  assert.equal(h.receiver.requests[1].body.expiresAt, Math.floor(h.clock.ms / 1000) + 3600);
  await later.resync(); // the server start right after: shares or follows the renewal, pushes a valid token
  assert.ok(h.receiver.requests.at(-1).body.expiresAt > Math.floor(h.clock.ms / 1000));
  assert.equal((await later.status()).providers['xai-subscription'].state, 'connected');
  later.close();
});
