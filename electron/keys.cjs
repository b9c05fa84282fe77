'use strict';
/**
 * API keys stored by the desktop app, encrypted with Electron's safeStorage (async API:
 * isAsyncEncryptionAvailable / encryptStringAsync / decryptStringAsync, Electron >= 45), in one
 * owner-only JSON file in userData. Plain Node: safeStorage is injected (tests pass a fake).
 *
 * File format: {"version": 1, "keys": {"<provider>": "<base64 ciphertext>"}}. Plaintext keys are
 * never written to disk, logged, or returned to the renderer; they only reach the server child's
 * environment.
 */

const fs = require('node:fs');
const path = require('node:path');
const { validateProvider, validateApiKey } = require('./policy.cjs');

class KeyStoreUnavailable extends Error {
  constructor(message) {
    super(message);
    this.name = 'KeyStoreUnavailable';
  }
}

class KeyStore {
  /**
   * @param {string} file The encrypted key file (e.g. userData/api-keys.json).
   * @param {object} safeStorage Electron's safeStorage (or a fake with the same async API).
   * @param {{platform?: string, log?: (msg: string) => void}} [options]
   */
  constructor(file, safeStorage, { platform = process.platform, log = () => {} } = {}) {
    this.file = file;
    this.safeStorage = safeStorage;
    this.platform = platform;
    this.log = log;
  }

  /**
   * 'os' when keys are protected by the OS key store (Keychain, DPAPI, libsecret/kwallet);
   * 'unavailable' otherwise, including Linux's `basic_text` fallback (a hard-coded password, i.e.
   * no protection), where the app refuses to store keys and the user sets LH_*_API_KEY instead.
   */
  async protection() {
    let available = false;
    try {
      available = await this.safeStorage.isAsyncEncryptionAvailable();
    } catch {
      available = false;
    }
    if (!available) return 'unavailable';
    if (this.platform === 'linux' && typeof this.safeStorage.getSelectedStorageBackend === 'function') {
      const backend = this.safeStorage.getSelectedStorageBackend();
      if (backend === 'basic_text' || backend === 'unknown') return 'unavailable';
    }
    return 'os';
  }

  readFile() {
    let data;
    try {
      data = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } catch (error) {
      if (error.code !== 'ENOENT') this.log(`ignoring unreadable key file ${this.file}: ${error.message}`);
      return {};
    }
    const keys = data && typeof data === 'object' && data.keys && typeof data.keys === 'object' ? data.keys : {};
    const out = {};
    for (const [provider, value] of Object.entries(keys)) {
      try {
        validateProvider(provider);
      } catch {
        continue;
      }
      if (typeof value === 'string' && value) out[provider] = value;
    }
    return out;
  }

  writeFile(encrypted) {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify({ version: 1, keys: encrypted }, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
    try {
      fs.chmodSync(this.file, 0o600);
    } catch {
      /* Windows: ACLs of the profile directory apply */
    }
  }

  /** Providers that have a stored key (without decrypting anything). */
  storedProviders() {
    return Object.keys(this.readFile());
  }

  /** Every stored key, decrypted: {provider: key}. Keys that fail to decrypt are skipped (logged). */
  async loadAll() {
    const encrypted = this.readFile();
    const keys = {};
    let rewrite = false;
    for (const [provider, b64] of Object.entries(encrypted)) {
      try {
        const { result, shouldReEncrypt } = await this.safeStorage.decryptStringAsync(Buffer.from(b64, 'base64'));
        keys[provider] = result;
        if (shouldReEncrypt) {
          encrypted[provider] = (await this.safeStorage.encryptStringAsync(result)).toString('base64');
          rewrite = true;
        }
      } catch (error) {
        this.log(`cannot decrypt the stored ${provider} key (${error.message}); set it again`);
      }
    }
    if (rewrite) this.writeFile(encrypted);
    return keys;
  }

  async set(provider, key) {
    validateProvider(provider);
    const clean = validateApiKey(key);
    if ((await this.protection()) !== 'os') {
      throw new KeyStoreUnavailable(
        'no OS key store is available to encrypt the key; set it in the environment instead ' +
          '(LH_OPENROUTER_API_KEY, LH_OPENAI_API_KEY or LH_OPENAI_COMPATIBLE_API_KEY)',
      );
    }
    const encrypted = this.readFile();
    encrypted[provider] = (await this.safeStorage.encryptStringAsync(clean)).toString('base64');
    this.writeFile(encrypted);
  }

  delete(provider) {
    validateProvider(provider);
    const encrypted = this.readFile();
    if (provider in encrypted) {
      delete encrypted[provider];
      this.writeFile(encrypted);
    }
  }
}

module.exports = { KeyStore, KeyStoreUnavailable };
