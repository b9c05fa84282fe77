'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { KeyStore, KeyStoreUnavailable } = require('../keys.cjs');
const { createFakeElectron } = require('./helpers/fake-electron.cjs');

function tempFile(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-keys-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'api-keys.json');
}

test('keys are stored encrypted, owner-only, and read back', async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  const store = new KeyStore(file, electron.safeStorage, { platform: 'linux' });
  assert.equal(await store.protection(), 'os');
  await store.set('openai', '  sk-secret-123  ');
  await store.set('openrouter', 'sk-or-456');
  const raw = fs.readFileSync(file, 'utf8');
  assert.ok(!raw.includes('sk-secret-123') && !raw.includes('sk-or-456'), 'no plaintext key on disk');
  if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(await store.loadAll(), { openai: 'sk-secret-123', openrouter: 'sk-or-456' });
  assert.deepEqual(store.storedProviders().sort(), ['openai', 'openrouter']);
  store.delete('openai');
  assert.deepEqual(await store.loadAll(), { openrouter: 'sk-or-456' });
});

test('no OS key store (or Linux basic_text): refuse to store, say what to do instead', async (t) => {
  for (const options of [{ encryption: false }, { backend: 'basic_text' }]) {
    const file = tempFile(t);
    const { electron } = createFakeElectron({ userData: path.dirname(file), ...options });
    const store = new KeyStore(file, electron.safeStorage, { platform: 'linux' });
    assert.equal(await store.protection(), 'unavailable');
    await assert.rejects(store.set('openai', 'sk-x'), (error) => error instanceof KeyStoreUnavailable && /LH_OPENAI_API_KEY/.test(error.message));
    assert.equal(fs.existsSync(file), false);
  }
});

test('bad input and broken files are handled', async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  const logs = [];
  const store = new KeyStore(file, electron.safeStorage, { platform: 'linux', log: (m) => logs.push(m) });
  await assert.rejects(store.set('local', 'sk'), TypeError);
  await assert.rejects(store.set('openai', ''), TypeError);
  assert.throws(() => store.delete('nope'), TypeError);
  fs.writeFileSync(file, '{not json');
  assert.deepEqual(await store.loadAll(), {});
  fs.writeFileSync(file, JSON.stringify({ version: 1, keys: { openai: Buffer.from('garbage').toString('base64'), evil: 'x' } }));
  assert.deepEqual(await store.loadAll(), {});
  assert.ok(logs.some((m) => m.includes('cannot decrypt the stored openai key')));
  assert.ok(!logs.join('\n').includes('garbage'));
});

test('keys flagged for re-encryption are rewritten', async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  const store = new KeyStore(file, electron.safeStorage, { platform: 'darwin' });
  await store.set('openai', 'sk-1');
  let encryptions = 0;
  const rotating = {
    ...electron.safeStorage,
    decryptStringAsync: async (b) => ({ ...(await electron.safeStorage.decryptStringAsync(b)), shouldReEncrypt: true }),
    encryptStringAsync: async (text) => {
      encryptions += 1;
      return electron.safeStorage.encryptStringAsync(text);
    },
  };
  assert.deepEqual(await new KeyStore(file, rotating).loadAll(), { openai: 'sk-1' });
  assert.equal(encryptions, 1);
});

const POSIX = process.platform !== 'win32';

test('every write is atomic: a fresh 0600 temp file, fsync, rename; a failed rename keeps the old file', async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  const store = new KeyStore(file, electron.safeStorage, { platform: process.platform });
  await store.set('openai', 'sk-first-key');
  const before = fs.readFileSync(file, 'utf8');

  const synced = [];
  const renamed = [];
  const { fsyncSync, renameSync } = fs;
  t.after(() => Object.assign(fs, { fsyncSync, renameSync }));
  fs.fsyncSync = (fd) => {
    synced.push(fd);
    return fsyncSync(fd);
  };
  fs.renameSync = (from, to) => {
    if (POSIX) assert.equal(fs.statSync(from).mode & 0o777, 0o600, 'the temp file is owner-only before it takes the name');
    assert.ok(fs.readFileSync(from, 'utf8').length > 0, 'complete before the rename');
    renamed.push([from, to]);
    return renameSync(from, to);
  };
  await store.set('tavily', 'tv-second-key');
  assert.equal(renamed.length, 1);
  assert.equal(renamed[0][1], file);
  assert.ok(synced.length >= 1, 'the data is flushed before the rename');
  if (POSIX) assert.equal(fs.statSync(file).mode & 0o777, 0o600);

  fs.renameSync = () => {
    throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
  };
  const good = fs.readFileSync(file, 'utf8');
  await assert.rejects(store.set('brave', 'br-third-key'), /disk full/);
  assert.equal(fs.readFileSync(file, 'utf8'), good, 'the old file is intact');
  assert.deepEqual(fs.readdirSync(path.dirname(file)), ['api-keys.json'], 'no temp file left behind');
  assert.notEqual(good, before);
});

test('concurrent sets never lose each other (one read-modify-write at a time)', async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  const slow = {
    ...electron.safeStorage,
    encryptStringAsync: async (text) => {
      await new Promise((r) => setTimeout(r, text.length % 3));
      return electron.safeStorage.encryptStringAsync(text);
    },
  };
  const store = new KeyStore(file, slow, { platform: 'darwin' });
  await Promise.all([store.set('openai', 'sk-aaaa'), store.set('tavily', 'tv-bbbbb'), store.set('deepgram', 'dg-cccccc')]);
  assert.deepEqual(await store.loadAll(), { openai: 'sk-aaaa', tavily: 'tv-bbbbb', deepgram: 'dg-cccccc' });
});

test('a damaged key file is kept aside, reported in plain words, and a new one starts', async (t) => {
  for (const garbage of ['{not json', '[1,2]', '{"version":1,"keys":"x"}', '\u0000\u0001binary']) {
    const file = tempFile(t);
    const { electron } = createFakeElectron({ userData: path.dirname(file) });
    const logs = [];
    const now = () => new Date('2026-12-03T12:00:00.000Z');
    const store = new KeyStore(file, electron.safeStorage, { platform: 'linux', log: (m) => logs.push(m), now });
    fs.writeFileSync(file, garbage, { mode: 0o600 });
    assert.deepEqual(await store.loadAll(), {});
    const aside = `${file}.corrupt-2026-12-03T12-00-00-000Z`;
    assert.equal(fs.readFileSync(aside, 'utf8'), garbage, 'nothing lost: the bad file is kept');
    assert.equal(fs.existsSync(file), false);
    assert.match(store.problem(), /damaged/);
    assert.ok(store.problem().includes(aside));
    assert.match(store.problem(), /Enter your keys again/);
    await store.set('openai', 'sk-after-corruption');
    assert.deepEqual(await store.loadAll(), { openai: 'sk-after-corruption' });
    assert.ok(!logs.join('\n').includes('sk-after-corruption'));
  }
});

test('unknown entries written by a newer version survive a rewrite', async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  fs.writeFileSync(file, JSON.stringify({ version: 1, keys: { 'future-provider': 'ZW5jOjAw' } }), { mode: 0o600 });
  const store = new KeyStore(file, electron.safeStorage, { platform: 'linux' });
  await store.set('openai', 'sk-now');
  await store.delete('openai');
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')).keys, { 'future-provider': 'ZW5jOjAw' });
});

test('a key file others can read is made owner-only again, and the status says so', { skip: !POSIX }, async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  const writer = new KeyStore(file, electron.safeStorage, { platform: 'linux' });
  await writer.set('openai', 'sk-perm-test');
  fs.chmodSync(file, 0o644);
  const store = new KeyStore(file, electron.safeStorage, { platform: 'linux' });
  assert.deepEqual(store.storedProviders(), ['openai']);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.match(store.problem(), /could be read by other users.*644.*owner-only again/);
  assert.deepEqual(await store.loadAll(), { openai: 'sk-perm-test' }, 'the keys are kept');
});

test('a key file that cannot be read is left alone: not used, never overwritten, reported', async (t) => {
  const file = tempFile(t);
  fs.mkdirSync(file); // EISDIR: unreadable as a file, whoever runs the test (root ignores modes)
  fs.writeFileSync(path.join(file, 'keep-me'), 'x');
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  const store = new KeyStore(file, electron.safeStorage, { platform: 'linux' });
  assert.deepEqual(await store.loadAll(), {});
  assert.match(store.problem(), /cannot be read/);
  await assert.rejects(store.set('openai', 'sk-nope'), /cannot be read/);
  await assert.rejects(store.delete('openai'), /cannot be read/);
  assert.equal(fs.readFileSync(path.join(file, 'keep-me'), 'utf8'), 'x');
  fs.rmSync(file, { recursive: true });
  assert.deepEqual(store.storedProviders(), []);
  assert.equal(store.problem(), null, 'fixed once the file is readable (or gone)');
});

test('a key that no longer decrypts is reported, not shown as set', async (t) => {
  const file = tempFile(t);
  const { electron } = createFakeElectron({ userData: path.dirname(file) });
  fs.writeFileSync(file, JSON.stringify({ version: 1, keys: { openai: Buffer.from('garbage').toString('base64') } }), { mode: 0o600 });
  const store = new KeyStore(file, electron.safeStorage, { platform: 'linux' });
  assert.deepEqual(await store.loadAll(), {});
  assert.deepEqual(store.storedProviders(), []);
  assert.match(store.problem(), /openai key could not be decrypted/);
  await store.set('openai', 'sk-fresh');
  assert.equal(store.problem(), null);
});
