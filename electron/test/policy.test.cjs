'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const policy = require('../policy.cjs');

const ORIGIN = 'http://127.0.0.1:4567';

test('originFor builds the exact loopback origin and rejects non-ports', () => {
  assert.equal(policy.originFor(4567), ORIGIN);
  for (const bad of [0, -1, 65536, 1.5, '4567', null]) assert.throws(() => policy.originFor(bad), TypeError);
});

test('isSameOrigin parses URLs instead of prefix-matching', () => {
  assert.ok(policy.isSameOrigin(`${ORIGIN}/`, ORIGIN));
  assert.ok(policy.isSameOrigin(`${ORIGIN}/api/health?x=1#y`, ORIGIN));
  for (const url of [
    'http://127.0.0.1:45678/',
    'http://127.0.0.1:456/',
    'http://localhost:4567/',
    'https://127.0.0.1:4567/',
    'http://127.0.0.1:4567@evil.example/',
    'http://evil.example/?http://127.0.0.1:4567/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'not a url',
    '',
    null,
    undefined,
  ]) {
    assert.equal(policy.isSameOrigin(url, ORIGIN), false, String(url));
  }
});

test('the token is injected only for URLs starting with the exact origin and a slash', () => {
  assert.ok(policy.shouldInjectToken(`${ORIGIN}/api/health`, ORIGIN));
  assert.ok(policy.shouldInjectToken(`${ORIGIN}/`, ORIGIN));
  for (const url of [
    'http://127.0.0.1:45670/api/health',
    'http://127.0.0.1:4567@evil.example/api',
    'http://localhost:4567/api/health',
    'http://[::1]:4567/api/health',
    'https://openrouter.ai/api/v1',
    `ws://127.0.0.1:4567/`,
    ORIGIN,
  ]) {
    assert.equal(policy.shouldInjectToken(url, ORIGIN), false, url);
  }
  assert.equal(policy.shouldInjectToken(`${ORIGIN}/api`, null), false);
});

test('headersWithToken adds the token for the origin, strips page-set tokens elsewhere, never mutates', () => {
  const input = { Accept: 'application/json', 'X-LH-Token': 'forged' };
  const ours = policy.headersWithToken(`${ORIGIN}/api/chats`, input, ORIGIN, 'secret');
  assert.deepEqual(ours, { Accept: 'application/json', 'x-lh-token': 'secret' });
  const foreign = policy.headersWithToken('https://example.com/', input, ORIGIN, 'secret');
  assert.deepEqual(foreign, { Accept: 'application/json' });
  assert.deepEqual(input, { Accept: 'application/json', 'X-LH-Token': 'forged' });
  assert.deepEqual(policy.headersWithToken(`${ORIGIN}/`, undefined, ORIGIN, 'secret'), { 'x-lh-token': 'secret' });
});

test('navigation: inside the origin allowed, other web links external, everything else denied', () => {
  assert.equal(policy.navigationDecision(`${ORIGIN}/lesson/1`, ORIGIN), 'allow');
  assert.equal(policy.navigationDecision('https://en.wikipedia.org/wiki/Derivative', ORIGIN), 'external');
  assert.equal(policy.navigationDecision('http://127.0.0.1:9999/', ORIGIN), 'external');
  for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,hi', 'mailto:a@b.c', 'lh://x', 'nope']) {
    assert.equal(policy.navigationDecision(url, ORIGIN), 'deny', url);
  }
  // Before the server is up there is no origin: nothing is "inside".
  assert.equal(policy.navigationDecision(`${ORIGIN}/`, null), 'external');
  assert.equal(policy.windowOpenDecision('https://example.com/', ORIGIN), 'external');
  assert.equal(policy.windowOpenDecision(`${ORIGIN}/print`, ORIGIN), 'allow');
});

test('permission requests: microphone for the origin only; camera and everything else denied', () => {
  const mic = { requestingUrl: `${ORIGIN}/lesson`, mediaTypes: ['audio'] };
  assert.equal(policy.permissionRequestDecision('media', mic, ORIGIN), true);
  assert.equal(policy.permissionRequestDecision('media', { ...mic, mediaTypes: ['video'] }, ORIGIN), false);
  assert.equal(policy.permissionRequestDecision('media', { ...mic, mediaTypes: ['audio', 'video'] }, ORIGIN), false);
  assert.equal(policy.permissionRequestDecision('media', { ...mic, mediaTypes: [] }, ORIGIN), false);
  assert.equal(policy.permissionRequestDecision('media', { ...mic, requestingUrl: 'https://evil.example/' }, ORIGIN), false);
  assert.equal(policy.permissionRequestDecision('media', mic, null), false);
  for (const permission of ['geolocation', 'notifications', 'clipboard-read', 'midi', 'openExternal', 'fullscreen', 'display-capture']) {
    assert.equal(policy.permissionRequestDecision(permission, mic, ORIGIN), false, permission);
  }
});

test('permission checks follow the same rule', () => {
  assert.equal(policy.permissionCheckDecision('media', ORIGIN, { mediaType: 'audio' }, ORIGIN), true);
  assert.equal(policy.permissionCheckDecision('media', `${ORIGIN}/`, { mediaType: 'audio' }, ORIGIN), true);
  assert.equal(policy.permissionCheckDecision('media', ORIGIN, { mediaType: 'video' }, ORIGIN), false);
  assert.equal(policy.permissionCheckDecision('media', ORIGIN, { mediaType: 'unknown' }, ORIGIN), false);
  assert.equal(policy.permissionCheckDecision('media', 'https://evil.example', { mediaType: 'audio' }, ORIGIN), false);
  assert.equal(policy.permissionCheckDecision('media', '', { mediaType: 'audio', securityOrigin: `${ORIGIN}/` }, ORIGIN), true);
  assert.equal(policy.permissionCheckDecision('geolocation', ORIGIN, {}, ORIGIN), false);
});

test('providers and keys are validated', () => {
  for (const provider of ['openrouter', 'openai', 'openai-compatible']) assert.equal(policy.validateProvider(provider), provider);
  for (const bad of ['local', 'OPENAI', '__proto__', 'constructor', '', null, 1]) {
    assert.throws(() => policy.validateProvider(bad), TypeError, String(bad));
  }
  assert.equal(policy.validateApiKey('  sk-abc  '), 'sk-abc');
  for (const bad of ['', '   ', 'sk\nabc', 'a'.repeat(5000), 42, null]) assert.throws(() => policy.validateApiKey(bad), TypeError);
});

test('server command: frozen bundle when packaged, python -m server in development', () => {
  const packaged = policy.resolveServerCommand({ packaged: true, resourcesPath: '/opt/LH/resources', repoRoot: '/repo', platform: 'linux' });
  assert.deepEqual(packaged, {
    command: '/opt/LH/resources/server/learning-harness-server',
    args: ['--host', '127.0.0.1', '--port', '0'],
    cwd: '/opt/LH/resources/server',
  });
  const win = policy.resolveServerCommand({ packaged: true, resourcesPath: 'C:\\LH\\resources', platform: 'win32', port: 5000 });
  assert.equal(win.command, 'C:\\LH\\resources\\server\\learning-harness-server.exe');
  assert.deepEqual(win.args, ['--host', '127.0.0.1', '--port', '5000']);
  const dev = policy.resolveServerCommand({ packaged: false, repoRoot: '/repo', platform: 'linux', env: {} });
  assert.deepEqual(dev, { command: '/repo/.venv/bin/python', args: ['-m', 'server', '--host', '127.0.0.1', '--port', '0'], cwd: '/repo' });
  const custom = policy.resolveServerCommand({ packaged: false, repoRoot: '/repo', platform: 'linux', env: { LH_PYTHON: '/usr/bin/python3.11' } });
  assert.equal(custom.command, '/usr/bin/python3.11');
  const devWin = policy.resolveServerCommand({ packaged: false, repoRoot: 'C:\\repo', platform: 'win32', env: {} });
  assert.equal(devWin.command, 'C:\\repo\\.venv\\Scripts\\python.exe');
});

test('server env carries the data dir, token and stored keys; argv never does', () => {
  const base = { PATH: '/bin', LH_API_TOKEN: 'inherited', LH_OPENAI_API_KEY: 'from-env', ELECTRON_RUN_AS_NODE: '1' };
  const env = policy.serverEnv(base, { dataDir: '/u/data', token: 'tok', keys: { openrouter: 'sk-or' } });
  assert.equal(env.LH_DATA_DIR, '/u/data');
  assert.equal(env.LH_API_TOKEN, 'tok');
  assert.equal(env.LH_OPENROUTER_API_KEY, 'sk-or');
  assert.equal(env.LH_OPENAI_API_KEY, 'from-env');
  assert.equal(env.ELECTRON_RUN_AS_NODE, undefined);
  assert.equal(env.PATH, '/bin');
  assert.equal(base.LH_API_TOKEN, 'inherited');
  const stored = policy.serverEnv(base, { dataDir: '/d', token: 't', keys: { openai: 'sk-app' } });
  assert.equal(stored.LH_OPENAI_API_KEY, 'sk-app', 'a key stored in the app wins over the inherited one');
  assert.throws(() => policy.serverEnv({}, { dataDir: '/d', token: 't', keys: { local: 'x' } }), TypeError);
  const { args } = policy.resolveServerCommand({ packaged: true, resourcesPath: '/r', platform: 'linux' });
  assert.ok(!args.some((arg) => arg.includes('tok') || arg.includes('sk-')));
});

test('key status names sources, never keys', () => {
  const status = policy.keyStatus(['openai', 'deepgram'], { LH_OPENROUTER_API_KEY: 'sk-env', LH_BRAVE_API_KEY: 'br-env' }, 'os');
  assert.deepEqual(status, {
    storage: 'os',
    problem: null,
    providers: {
      openrouter: { set: true, source: 'env', env: 'LH_OPENROUTER_API_KEY' },
      openai: { set: true, source: 'app', env: 'LH_OPENAI_API_KEY' },
      'openai-compatible': { set: false, source: null, env: 'LH_OPENAI_COMPATIBLE_API_KEY' },
      tavily: { set: false, source: null, env: 'LH_TAVILY_API_KEY' },
      brave: { set: true, source: 'env', env: 'LH_BRAVE_API_KEY' },
      google: { set: false, source: null, env: 'LH_GOOGLE_SEARCH_API_KEY' },
      deepgram: { set: true, source: 'app', env: 'LH_DEEPGRAM_API_KEY' },
    },
  });
  assert.ok(!JSON.stringify(status).includes('sk-env') && !JSON.stringify(status).includes('br-env'));
  assert.equal(policy.keyStatus([], {}, 'unavailable', 'The key file was damaged.').problem, 'The key file was damaged.');
});

test('key providers: model, web search and dictation, each with the env var the server reads', () => {
  assert.deepEqual([...policy.PROVIDERS], ['openrouter', 'openai', 'openai-compatible', 'tavily', 'brave', 'google', 'deepgram']);
  // The same names as server/config.py SECRET_KEY_ENV (API_KEY_ENV + SEARCH_KEY_ENV + DICTATION_KEY_ENV).
  const config = require('node:fs').readFileSync(require('node:path').join(__dirname, '..', '..', 'server', 'config.py'), 'utf8');
  for (const [provider, env] of Object.entries(policy.API_KEY_ENV)) {
    assert.ok(config.includes(`"${provider}": "${env}"`), `${provider} -> ${env} in server/config.py`);
    assert.equal(policy.validateProvider(provider), provider);
  }
  for (const bad of ['local', 'chatgpt', '__proto__', 'toString', '', null]) assert.throws(() => policy.validateProvider(bad), TypeError);
  const env = policy.serverEnv({}, { dataDir: '/d', token: 't', keys: { tavily: 'tv-1', google: 'g-1', deepgram: 'dg-1' } });
  assert.equal(env.LH_TAVILY_API_KEY, 'tv-1');
  assert.equal(env.LH_GOOGLE_SEARCH_API_KEY, 'g-1');
  assert.equal(env.LH_DEEPGRAM_API_KEY, 'dg-1');
});
