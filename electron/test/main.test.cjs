'use strict';
/**
 * main.cjs wiring under plain Node: `electron` is a recording stub (helpers/fake-electron.cjs)
 * and the sidecar a fake, so these tests check what main registers with Electron and decides.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createFakeElectron, createFakeSidecar, loadMain, FakeWebContents } = require('./helpers/fake-electron.cjs');

const ORIGIN = 'http://127.0.0.1:4567';

async function boot(t, { electronOptions = {}, sidecarOptions = {} } = {}) {
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-main-'));
  t.after(() => fs.rmSync(userData, { recursive: true, force: true }));
  const { electron, calls } = createFakeElectron({ userData, ...electronOptions });
  const { sidecar, record } = createFakeSidecar(sidecarOptions);
  const main = loadMain({ electron, sidecar });
  const started = await main.start();
  return { main, electron, calls, record, userData, started };
}

function trustedEvent(url = `${ORIGIN}/settings`) {
  return { senderFrame: { url } };
}

test('one window, sandboxed and isolated, loading the server origin', async (t) => {
  const { calls, record, userData } = await boot(t);
  assert.equal(calls.sandboxEnabled, true);
  assert.equal(calls.windows.length, 1);
  const [win] = calls.windows;
  const prefs = win.options.webPreferences;
  assert.equal(prefs.contextIsolation, true);
  assert.equal(prefs.sandbox, true);
  assert.equal(prefs.nodeIntegration, false);
  assert.equal(prefs.nodeIntegrationInSubFrames, false);
  assert.equal(prefs.webviewTag, false);
  assert.equal(path.basename(prefs.preload), 'preload.cjs');
  assert.ok(fs.existsSync(prefs.preload));
  assert.deepEqual(win.loaded, [`${ORIGIN}/`]);
  // The server got the data dir and a fresh 256-bit token through its environment only.
  assert.equal(record.starts.length, 1);
  const [{ env, args, command }] = record.starts;
  assert.equal(env.LH_DATA_DIR, path.join(userData, 'data'));
  assert.match(env.LH_API_TOKEN, /^[0-9a-f]{64}$/);
  assert.ok(!args.join(' ').includes(env.LH_API_TOKEN));
  assert.deepEqual(args.slice(-5), ['server', '--host', '127.0.0.1', '--port', '0']);
  assert.match(command, /python/);
});

test('the token header is registered for the exact origin only', async (t) => {
  const { calls, record } = await boot(t);
  const token = record.starts[0].env.LH_API_TOKEN;
  assert.equal(calls.beforeSendHeaders.length, 1);
  const { filter, listener } = calls.beforeSendHeaders[0];
  assert.deepEqual(filter, { urls: [`${ORIGIN}/*`] });
  const send = (url, requestHeaders = { Accept: '*/*' }) => {
    let out;
    listener({ url, requestHeaders }, (response) => {
      out = response;
    });
    return out.requestHeaders;
  };
  assert.equal(send(`${ORIGIN}/api/health`)['x-lh-token'], token);
  assert.equal(send(`${ORIGIN}/`)['x-lh-token'], token);
  for (const url of ['http://127.0.0.1:45678/api/health', 'http://localhost:4567/api/health', 'http://127.0.0.1:4567@evil.example/api', 'https://openrouter.ai/api/v1/chat']) {
    assert.equal(send(url)['x-lh-token'], undefined, url);
  }
  assert.equal(send('https://evil.example/', { 'x-lh-token': 'page-set' })['x-lh-token'], undefined);
});

test('permissions: microphone for the origin, camera and the rest denied', async (t) => {
  const { calls } = await boot(t);
  const request = (permission, details) =>
    new Promise((resolve) => calls.permissionRequest({}, permission, resolve, details));
  assert.equal(await request('media', { requestingUrl: `${ORIGIN}/lesson`, mediaTypes: ['audio'] }), true);
  assert.equal(await request('media', { requestingUrl: `${ORIGIN}/lesson`, mediaTypes: ['video'] }), false);
  assert.equal(await request('media', { requestingUrl: 'https://evil.example/', mediaTypes: ['audio'] }), false);
  assert.equal(await request('geolocation', { requestingUrl: `${ORIGIN}/` }), false);
  assert.equal(await request('notifications', { requestingUrl: `${ORIGIN}/` }), false);
  assert.equal(calls.permissionCheck({}, 'media', ORIGIN, { mediaType: 'audio' }), true);
  assert.equal(calls.permissionCheck({}, 'media', ORIGIN, { mediaType: 'video' }), false);
  assert.equal(calls.permissionCheck({}, 'media', 'http://127.0.0.1:1', { mediaType: 'audio' }), false);
  assert.equal(calls.devicePermission({ deviceType: 'usb', origin: ORIGIN }), false);
});

test('navigation to a foreign URL is prevented and opened externally; other schemes denied', async (t) => {
  const { calls } = await boot(t);
  const contents = calls.windows[0].webContents;
  const foreign = contents.navigate('will-navigate', 'https://en.wikipedia.org/wiki/Limit');
  assert.equal(foreign.defaultPrevented, true);
  assert.deepEqual(calls.openExternal, ['https://en.wikipedia.org/wiki/Limit']);
  const inside = contents.navigate('will-navigate', `${ORIGIN}/lesson/2`);
  assert.equal(inside.defaultPrevented, false);
  const file = contents.navigate('will-navigate', 'file:///etc/passwd');
  assert.equal(file.defaultPrevented, true);
  const redirect = contents.navigate('will-redirect', 'https://evil.example/');
  assert.equal(redirect.defaultPrevented, true);
  assert.deepEqual(calls.openExternal, ['https://en.wikipedia.org/wiki/Limit', 'https://evil.example/']);
  const webview = contents.navigate('will-attach-webview', 'about:blank');
  assert.equal(webview.defaultPrevented, true);
});

test('window.open: same origin in a sandboxed window, web links external, the rest denied', async (t) => {
  const { calls } = await boot(t);
  const handler = calls.windows[0].webContents.windowOpenHandler;
  const same = handler({ url: `${ORIGIN}/print` });
  assert.equal(same.action, 'allow');
  assert.equal(same.overrideBrowserWindowOptions.webPreferences.sandbox, true);
  assert.equal(same.overrideBrowserWindowOptions.webPreferences.contextIsolation, true);
  assert.deepEqual(handler({ url: 'https://example.com/' }), { action: 'deny' });
  assert.deepEqual(calls.openExternal, ['https://example.com/']);
  assert.deepEqual(handler({ url: 'javascript:alert(1)' }), { action: 'deny' });
  assert.deepEqual(handler({ url: 'file:///C:/Windows' }), { action: 'deny' });
  assert.deepEqual(calls.openExternal, ['https://example.com/']);
});

test('every web contents is hardened, not only the main window', async (t) => {
  const { electron, calls } = await boot(t);
  const other = new FakeWebContents();
  electron.app.emit('web-contents-created', {}, other);
  assert.equal(other.navigate('will-navigate', 'https://example.org/').defaultPrevented, true);
  assert.equal(typeof other.windowOpenHandler, 'function');
  assert.ok(calls.openExternal.includes('https://example.org/'));
});

test('a second instance quits at once; the first focuses its window', async (t) => {
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-main-'));
  t.after(() => fs.rmSync(userData, { recursive: true, force: true }));
  const { electron, calls } = createFakeElectron({ userData, singleInstance: false });
  const { sidecar, record } = createFakeSidecar();
  const started = await loadMain({ electron, sidecar }).start();
  assert.equal(started, false);
  assert.equal(calls.quit, 1);
  assert.equal(record.starts.length, 0);
  assert.equal(calls.windows.length, 0);

  const first = await boot(t);
  first.electron.app.emit('second-instance', {}, ['lh'], '/');
  assert.equal(first.calls.windows[0].focused, 1);
});

test('a server that fails to start shows an error box and quits, without a window', async (t) => {
  const failure = new Error('the server exited with code 3 before it was ready\n--- server stderr ---\nerror: another Learning Harness server (pid 77) is already using the data dir');
  const { calls } = await boot(t, { sidecarOptions: { failWith: failure } });
  assert.equal(calls.windows.length, 0);
  assert.equal(calls.errorBoxes.length, 1);
  assert.match(calls.errorBoxes[0].title, /could not start/);
  assert.match(calls.errorBoxes[0].content, /already using the data dir/);
  assert.ok(calls.quit >= 1);
});

test('a server that dies later is reported, and the app quits', async (t) => {
  const { main, calls } = await boot(t);
  main.state.server.crash(1);
  await new Promise((r) => setImmediate(r));
  assert.equal(calls.errorBoxes.length, 1);
  assert.match(calls.errorBoxes[0].content, /exited with code 1/);
  assert.ok(calls.quit >= 1);
});

test('before-quit stops the server (graceful then tree) before quitting for real', async (t) => {
  const { electron, calls, record, main } = await boot(t);
  const event = electron.app.quit();
  assert.equal(event.defaultPrevented, true, 'the first quit waits for the server');
  await main.state.queue;
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(record.stops, 1);
  assert.equal(calls.quit, 2, 'quits again once the server is stopped');
  assert.equal(main.state.server, null);
});

test('key IPC: validated, trusted sender only, stored encrypted, server restarted with the key in env', async (t) => {
  const { calls, record, userData, main } = await boot(t);
  const set = calls.ipc['lh:set-api-key'];
  const del = calls.ipc['lh:delete-api-key'];
  const status = calls.ipc['lh:api-key-status'];
  await assert.rejects(set(trustedEvent('https://evil.example/'), 'openai', 'sk-1'), /refused/);
  await assert.rejects(set(trustedEvent(), 'local', 'sk-1'), /unknown provider/);
  await assert.rejects(set(trustedEvent(), 'openai', ''), /empty/);
  assert.equal(record.starts.length, 1, 'refused calls restart nothing');

  const after = await set(trustedEvent(), 'openai', 'sk-test-key');
  assert.deepEqual(after.providers.openai, { set: true, source: 'app', env: 'LH_OPENAI_API_KEY' });
  assert.ok(!JSON.stringify(after).includes('sk-test-key'));
  assert.equal(record.stops, 1);
  assert.equal(record.starts.length, 2);
  const restarted = record.starts[1];
  assert.equal(restarted.env.LH_OPENAI_API_KEY, 'sk-test-key');
  assert.equal(restarted.env.LH_API_TOKEN, record.starts[0].env.LH_API_TOKEN, 'same token for the whole launch');
  assert.deepEqual(restarted.args.slice(-2), ['--port', '4567'], 'keeps its port so the page stays valid');
  assert.ok(!restarted.args.join(' ').includes('sk-test-key'));
  assert.ok(!fs.readFileSync(path.join(userData, 'api-keys.json'), 'utf8').includes('sk-test-key'));
  assert.equal(main.state.origin, ORIGIN);

  const current = await status(trustedEvent());
  assert.equal(current.providers.openai.set, true);
  await del(trustedEvent(), 'openai');
  assert.equal(record.starts.length, 3);
  assert.equal(record.starts[2].env.LH_OPENAI_API_KEY, process.env.LH_OPENAI_API_KEY);
  await assert.rejects(status(trustedEvent('file:///x')), /refused/);
});

test('packaged: the frozen server from resources/server', async (t) => {
  const saved = process.resourcesPath;
  process.resourcesPath = path.join(os.tmpdir(), 'LH', 'resources');
  t.after(() => {
    process.resourcesPath = saved;
  });
  const { record } = await boot(t, { electronOptions: { packaged: true } });
  const exe = process.platform === 'win32' ? 'learning-harness-server.exe' : 'learning-harness-server';
  assert.equal(record.starts[0].command, path.join(process.resourcesPath, 'server', exe));
  assert.deepEqual(record.starts[0].args, ['--host', '127.0.0.1', '--port', '0']);
});
