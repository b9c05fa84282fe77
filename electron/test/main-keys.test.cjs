'use strict';
/**
 * Credentials owned by main (issue 19 item 1, decision 0018), under plain Node with the recording
 * `electron` stand-in and a fake sidecar: origin-pinned key IPC for model, search and dictation
 * keys; keys only in the server's environment (never argv, never a log line, never a dialog);
 * a damaged store reported, not fatal; a failed restart shown in a dialog, not a dead window.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createFakeElectron, createFakeSidecar, loadMain } = require('./helpers/fake-electron.cjs');

const ORIGIN = 'http://127.0.0.1:4567';
const trusted = { senderFrame: { url: `${ORIGIN}/settings` } };

async function boot(t, { before } = {}) {
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-main-keys-'));
  t.after(() => fs.rmSync(userData, { recursive: true, force: true }));
  if (before) before(userData);
  const { electron, calls } = createFakeElectron({ userData });
  const { sidecar, record } = createFakeSidecar();
  const main = loadMain({ electron, sidecar });
  await main.start();
  const logFile = path.join(userData, 'logs', 'desktop.log');
  const logText = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  return { main, calls, record, sidecar, userData, logFile, logText, ipc: calls.ipc };
}

test('every key channel refuses a sender from another origin, and nothing is stored or restarted', async (t) => {
  const { ipc, record, userData } = await boot(t);
  const foreign = [
    'https://evil.example/settings',
    'http://127.0.0.1:45670/',
    'http://localhost:4567/',
    'http://127.0.0.1:4567@evil.example/',
    'file:///etc/passwd',
    'about:blank',
    null,
  ];
  for (const url of foreign) {
    const event = url === null ? {} : { senderFrame: { url } };
    await assert.rejects(ipc['lh:set-api-key'](event, 'openai', 'sk-foreign-0123'), /refused/, String(url));
    await assert.rejects(ipc['lh:delete-api-key'](event, 'openai'), /refused/, String(url));
    await assert.rejects(ipc['lh:api-key-status'](event), /refused/, String(url));
  }
  assert.equal(record.starts.length, 1, 'no restart');
  assert.equal(fs.existsSync(path.join(userData, 'api-keys.json')), false, 'nothing stored');
});

test('search and dictation keys travel like model keys: stored encrypted, in the env at spawn, never argv or log', async (t) => {
  const { ipc, record, userData, logText } = await boot(t);
  const keys = { tavily: 'tvly-SECRET-tavily-1234', google: 'AIza-SECRET-google-5678', deepgram: 'dg-SECRET-deepgram-9012' };
  for (const [provider, key] of Object.entries(keys)) {
    const status = await ipc['lh:set-api-key'](trusted, provider, key);
    assert.deepEqual(status.providers[provider].set, true);
    assert.equal(status.providers[provider].source, 'app');
    assert.equal(status.problem, null);
    assert.ok(!JSON.stringify(status).includes(key), 'the status never carries a key');
  }
  const last = record.starts.at(-1);
  assert.equal(last.env.LH_TAVILY_API_KEY, keys.tavily);
  assert.equal(last.env.LH_GOOGLE_SEARCH_API_KEY, keys.google);
  assert.equal(last.env.LH_DEEPGRAM_API_KEY, keys.deepgram);
  // The server echoing a key on stderr does not put it in main's log.
  last.log('stderr', `debug: using ${keys.deepgram} for dictation`);
  const stored = fs.readFileSync(path.join(userData, 'api-keys.json'), 'utf8');
  const everything = [stored, logText(), ...record.starts.flatMap((s) => [s.command, ...s.args])].join('\n');
  for (const key of Object.values(keys)) assert.ok(!everything.includes(key), `${key} leaked`);
  assert.match(logText(), /debug: using \[redacted\] for dictation/);
  // Only the owner-only store and the log exist in userData; nothing in the data dir mentions a key.
  for (const entry of fs.readdirSync(userData, { recursive: true })) {
    const full = path.join(userData, entry);
    if (fs.statSync(full).isFile()) {
      for (const key of Object.values(keys)) assert.ok(!fs.readFileSync(full, 'utf8').includes(key), `${entry} holds a key`);
    }
  }
  if (process.platform !== 'win32') assert.equal(fs.statSync(path.join(userData, 'api-keys.json')).mode & 0o777, 0o600);
  await ipc['lh:delete-api-key'](trusted, 'deepgram');
  assert.equal(record.starts.at(-1).env.LH_DEEPGRAM_API_KEY, process.env.LH_DEEPGRAM_API_KEY);
});

test('a damaged key file: the app starts, the status says what happened, the file is kept aside', async (t) => {
  const { ipc, calls, record, userData, logText } = await boot(t, {
    before: (dir) => fs.writeFileSync(path.join(dir, 'api-keys.json'), '{"version": 1, "keys": {"openai": '),
  });
  assert.equal(calls.windows.length, 1, 'the window opened');
  assert.equal(calls.errorBoxes.length, 0);
  assert.equal(record.starts.length, 1);
  const status = await ipc['lh:api-key-status'](trusted);
  assert.match(status.problem, /damaged.*kept as .*api-keys\.json\.corrupt-.*Enter your keys again/);
  const aside = fs.readdirSync(userData).filter((name) => name.startsWith('api-keys.json.corrupt-'));
  assert.equal(aside.length, 1);
  assert.equal(fs.readFileSync(path.join(userData, aside[0]), 'utf8'), '{"version": 1, "keys": {"openai": ');
  assert.match(logText(), /kept as/);
  const after = await ipc['lh:set-api-key'](trusted, 'openai', 'sk-new-after-damage');
  assert.equal(after.providers.openai.source, 'app');
});

test('a key store that cannot encrypt refuses with a plain reason and restarts nothing', async (t) => {
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-main-keys-'));
  t.after(() => fs.rmSync(userData, { recursive: true, force: true }));
  const { electron, calls } = createFakeElectron({ userData, backend: 'basic_text' });
  const { sidecar, record } = createFakeSidecar();
  const main = loadMain({ electron, sidecar });
  await main.start();
  await assert.rejects(calls.ipc['lh:set-api-key'](trusted, 'deepgram', 'dg-1234567'), /no OS key store.*LH_DEEPGRAM_API_KEY/);
  assert.equal(record.starts.length, 1);
  assert.equal((await calls.ipc['lh:api-key-status'](trusted)).storage, 'unavailable');
});

test('a restart that fails shows a dialog with the log path and quits, instead of a dead window', async (t) => {
  const { ipc, calls, record, sidecar, logFile, logText } = await boot(t);
  const working = sidecar.startServer;
  sidecar.startServer = async (options) => {
    record.starts.push(options);
    throw new Error('the server exited with code 1 before it was ready');
  };
  t.after(() => {
    sidecar.startServer = working;
  });
  const key = 'sk-restart-SECRET-4242';
  await assert.rejects(ipc['lh:set-api-key'](trusted, 'openai', key), /did not restart/);
  assert.equal(record.starts.length, 3, 'the same port, then a free one');
  assert.equal(calls.errorBoxes.length, 1);
  const [box] = calls.errorBoxes;
  assert.match(box.title, /could not restart/);
  assert.match(box.content, /Your keys are saved; start the app again/);
  assert.ok(box.content.includes(`Log: ${logFile}`));
  assert.ok(calls.quit >= 1, 'the app quits');
  assert.ok(!box.content.includes(key) && !logText().includes(key));
});
