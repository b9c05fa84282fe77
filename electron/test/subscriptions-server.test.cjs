'use strict';
/**
 * The scoped-auth push from main's Subscriptions against the real server (`python -m server`
 * from the project venv, in desktop mode: LH_API_TOKEN and LH_SHELL_SECRET in its environment):
 * PUT and DELETE with the secret are accepted (204); a wrong secret is refused (403) and logged
 * without any token. Skipped when the venv is missing.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const sidecar = require('../sidecar.cjs');
const policy = require('../policy.cjs');
const { Subscriptions } = require('../subscriptions/index.cjs');

const ROOT = path.resolve(__dirname, '..', '..');
const WIN = process.platform === 'win32';
const PYTHON = process.env.LH_PYTHON || path.join(ROOT, '.venv', WIN ? 'Scripts/python.exe' : 'bin/python');

test('the push reaches the real server: accepted with the shell secret, refused without it', { skip: !fs.existsSync(PYTHON) && 'no project venv' }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-subs-server-'));
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const token = crypto.randomBytes(32).toString('hex');
  const secret = crypto.randomBytes(32).toString('hex');
  const base = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.endsWith('_API_KEY')) base[k] = v;
  Object.assign(base, { LH_PYTHON: PYTHON, LH_LOG_LEVEL: 'warning', LH_KEYRING: 'off', PYTHON_KEYRING_BACKEND: 'keyring.backends.fail.Keyring', PYTHONPATH: ROOT });
  const { command, args, cwd } = policy.resolveServerCommand({ packaged: false, repoRoot: ROOT, platform: process.platform, env: base, port: 0 });
  const server = await sidecar.startServer({
    command,
    args,
    cwd,
    env: policy.serverEnv(base, { dataDir, token, shellSecret: secret }),
    readyTimeoutMs: 60000,
    log: () => {},
  });
  t.after(() => server.stop({ graceMs: 5000 }));
  const logs = [];
  const subs = (sec) =>
    new Subscriptions({ dir: path.join(dataDir, 'subs'), safeStorage: {}, log: (m) => logs.push(m), target: () => ({ origin: server.origin, token, secret: sec }) });
  const auth = { accessToken: 'tid=copilot-1;exp=1;sku=x', expiresAt: Math.floor(Date.now() / 1000) + 1800, accountId: null, baseUrl: 'https://api.githubcopilot.com' };

  assert.equal(await subs(secret).push('github-copilot-subscription', auth), true);
  assert.equal(await subs(secret).push('github-copilot-subscription', null), true);
  assert.equal(await subs(crypto.randomBytes(32).toString('hex')).push('chatgpt', { ...auth, accountId: 'acct-1' }), false);
  assert.equal(logs.length, 1);
  assert.match(logs[0], /chatgpt: pushing the login to the server failed \(HTTP 403\)/);
  assert.ok(!logs.join('\n').includes('tid=copilot-1'));
});
