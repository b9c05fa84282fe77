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
