'use strict';
/**
 * electron-builder.yml: schema-valid for the pinned electron-builder (when node_modules is
 * installed), ships every main-process module, and puts the frozen server where main.cjs looks.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const DIR = path.resolve(__dirname, '..');
const ROOT = path.resolve(DIR, '..');
const CONFIG = path.join(DIR, 'electron-builder.yml');

function loadYaml() {
  try {
    return require(require.resolve('js-yaml', { paths: [DIR] })).load(fs.readFileSync(CONFIG, 'utf8'));
  } catch (error) {
    if (error.code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
}

const config = loadYaml();
const skip = config === null && 'electron/node_modules is not installed (cd electron && npm ci)';

test('the config passes electron-builder\'s own validation', { skip }, async () => {
  const { validateConfiguration } = require(require.resolve('app-builder-lib/out/util/config/config.js', { paths: [DIR] }));
  const { DebugLogger } = require(require.resolve('builder-util', { paths: [DIR] }));
  await validateConfiguration(structuredClone(config), new DebugLogger(false));
});

test('the packaged app contains every module main.cjs loads, and only those', { skip }, () => {
  const local = new Set(['main.cjs']);
  const queue = ['main.cjs', 'preload.cjs'];
  while (queue.length) {
    const file = queue.pop();
    local.add(file);
    const source = fs.readFileSync(path.join(DIR, file), 'utf8');
    for (const [, name] of source.matchAll(/require\('\.\/([^']+)'\)/g)) {
      const relative = path.posix.join(path.posix.dirname(file), name); // subscriptions/index.cjs requires ./store.cjs
      if (!local.has(relative)) queue.push(relative);
    }
  }
  assert.deepEqual([...local].sort(), config.files.filter((f) => f !== 'package.json').sort());
  const pkg = JSON.parse(fs.readFileSync(path.join(DIR, 'package.json'), 'utf8'));
  assert.equal(pkg.main, 'main.cjs');
  for (const dep of ['electron', 'electron-builder']) assert.match(pkg.devDependencies[dep], /^\d+\.\d+\.\d+$/, `${dep} pinned`);
});

test('the frozen server lands in resources/server, signing/notarization stay in the env', { skip }, () => {
  assert.equal(config.productName, 'Learning Harness');
  assert.match(config.appId, /^[a-z0-9.-]+$/);
  assert.deepEqual(config.extraResources, [{ from: '../dist/learning-harness-server', to: 'server', filter: ['**/*'] }]);
  assert.deepEqual(config.mac.target.map((t) => t.target), ['dmg', 'zip'], 'the zip is what electron-updater installs on macOS');
  assert.equal(config.mac.hardenedRuntime, true);
  assert.equal(config.mac.notarize, true);
  const entitlements = fs.readFileSync(path.resolve(DIR, config.mac.entitlements), 'utf8');
  for (const key of ['cs.allow-jit', 'cs.allow-unsigned-executable-memory', 'cs.disable-library-validation', 'device.audio-input']) {
    assert.ok(entitlements.includes(`com.apple.security.${key}`), key);
  }
  assert.equal(config.mac.entitlementsInherit, config.mac.entitlements);
  assert.ok(config.mac.extendInfo.NSMicrophoneUsageDescription);
  assert.deepEqual(config.win.target.map((t) => t.target), ['nsis']);
  // The frozen server's PE files are signed with the app (electron-builder signs every .exe).
  assert.deepEqual(config.win.signExts, ['.dll', '.pyd']);
  assert.notEqual(config.win.signAndEditExecutable, false);
  assert.notEqual(config.win.signExecutable, false);
  assert.deepEqual(config.linux.target.map((t) => t.target), ['AppImage']);
  const text = fs.readFileSync(CONFIG, 'utf8');
  assert.ok(!/^\s*(cscLink|cscKeyPassword|certificatePassword|appleIdPassword)\s*:/m.test(text), 'no credentials in the config');
  assert.ok(fs.existsSync(path.join(ROOT, 'build', 'server.spec')));
});

test('auto-update: GitHub Releases are the update feed, with a per-arch artifact name', { skip }, async () => {
  assert.deepEqual(config.publish, [{ provider: 'github', releaseType: 'release' }]);
  // electron-updater picks the arm64 or x64 macOS zip by "arm64" in its name.
  assert.match(config.artifactName, /\$\{arch\}/);
  assert.match(config.artifactName, /\$\{version\}/);
  // The workflow's owner/repo overrides still validate.
  const { validateConfiguration } = require(require.resolve('app-builder-lib/out/util/config/config.js', { paths: [DIR] }));
  const { DebugLogger } = require(require.resolve('builder-util', { paths: [DIR] }));
  const withRepo = structuredClone(config);
  withRepo.publish = [{ ...config.publish[0], owner: 'example', repo: 'learning-harness' }];
  await validateConfiguration(withRepo, new DebugLogger(false));
  const pkg = JSON.parse(fs.readFileSync(path.join(DIR, 'package.json'), 'utf8'));
  assert.deepEqual(Object.keys(pkg.dependencies), ['electron-updater'], 'the one runtime dependency packaged with the app');
});
