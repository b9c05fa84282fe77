'use strict';
/**
 * updater.cjs with a fake autoUpdater (an EventEmitter recording its calls): when auto-update runs,
 * and that no failure of electron-updater ever escapes as an exception or an unhandled rejection.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const { EventEmitter } = require('node:events');
const path = require('node:path');
const { startAutoUpdate } = require('../updater.cjs');

class FakeUpdater extends EventEmitter {
  constructor(check) {
    super();
    this.checks = 0;
    this.check = check || (() => Promise.resolve({ updateInfo: { version: '9.9.9' } }));
  }

  checkForUpdatesAndNotify() {
    this.checks += 1;
    return this.check();
  }
}

function setup(t, { packaged = true, env = {}, updater = new FakeUpdater(), loadUpdater } = {}) {
  const lines = [];
  const handle = startAutoUpdate({
    app: { isPackaged: packaged },
    env,
    log: (line) => lines.push(line),
    loadUpdater: loadUpdater || (() => updater),
    intervalMs: 60_000,
  });
  if (handle) t.after(() => handle.stop());
  return { handle, lines, updater };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('a packaged app checks the releases once at start, logging through the shell log', async (t) => {
  const { handle, lines, updater } = setup(t);
  assert.ok(handle);
  assert.equal(updater.checks, 1);
  assert.equal(typeof updater.logger.info, 'function');
  updater.logger.info('Checking for update');
  updater.emit('update-downloaded', { version: '9.9.9' });
  await tick();
  assert.deepEqual(lines, [
    'auto-update: Checking for update',
    'auto-update: version 9.9.9 downloaded; it installs when the app quits',
  ]);
});

test('not packaged (development): off, electron-updater is never loaded', (t) => {
  let loaded = false;
  const { handle, lines } = setup(t, {
    packaged: false,
    loadUpdater: () => {
      loaded = true;
      return new FakeUpdater();
    },
  });
  assert.equal(handle, null);
  assert.equal(loaded, false);
  assert.deepEqual(lines, ['auto-update: off (not a packaged app)']);
});

test('LH_NO_UPDATE=1 turns it off; any other value does not', (t) => {
  const off = setup(t, { env: { LH_NO_UPDATE: '1' } });
  assert.equal(off.handle, null);
  assert.equal(off.updater.checks, 0);
  assert.deepEqual(off.lines, ['auto-update: off (LH_NO_UPDATE=1)']);
  const on = setup(t, { env: { LH_NO_UPDATE: '0' } });
  assert.ok(on.handle);
  assert.equal(on.updater.checks, 1);
});

test('a rejected check (offline, no release, unsigned macOS app) is one log line, not a crash', async (t) => {
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));
  const updater = new FakeUpdater(() => Promise.reject(new Error('net::ERR_INTERNET_DISCONNECTED\nstack...')));
  const { handle, lines } = setup(t, { updater });
  assert.equal(await handle.check(), null);
  await tick();
  assert.ok(lines.includes('auto-update: check failed: net::ERR_INTERNET_DISCONNECTED'), lines.join('\n'));
  updater.emit('error', new Error('Code signature at URL did not pass validation'));
  assert.ok(lines.includes('auto-update: failed: Code signature at URL did not pass validation'));
  assert.deepEqual(unhandled, []);
});

test('a check that throws synchronously is logged too', async (t) => {
  const updater = new FakeUpdater(() => {
    throw new Error('app-update.yml is missing');
  });
  const { handle, lines } = setup(t, { updater });
  assert.ok(handle);
  await tick();
  assert.ok(lines.includes('auto-update: check failed: app-update.yml is missing'), lines.join('\n'));
});

test('electron-updater failing to load leaves the app running without updates', (t) => {
  const { handle, lines } = setup(t, {
    loadUpdater: () => {
      throw new Error("Cannot find module 'electron-updater'");
    },
  });
  assert.equal(handle, null);
  assert.deepEqual(lines, ["auto-update: off (electron-updater could not be loaded: Cannot find module 'electron-updater')"]);
});

test('checks do not overlap: a second check while one runs shares it', async (t) => {
  let release;
  const updater = new FakeUpdater(() => new Promise((resolve) => (release = resolve)));
  const { handle } = setup(t, { updater });
  const again = handle.check();
  assert.equal(updater.checks, 1);
  release(null);
  await again;
  const next = handle.check();
  assert.equal(updater.checks, 2, 'a new check once the first settled');
  release(null);
  await next;
});

test('the default loader is the real electron-updater autoUpdater module (a dependency, not a devDependency)', () => {
  const pkg = require(path.join(__dirname, '..', 'package.json'));
  assert.match(pkg.dependencies['electron-updater'], /^\d+\.\d+\.\d+$/, 'pinned runtime dependency');
  assert.equal(pkg.devDependencies['electron-updater'], undefined);
  // Resolvable from the shell's directory (installed by npm ci); loading it needs Electron itself.
  assert.ok(require.resolve('electron-updater', { paths: [path.join(__dirname, '..')] }));
});

test('main.cjs starts it once the window is up: off in development and with LH_NO_UPDATE=1', async (t) => {
  const fs = require('node:fs');
  const os = require('node:os');
  const { createFakeElectron, createFakeSidecar, loadMain } = require('./helpers/fake-electron.cjs');
  const previous = process.env.LH_NO_UPDATE;
  const savedResources = process.resourcesPath;
  process.resourcesPath = path.join(os.tmpdir(), 'LH', 'resources'); // where a packaged app finds its server
  t.after(() => {
    process.resourcesPath = savedResources;
    if (previous === undefined) delete process.env.LH_NO_UPDATE;
    else process.env.LH_NO_UPDATE = previous;
  });
  for (const [packaged, noUpdate, expected] of [
    [false, undefined, 'auto-update: off (not a packaged app)'],
    [true, '1', 'auto-update: off (LH_NO_UPDATE=1)'],
  ]) {
    if (noUpdate === undefined) delete process.env.LH_NO_UPDATE;
    else process.env.LH_NO_UPDATE = noUpdate;
    const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-updater-'));
    t.after(() => fs.rmSync(userData, { recursive: true, force: true }));
    const { electron, calls } = createFakeElectron({ userData, packaged });
    const { sidecar } = createFakeSidecar();
    const main = loadMain({ electron, sidecar });
    assert.equal(await main.start(), true);
    const logged = fs.readFileSync(path.join(userData, 'logs', 'desktop.log'), 'utf8');
    assert.equal(calls.windows.length, 1, logged);
    assert.equal(main.state.updates, null);
    assert.ok(logged.includes(expected), logged);
  }
});
