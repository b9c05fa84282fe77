'use strict';
/**
 * One controller per subscription provider: the single saved connection, its device login, its
 * serialized refresh and the push of scoped request auth to the server (seed §8.1, issue 19
 * item 2). Plain Node: clock, sleep, timers, fetch, the opener and the push are injected.
 *
 * Status (never tokens): {state: 'disconnected'|'pending'|'connected'|'error', userCode,
 * verificationUri, expiresAt (epoch s: the access token's expiry when connected, the user
 * code's when pending), account, error (plain words)}.
 *
 * Serialization: one login flow at a time (a second login while pending joins the first), one
 * refresh at a time (concurrent callers share the promise), and a logout waits for a refresh in
 * flight so nothing is written after it.
 */

const { FlowCancelled, pollUntilDone, realSleep, refreshAt, needsRefresh } = require('./device-flow.cjs');
const { SubscriptionRevoked, SubscriptionRefused, scopedAuth } = require('./providers.cjs');
const { CredentialFileRejected } = require('./store.cjs');

const RETRY_MS = 60 * 1000;
const MAX_TIMER_MS = 6 * 60 * 60 * 1000; // re-evaluate at least every 6 h (setTimeout caps at ~24.8 days)

function idle() {
  return { state: 'disconnected', userCode: null, verificationUri: null, expiresAt: null, account: null, error: null };
}

class SubscriptionController {
  /**
   * @param {object} provider one of providers.PROVIDERS
   * @param {{store: import('./store.cjs').CredentialStore, env?: object, fetch?: Function,
   *   now?: () => number, sleep?: (ms: number, signal?: AbortSignal) => Promise<void>,
   *   setTimer?: Function, clearTimer?: Function, log?: (m: string) => void,
   *   openExternal?: (url: string) => void, push?: (id: string, auth: object|null) => Promise<boolean>,
   *   onChange?: (id: string) => void, retryMs?: number}} options
   */
  constructor(provider, options) {
    this.provider = provider;
    this.id = provider.id;
    this.store = options.store;
    this.cfg = provider.config(options.env || process.env);
    this.now = options.now || Date.now;
    this.ctx = { fetch: options.fetch || globalThis.fetch, nowS: () => Math.floor(this.now() / 1000) };
    this.sleep = options.sleep || realSleep;
    this.setTimer = options.setTimer || ((fn, ms) => {
      const timer = setTimeout(fn, ms);
      if (typeof timer.unref === 'function') timer.unref();
      return timer;
    });
    this.clearTimer = options.clearTimer || clearTimeout;
    this.log = options.log || (() => {});
    this.openExternal = options.openExternal || (() => {});
    this.push = options.push || (async () => true);
    this.onChange = options.onChange || (() => {});
    this.retryMs = options.retryMs || RETRY_MS;
    this.credential = null;
    this.current = idle();
    this.flow = null;
    this.refreshing = null;
    this.timer = null;
    this.closed = false;
  }

  status() {
    return { ...this.current };
  }

  setStatus(next) {
    this.current = { ...idle(), ...next };
    this.onChange(this.id);
  }

  /** Status from the saved credential (connected) or none, with an optional error note. */
  settle(error = null) {
    if (this.credential) {
      this.setStatus({ state: 'connected', expiresAt: this.credential.expiresAt, account: this.credential.account || null, error });
    } else {
      this.setStatus(error ? { state: 'error', error } : {});
    }
  }

  /** Read the saved connection; start its renewal when due (not awaited). Never rejects. */
  async init() {
    try {
      this.credential = await this.store.read();
    } catch (error) {
      this.credential = null;
      this.setStatus({ state: 'error', error: error instanceof CredentialFileRejected ? error.message : 'The saved login could not be read; connect again.' });
      return this.status();
    }
    this.settle();
    if (this.credential) {
      if (needsRefresh(this.credential.expiresAt, this.ctx.nowS())) this.refresh();
      else this.schedule();
    }
    return this.status();
  }

  // -- login ------------------------------------------------------------------------------------

  /**
   * Start the device login, or join the one in flight. Resolves with the pending status (user
   * code and verification page) once the provider has issued a code; the poll goes on in the
   * background. Never rejects: failures become an error status.
   */
  login() {
    if (this.flow) return this.flow.started;
    const abort = new AbortController();
    const flow = { abort, started: null };
    this.flow = flow;
    flow.started = (async () => {
      let info;
      try {
        info = await this.provider.start(this.cfg, this.ctx);
      } catch (error) {
        if (this.flow === flow) this.flow = null;
        this.log(`subscriptions: ${this.id}: login could not start: ${error.message}`);
        if (!abort.signal.aborted) this.settle(this.plain(error));
        return this.status();
      }
      if (abort.signal.aborted || this.flow !== flow) return this.status();
      this.setStatus({ state: 'pending', userCode: info.userCode, verificationUri: info.verificationUri, expiresAt: info.expiresAt });
      this.log(`subscriptions: ${this.id}: login started; waiting for the user to enter the code`);
      try {
        this.openExternal(info.verificationUri);
      } catch (error) {
        this.log(`subscriptions: ${this.id}: could not open the verification page (${error.message})`);
      }
      this.poll(flow, info).catch(() => {});
      return this.status();
    })();
    return flow.started;
  }

  async poll(flow, info) {
    try {
      const grant = await pollUntilDone({
        interval: info.interval,
        deadline: info.expiresAt,
        pollOnce: () => this.provider.pollOnce(this.cfg, info.handle, { ...this.ctx, signal: flow.abort.signal }),
        sleep: this.sleep,
        now: this.now,
        signal: flow.abort.signal,
      });
      const credential = await this.provider.complete(this.cfg, grant, this.ctx);
      if (flow.abort.signal.aborted || this.flow !== flow) return;
      await this.store.write(credential);
      this.flow = null;
      this.credential = credential;
      this.settle();
      this.log(`subscriptions: ${this.id}: connected`);
      this.schedule();
      await this.push(this.id, scopedAuth(credential));
    } catch (error) {
      if (error instanceof FlowCancelled || flow.abort.signal.aborted || this.flow !== flow) return;
      this.flow = null;
      this.log(`subscriptions: ${this.id}: login failed: ${error.message}`);
      this.settle(this.plain(error));
    }
  }

  /** Stop a pending login; a saved connection stays as it was. */
  cancel() {
    if (this.flow) {
      this.flow.abort.abort();
      this.flow = null;
      this.log(`subscriptions: ${this.id}: login cancelled`);
      this.settle();
    }
    return this.status();
  }

  /** Forget the saved connection (after any refresh in flight) and withdraw it from the server. */
  async logout() {
    this.cancel();
    this.unschedule();
    if (this.refreshing) await this.refreshing.catch(() => {});
    const had = this.credential !== null || this.store.exists();
    this.credential = null;
    this.store.remove();
    this.setStatus({});
    if (had) this.log(`subscriptions: ${this.id}: logged out`);
    await this.push(this.id, null);
    return this.status();
  }

  // -- refresh ----------------------------------------------------------------------------------

  /** Renew the access token; concurrent callers share one request. Never rejects. */
  refresh() {
    if (this.refreshing) return this.refreshing;
    this.refreshing = this.doRefresh()
      .catch((error) => {
        // Unexpected (e.g. the file system refused): say so, keep the app running, try again later.
        this.log(`subscriptions: ${this.id}: renewal stopped: ${error.message}`);
        this.settle(`Renewing the ${this.provider.label} login failed (${error.message}).`);
        this.schedule(this.retryMs);
        return this.status();
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  async doRefresh() {
    const before = this.credential;
    if (!before) return this.status();
    this.unschedule();
    let next;
    try {
      next = await this.provider.refresh(this.cfg, before, this.ctx);
    } catch (error) {
      if (this.credential !== before) return this.status();
      if (error instanceof SubscriptionRevoked || error instanceof SubscriptionRefused) {
        this.log(`subscriptions: ${this.id}: renewal refused: ${error.message}`);
        this.credential = null;
        this.store.remove();
        this.setStatus({ state: 'error', error: error.message });
        await this.push(this.id, null);
        return this.status();
      }
      this.log(`subscriptions: ${this.id}: renewal failed: ${error.message}; retrying in ${Math.round(this.retryMs / 1000)} s`);
      if (before.expiresAt <= this.ctx.nowS()) {
        this.setStatus({
          state: 'error',
          account: before.account || null,
          error: `The ${this.provider.label} login has expired and renewing it failed (${error.message}); the app keeps trying.`,
        });
      } else {
        this.settle(`Renewing the ${this.provider.label} login failed (${error.message}); the app keeps trying.`);
      }
      this.schedule(this.retryMs);
      return this.status();
    }
    if (this.credential !== before) return this.status();
    try {
      await this.store.write(next);
    } catch (error) {
      this.log(`subscriptions: ${this.id}: could not save the renewed login: ${error.message}`);
    }
    this.credential = next;
    this.settle();
    this.log(`subscriptions: ${this.id}: renewed; valid for ${Math.max(0, next.expiresAt - this.ctx.nowS())} s`);
    this.schedule();
    await this.push(this.id, scopedAuth(next));
    return this.status();
  }

  schedule(delayMs) {
    this.unschedule();
    if (this.closed || !this.credential) return;
    let ms = delayMs;
    if (ms === undefined) {
      const nowS = this.ctx.nowS();
      ms = Math.max(0, (refreshAt(this.credential.expiresAt, nowS) - nowS) * 1000);
    }
    const capped = Math.min(ms, MAX_TIMER_MS);
    this.timer = this.setTimer(() => {
      this.timer = null;
      if (capped < ms) this.schedule();
      else this.refresh();
    }, capped);
  }

  unschedule() {
    if (this.timer !== null) {
      this.clearTimer(this.timer);
      this.timer = null;
    }
  }

  /** Push the current scoped auth again (after a server start), renewing first when due. */
  async resync() {
    if (!this.credential) return false;
    if (needsRefresh(this.credential.expiresAt, this.ctx.nowS())) {
      await this.refresh();
      return true;
    }
    return this.push(this.id, scopedAuth(this.credential));
  }

  close() {
    this.closed = true;
    this.unschedule();
    if (this.flow) {
      this.flow.abort.abort();
      this.flow = null;
    }
  }

  /** A plain-words message for the status (never a provider body). */
  plain(error) {
    if (error && typeof error.message === 'string' && error.message) return error.message;
    return `The ${this.provider.label} login failed. Connect again.`;
  }
}

module.exports = { SubscriptionController, RETRY_MS };
