'use strict';
/**
 * Subscription logins owned by Electron main (desktop mode; seed §8.1, issue 19 item 2):
 * three controllers (chatgpt, github-copilot-subscription, xai-subscription), their encrypted
 * credential files under <userData>/subscriptions/, and the push of scoped request auth to the
 * server child:
 *
 *   PUT    {origin}/api/shell/subscription-auth/{provider}   body {accessToken, expiresAt, accountId, baseUrl}
 *   DELETE {origin}/api/shell/subscription-auth/{provider}
 *   headers: x-lh-token (the per-launch token), x-lh-shell-secret (LH_SHELL_SECRET)
 *
 * never with a refresh token or the GitHub token. A push failure is logged (status only) and
 * the next renewal or server start pushes again; it never throws.
 */

const path = require('node:path');
const { PROVIDERS, PROVIDER_IDS, validateSubscriptionProvider } = require('./providers.cjs');
const { CredentialStore } = require('./store.cjs');
const { SubscriptionController } = require('./controller.cjs');

const PUSH_TIMEOUT_MS = 10000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether main may open `url` in the system browser: https, or http on loopback (test fakes). */
function isOpenableVerificationUri(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username || parsed.password) return false;
  if (parsed.protocol === 'https:') return true;
  return parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname);
}

class Subscriptions {
  /**
   * @param {{dir: string, safeStorage: object, env?: object, fetch?: Function, now?: () => number,
   *   sleep?: Function, setTimer?: Function, clearTimer?: Function, retryMs?: number,
   *   log?: (m: string) => void, openExternal?: (url: string) => Promise<void>|void,
   *   target?: () => ({origin: string, token: string, secret: string}|null),
   *   platform?: string, onChange?: (id: string) => void}} options
   */
  constructor(options) {
    this.log = options.log || (() => {});
    this.fetch = options.fetch || globalThis.fetch;
    this.target = options.target || (() => null);
    this.pushChains = {};
    const open = options.openExternal || (() => {});
    this.controllers = {};
    for (const id of PROVIDER_IDS) {
      const store = new CredentialStore(options.dir, id, options.safeStorage, { platform: options.platform, log: this.log, now: options.now });
      this.controllers[id] = new SubscriptionController(PROVIDERS[id], {
        store,
        env: options.env,
        fetch: this.fetch,
        now: options.now,
        sleep: options.sleep,
        setTimer: options.setTimer,
        clearTimer: options.clearTimer,
        retryMs: options.retryMs,
        log: this.log,
        onChange: options.onChange,
        push: (provider, auth) => this.push(provider, auth),
        openExternal: (url) => {
          if (!isOpenableVerificationUri(url)) {
            this.log(`subscriptions: ${id}: not opening a verification page that is not https`);
            return;
          }
          Promise.resolve(open(url)).catch((error) => this.log(`subscriptions: ${id}: openExternal failed (${error.message})`));
        },
      });
    }
    this.ready = null;
  }

  /** Load every saved connection once (idempotent). */
  init() {
    if (!this.ready) this.ready = Promise.all(PROVIDER_IDS.map((id) => this.controllers[id].init())).then(() => undefined);
    return this.ready;
  }

  controller(provider) {
    return this.controllers[validateSubscriptionProvider(provider)];
  }

  async status() {
    await this.init();
    const providers = {};
    for (const id of PROVIDER_IDS) providers[id] = this.controllers[id].status();
    return { mode: 'desktop', providers };
  }

  async login(provider) {
    const controller = this.controller(provider);
    await this.init();
    await controller.login();
    return this.status();
  }

  async cancel(provider) {
    const controller = this.controller(provider);
    await this.init();
    controller.cancel();
    return this.status();
  }

  async logout(provider) {
    const controller = this.controller(provider);
    await this.init();
    await controller.logout();
    return this.status();
  }

  /** Push every saved connection again (after each server start); renews first when due. */
  async resync() {
    await this.init();
    await Promise.all(PROVIDER_IDS.map((id) => this.controllers[id].resync().catch(() => false)));
  }

  close() {
    for (const id of PROVIDER_IDS) this.controllers[id].close();
  }

  /**
   * Send scoped auth (or its withdrawal, auth = null) to the server, in order per provider.
   * Resolves true on a 2xx answer, false otherwise (logged without any token). Never rejects.
   */
  push(provider, auth) {
    const run = () => this.pushNow(provider, auth);
    const chain = (this.pushChains[provider] || Promise.resolve()).then(run, run);
    this.pushChains[provider] = chain;
    return chain;
  }

  async pushNow(provider, auth) {
    const target = this.target();
    const action = auth ? 'pushing' : 'withdrawing';
    if (!target || !target.origin) {
      this.log(`subscriptions: ${provider}: ${action} the login skipped: the server is not running (it gets it when it starts)`);
      return false;
    }
    const url = `${target.origin}/api/shell/subscription-auth/${encodeURIComponent(provider)}`;
    const headers = { 'x-lh-token': target.token, 'x-lh-shell-secret': target.secret };
    const init = { method: auth ? 'PUT' : 'DELETE', headers, signal: AbortSignal.timeout(PUSH_TIMEOUT_MS) };
    if (auth) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify({
        accessToken: auth.accessToken,
        expiresAt: auth.expiresAt,
        accountId: auth.accountId || null,
        baseUrl: auth.baseUrl || null,
      });
    }
    try {
      const response = await this.fetch(url, init);
      await response.arrayBuffer().catch(() => null);
      if (response.ok) return true;
      this.log(`subscriptions: ${provider}: ${action} the login to the server failed (HTTP ${response.status}); retrying at the next renewal or server start`);
      return false;
    } catch {
      this.log(`subscriptions: ${provider}: ${action} the login to the server failed (no answer); retrying at the next renewal or server start`);
      return false;
    }
  }
}

/** The directory of the credential files: <userData>/subscriptions. */
function subscriptionsDir(userData) {
  return path.join(userData, 'subscriptions');
}

module.exports = { Subscriptions, subscriptionsDir, isOpenableVerificationUri, PROVIDER_IDS };
