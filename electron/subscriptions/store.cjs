'use strict';
/**
 * One saved subscription connection per provider: <dir>/<provider>.json, owner-only (0600),
 * written atomically (tmp file, fsync, rename, fsync of the directory; ../secure-file.cjs, shared
 * with electron/keys.cjs), its secret part encrypted with Electron's safeStorage (async API).
 *
 * File format: {"version": 1, "provider": "<id>", "sealed": "<base64 ciphertext of the JSON credential>"}.
 *
 * A file that cannot be trusted or read (other users may read it, not JSON, wrong provider,
 * cannot be decrypted, missing fields) is moved aside to <provider>.json.rejected-<epoch ms>
 * (made owner-only) and reported as CredentialFileRejected with a plain-words reason; nothing
 * crashes and nothing is silently deleted. Source: issue 19 item 2 and "Bad input".
 */

const fs = require('node:fs');
const path = require('node:path');
const { osKeyStoreProtects, writeOwnerOnlyAtomic } = require('../secure-file.cjs');

class CredentialFileRejected extends Error {
  constructor(message, asidePath) {
    super(message);
    this.name = 'CredentialFileRejected';
    this.asidePath = asidePath;
  }
}

class NoSecureStorage extends Error {
  constructor() {
    super('No OS key store is available to encrypt the login (on Linux: GNOME Keyring or KWallet), so it cannot be saved.');
    this.name = 'NoSecureStorage';
  }
}

const REQUIRED = ['accessToken', 'expiresAt'];

class CredentialStore {
  /**
   * @param {string} dir <userData>/subscriptions
   * @param {string} provider provider id (the file name)
   * @param {object} safeStorage Electron's safeStorage or a fake with the async API
   * @param {{platform?: string, log?: (m: string) => void, now?: () => number}} [options]
   */
  constructor(dir, provider, safeStorage, { platform = process.platform, log = () => {}, now = Date.now } = {}) {
    this.dir = dir;
    this.provider = provider;
    this.file = path.join(dir, `${provider}.json`);
    this.safeStorage = safeStorage;
    this.platform = platform;
    this.log = log;
    this.now = now;
  }

  /** Whether the OS key store protects the file (Linux `basic_text` does not). */
  async secure() {
    return osKeyStoreProtects(this.safeStorage, this.platform);
  }

  exists() {
    return fs.existsSync(this.file);
  }

  /** Move the file aside (owner-only) and return the error to report. */
  reject(reason) {
    const aside = `${this.file}.rejected-${this.now()}`;
    try {
      fs.renameSync(this.file, aside);
      try {
        fs.chmodSync(aside, 0o600);
      } catch {
        /* Windows */
      }
    } catch (error) {
      this.log(`subscriptions: could not move ${path.basename(this.file)} aside (${error.code || error.message})`);
    }
    this.log(`subscriptions: ${this.provider}: ${reason}; moved the file to ${path.basename(aside)}`);
    return new CredentialFileRejected(`The saved login file ${reason}. It was set aside (${path.basename(aside)}); connect again.`, aside);
  }

  /**
   * The saved credential, or null when there is none.
   * Rejects with CredentialFileRejected (file moved aside) when it cannot be trusted or read.
   */
  async read() {
    let stat;
    try {
      stat = fs.lstatSync(this.file);
    } catch (error) {
      if (error.code === 'ENOENT') return null;
      throw this.reject(`could not be read (${error.code || 'error'})`);
    }
    if (!stat.isFile()) throw this.reject('is not a regular file');
    if (this.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      throw this.reject('could be read by other users of this computer (its permissions were not owner-only)');
    }
    if (this.platform !== 'win32' && typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
      throw this.reject('belongs to another user');
    }
    let data;
    try {
      data = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } catch {
      throw this.reject('is damaged (not valid JSON)');
    }
    if (!data || data.version !== 1 || data.provider !== this.provider || typeof data.sealed !== 'string') {
      throw this.reject('is not a login file of this app');
    }
    let credential;
    try {
      const { result, shouldReEncrypt } = await this.safeStorage.decryptStringAsync(Buffer.from(data.sealed, 'base64'));
      credential = JSON.parse(result);
      if (shouldReEncrypt) await this.write(credential);
    } catch {
      throw this.reject('could not be decrypted (it was saved by another user or another computer)');
    }
    if (!credential || typeof credential !== 'object' || REQUIRED.some((key) => credential[key] === undefined)) {
      throw this.reject('is missing parts of the login');
    }
    return credential;
  }

  /** Encrypt and write atomically, owner-only. Rejects with NoSecureStorage without an OS key store. */
  async write(credential) {
    if (!(await this.secure())) throw new NoSecureStorage();
    const sealed = (await this.safeStorage.encryptStringAsync(JSON.stringify(credential))).toString('base64');
    const text = `${JSON.stringify({ version: 1, provider: this.provider, sealed }, null, 2)}\n`;
    writeOwnerOnlyAtomic(this.file, text, this.platform);
  }

  /** Forget the saved login (no error when there is none). */
  remove() {
    try {
      fs.unlinkSync(this.file);
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
  }
}

module.exports = { CredentialStore, CredentialFileRejected, NoSecureStorage };
