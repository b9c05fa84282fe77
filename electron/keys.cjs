'use strict';
/**
 * API keys stored by the desktop app, encrypted with Electron's safeStorage (async API:
 * isAsyncEncryptionAvailable / encryptStringAsync / decryptStringAsync, Electron >= 45), in one
 * owner-only JSON file in userData. Plain Node: safeStorage is injected (tests pass a fake).
 *
 * File format: {"version": 1, "keys": {"<provider>": "<base64 ciphertext>"}}. Plaintext keys are
 * never written to disk, logged, or returned to the renderer; they only reach the server child's
 * environment. Writes are atomic (0600 temp file, fsync, rename, folder fsync) and serialized.
 * A damaged file is kept aside as `<file>.corrupt-<timestamp>`; a file others may read is made
 * owner-only again; an unreadable one is left alone and never overwritten. problem() says which,
 * in plain words, for the Settings page (decision 0018).
 */

const fs = require('node:fs');
const { API_KEY_ENV, validateProvider, validateApiKey } = require('./policy.cjs');
const { osKeyStoreProtects, writeOwnerOnlyAtomic } = require('./secure-file.cjs');

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
   * @param {{platform?: string, log?: (msg: string) => void, now?: () => Date}} [options]
   */
  constructor(file, safeStorage, { platform = process.platform, log = () => {}, now = () => new Date() } = {}) {
    this.file = file;
    this.safeStorage = safeStorage;
    this.platform = platform;
    this.log = log;
    this.now = now;
    /** What happened to the file this session (moved aside, permissions tightened), in plain words. */
    this.fileNotice = null;
    /** Why the file cannot be used now (re-checked at every read), in plain words; null when usable. */
    this.fileError = null;
    /** True while the file exists but cannot be used: nothing is written over it. */
    this.unusable = false;
    /** Providers whose stored key could not be decrypted at the last load. */
    this.undecryptable = new Set();
    /** Entries of the file this version does not know (kept on every rewrite, never lost). */
    this.extra = {};
    /** Mutations run one at a time (a read-encrypt-write never interleaves with another). */
    this.queue = Promise.resolve();
  }

  /**
   * 'os' when keys are protected by the OS key store (Keychain, DPAPI, libsecret/kwallet);
   * 'unavailable' otherwise, including Linux's `basic_text` fallback (a hard-coded password, i.e.
   * no protection), where the app refuses to store keys and the user sets LH_*_API_KEY instead.
   */
  async protection() {
    return (await osKeyStoreProtects(this.safeStorage, this.platform)) ? 'os' : 'unavailable';
  }

  /** Everything wrong with the stored keys, in plain words, or null. Never contains a key. */
  problem() {
    const parts = [];
    if (this.fileError) parts.push(this.fileError);
    if (this.fileNotice) parts.push(this.fileNotice);
    for (const provider of this.undecryptable) {
      parts.push(`The stored ${provider} key could not be decrypted (the system keychain may have changed); enter it again.`);
    }
    return parts.length ? parts.join(' ') : null;
  }

  /** Keep a damaged file aside (never deleted): `<file>.corrupt-<timestamp>`. */
  moveAside(reason) {
    const stamp = this.now().toISOString().replace(/[:.]/g, '-');
    const aside = `${this.file}.corrupt-${stamp}`;
    try {
      fs.renameSync(this.file, aside);
    } catch (error) {
      this.unusable = true;
      this.fileError = `The key file ${this.file} is damaged (${reason}) and could not be moved aside (${error.code || error.message}); stored keys are not used. Move or delete it, then restart the app.`;
      this.log(`key file ${this.file}: ${reason}; moving it aside failed: ${error.message}`);
      return;
    }
    this.fileNotice = `The key file was damaged (${reason}); it was kept as ${aside} and a new one will be started. Enter your keys again.`;
    this.log(`key file ${this.file}: ${reason}; kept as ${aside}`);
  }

  /** Owner-only (POSIX): a file others may read is tightened back to 0600, or left unused. */
  checkPermissions() {
    if (this.platform === 'win32') return true;
    let stat;
    try {
      stat = fs.lstatSync(this.file);
    } catch {
      return true; // readFileSync reports it
    }
    if (!stat.isFile()) return true; // a folder, link or device: readFileSync refuses or reads it as it is
    const mode = stat.mode;
    if ((mode & 0o077) === 0) return true;
    const was = (mode & 0o777).toString(8);
    try {
      fs.chmodSync(this.file, 0o600);
    } catch (error) {
      this.unusable = true;
      this.fileError = `The key file ${this.file} can be read by other users (mode ${was}) and could not be made owner-only (${error.code || error.message}); stored keys are not used. Fix its permissions (chmod 600) or delete it, then restart the app.`;
      this.log(`key file ${this.file}: mode ${was}, chmod failed: ${error.message}`);
      return false;
    }
    this.fileNotice = `The key file could be read by other users of this computer (mode ${was}); it is owner-only again. The keys in it are encrypted, but you may want to replace them.`;
    this.log(`key file ${this.file}: mode ${was} tightened to 600`);
    return true;
  }

  readFile() {
    this.unusable = false;
    this.fileError = null;
    if (!this.checkPermissions()) return {};
    let text;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if (error.code === 'ENOENT') return {};
      this.unusable = true;
      this.fileError = `The key file ${this.file} cannot be read (${error.code || error.message}); stored keys are not used and nothing is written over it. Make it a file you can read, or delete it, then restart the app.`;
      this.log(`cannot read the key file ${this.file}: ${error.code || error.message}`);
      return {};
    }
    let data;
    try {
      data = JSON.parse(text);
    } catch {
      this.moveAside('not valid JSON');
      return {};
    }
    if (!data || typeof data !== 'object' || Array.isArray(data) || !data.keys || typeof data.keys !== 'object' || Array.isArray(data.keys)) {
      this.moveAside('not a key file');
      return {};
    }
    const out = {};
    const extra = {};
    for (const [provider, value] of Object.entries(data.keys)) {
      let known = true;
      try {
        validateProvider(provider);
      } catch {
        known = false;
      }
      if (known && typeof value === 'string' && value) out[provider] = value;
      else extra[provider] = value;
    }
    this.extra = extra;
    return out;
  }

  /** Atomic and owner-only: a fresh 0600 temp file, fsync, rename over the file, fsync the folder. */
  writeFile(encrypted) {
    if (this.unusable) {
      throw new Error(this.fileError || 'the key file cannot be used');
    }
    const body = `${JSON.stringify({ version: 1, keys: { ...this.extra, ...encrypted } }, null, 2)}\n`;
    writeOwnerOnlyAtomic(this.file, body, this.platform);
  }

  /** Run `fn` after every earlier mutation (one read-modify-write at a time). */
  serialized(fn) {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  /** Providers that have a usable stored key (without decrypting anything). */
  storedProviders() {
    return Object.keys(this.readFile()).filter((provider) => !this.undecryptable.has(provider));
  }

  /** Every stored key, decrypted: {provider: key}. Keys that fail to decrypt are skipped (reported by problem()). */
  loadAll() {
    return this.serialized(async () => {
      const encrypted = this.readFile();
      const keys = {};
      let rewrite = false;
      this.undecryptable = new Set();
      for (const [provider, b64] of Object.entries(encrypted)) {
        try {
          const { result, shouldReEncrypt } = await this.safeStorage.decryptStringAsync(Buffer.from(b64, 'base64'));
          keys[provider] = result;
          if (shouldReEncrypt) {
            encrypted[provider] = (await this.safeStorage.encryptStringAsync(result)).toString('base64');
            rewrite = true;
          }
        } catch (error) {
          this.undecryptable.add(provider);
          this.log(`cannot decrypt the stored ${provider} key (${error.message}); set it again`);
        }
      }
      if (rewrite) this.writeFile(encrypted);
      return keys;
    });
  }

  async set(provider, key) {
    validateProvider(provider);
    const clean = validateApiKey(key);
    if ((await this.protection()) !== 'os') {
      throw new KeyStoreUnavailable(
        'no OS key store is available to encrypt the key; set it in the environment instead ' +
          `(${API_KEY_ENV[provider]}), or install a keychain (e.g. GNOME Keyring or KWallet)`,
      );
    }
    return this.serialized(async () => {
      const encrypted = this.readFile();
      if (this.unusable) throw new Error(this.fileError);
      encrypted[provider] = (await this.safeStorage.encryptStringAsync(clean)).toString('base64');
      this.writeFile(encrypted);
      this.undecryptable.delete(provider);
    });
  }

  /** Remove a stored key (validated at once: a bad name throws synchronously). */
  delete(provider) {
    validateProvider(provider);
    return this.serialized(async () => {
      const encrypted = this.readFile();
      if (this.unusable) throw new Error(this.fileError);
      this.undecryptable.delete(provider);
      if (provider in encrypted) {
        delete encrypted[provider];
        this.writeFile(encrypted);
      }
    });
  }
}

module.exports = { KeyStore, KeyStoreUnavailable };
