'use strict';
/**
 * What the two encrypted stores of Electron main share (electron/keys.cjs: API keys;
 * electron/subscriptions/store.cjs: subscription logins): whether the OS key store really
 * protects what safeStorage encrypts, and an atomic owner-only file write.
 */

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/**
 * Whether safeStorage (Electron's, or a fake with the async API) is backed by an OS key store
 * (Keychain, DPAPI, libsecret/kwallet). False when async encryption is unavailable (or asking
 * throws) and on Linux's `basic_text`/`unknown` backends (a hard-coded password: no protection).
 *
 * @param {object} safeStorage
 * @param {string} platform process.platform or a test's stand-in
 * @returns {Promise<boolean>}
 */
async function osKeyStoreProtects(safeStorage, platform) {
  let available = false;
  try {
    available = await safeStorage.isAsyncEncryptionAvailable();
  } catch {
    available = false;
  }
  if (!available) return false;
  if (platform === 'linux' && typeof safeStorage.getSelectedStorageBackend === 'function') {
    const backend = safeStorage.getSelectedStorageBackend();
    if (backend === 'basic_text' || backend === 'unknown') return false;
  }
  return true;
}

/**
 * Write `text` to `file` atomically and owner-only: the folder is made (0700) if missing, a fresh
 * 0600 temp file beside `file` is written and fsynced, then renamed over `file`, then the folder
 * is fsynced (POSIX, best effort: some file systems cannot; the rename is still atomic).
 * On any failure the temp file is removed and the error is thrown; the old `file` is untouched.
 *
 * @param {string} file
 * @param {string} text
 * @param {string} platform process.platform or a test's stand-in ('win32': the profile
 *   folder's ACLs apply, no chmod and no folder fsync)
 */
function writeOwnerOnlyAtomic(file, text, platform) {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    try {
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (platform !== 'win32') fs.chmodSync(tmp, 0o600); // whatever the umask did
    fs.renameSync(tmp, file);
  } catch (error) {
    try {
      fs.unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw error;
  }
  if (platform !== 'win32') {
    try {
      const dirFd = fs.openSync(dir, 'r');
      try {
        fs.fsyncSync(dirFd);
      } finally {
        fs.closeSync(dirFd);
      }
    } catch {
      /* some file systems cannot fsync a folder; the rename is still atomic */
    }
  }
}

module.exports = { osKeyStoreProtects, writeOwnerOnlyAtomic };
