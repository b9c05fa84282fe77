// Subscription logins (issue 19 item 2, decision 0019): ChatGPT, GitHub Copilot and xAI, each a
// single saved connection. In the desktop app Electron main owns the logins and the page talks to
// it over the preload's origin-pinned bridge (`window.lhDesktop.subscriptions`); in a browser the
// server owns them (GET /api/subscriptions, POST .../{provider}/login|cancel, DELETE .../{provider}).
// Both answer the same status shape; it never carries a token.

import { ApiError, describeError } from '../../core/errors';

export const SUBSCRIPTION_PROVIDERS = ['chatgpt', 'github-copilot-subscription', 'xai-subscription'] as const;
export type SubscriptionProvider = (typeof SUBSCRIPTION_PROVIDERS)[number];

export const SUBSCRIPTION_LABELS: Record<SubscriptionProvider, string> = {
  chatgpt: 'ChatGPT subscription',
  'github-copilot-subscription': 'GitHub Copilot subscription',
  'xai-subscription': 'xAI subscription',
};

export type SubscriptionState = 'disconnected' | 'pending' | 'connected' | 'error';

export interface ProviderStatus {
  state: SubscriptionState;
  userCode: string | null;
  verificationUri: string | null;
  /** Epoch seconds: the access token's expiry when connected, the user code's when pending. */
  expiresAt: number | null;
  account: string | null;
  /** Plain words, never a raw provider body. */
  error: string | null;
}

export interface SubscriptionStatus {
  mode: 'web' | 'desktop';
  providers: Record<SubscriptionProvider, ProviderStatus>;
}

/** The part of `window.lhDesktop` (electron/preload.cjs) that handles subscription logins. */
export interface SubscriptionBridge {
  status(): Promise<unknown>;
  login(provider: string): Promise<unknown>;
  cancel(provider: string): Promise<unknown>;
  logout(provider: string): Promise<unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const STATES: readonly SubscriptionState[] = ['disconnected', 'pending', 'connected', 'error'];

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

/** Only an http(s) link is shown as a link (a bridge or server answer is not trusted blindly). */
function link(value: unknown): string | null {
  const s = text(value);
  return s && /^https?:\/\/\S+$/i.test(s) ? s : null;
}

export const DISCONNECTED: ProviderStatus = {
  state: 'disconnected',
  userCode: null,
  verificationUri: null,
  expiresAt: null,
  account: null,
  error: null,
};

/** Any answer as the status shape: unknown providers dropped, missing ones disconnected. */
export function normalizeSubscriptionStatus(raw: unknown, fallbackMode: 'web' | 'desktop' = 'web'): SubscriptionStatus {
  const r = isRecord(raw) ? raw : {};
  const providers = {} as Record<SubscriptionProvider, ProviderStatus>;
  const given = isRecord(r.providers) ? r.providers : {};
  for (const id of SUBSCRIPTION_PROVIDERS) {
    const p = given[id];
    if (!isRecord(p)) {
      providers[id] = { ...DISCONNECTED };
      continue;
    }
    const state = STATES.includes(p.state as SubscriptionState) ? (p.state as SubscriptionState) : 'error';
    providers[id] = {
      state,
      userCode: text(p.userCode),
      verificationUri: link(p.verificationUri),
      expiresAt: typeof p.expiresAt === 'number' && Number.isFinite(p.expiresAt) ? p.expiresAt : null,
      account: text(p.account),
      error: text(p.error) ?? (state === 'error' ? 'This login is in an unknown state; connect again.' : null),
    };
  }
  return { mode: r.mode === 'desktop' || r.mode === 'web' ? r.mode : fallbackMode, providers };
}

/** The desktop shell's subscription bridge, or null in a browser (or when it lacks a call). */
export function subscriptionBridge(scope: unknown = globalThis): SubscriptionBridge | null {
  const desktop = isRecord(scope) || typeof scope === 'function' ? (scope as Record<string, unknown>).lhDesktop : undefined;
  if (!isRecord(desktop) || !isRecord(desktop.subscriptions)) return null;
  const bridge = desktop.subscriptions;
  for (const name of ['status', 'login', 'cancel', 'logout']) if (typeof bridge[name] !== 'function') return null;
  return bridge as unknown as SubscriptionBridge;
}

const IPC_PREFIX = /^Error invoking remote method '[^']*':\s*/;
const ERROR_PREFIX = /^[A-Za-z]*Error:\s*/;

/** An error from the bridge or the server in plain words (Electron's IPC wrapper removed). */
export function plainSubscriptionError(err: unknown): string {
  if (!(err instanceof Error) || err instanceof ApiError || err.name === 'ApiError') return describeError(err).detail;
  let message = err.message.replace(IPC_PREFIX, '');
  while (ERROR_PREFIX.test(message)) message = message.replace(ERROR_PREFIX, '');
  if (/^refused: not the app page/i.test(message)) {
    return 'The app refused the request because it did not come from its own page. Reload the window and try again.';
  }
  const trimmed = message.trim() || 'Something went wrong with the subscription login';
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

export interface SubscriptionsClient {
  mode: 'web' | 'desktop';
  status(): Promise<SubscriptionStatus>;
  login(provider: SubscriptionProvider): Promise<SubscriptionStatus>;
  cancel(provider: SubscriptionProvider): Promise<SubscriptionStatus>;
  logout(provider: SubscriptionProvider): Promise<SubscriptionStatus>;
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

async function call(fetcher: Fetch, path: string, method = 'GET', body?: unknown): Promise<SubscriptionStatus> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetcher(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) {
    let detail = '';
    try {
      detail = await res.text();
    } catch {
      // ApiError falls back to the status
    }
    throw new ApiError(res.status, detail);
  }
  return normalizeSubscriptionStatus(await res.json(), 'web');
}

/**
 * The one place Settings drives subscription logins: the shell's bridge when present (desktop),
 * else the server's routes (web). `fetcher` is for tests.
 */
export function subscriptionsClient(
  bridge: SubscriptionBridge | null = subscriptionBridge(),
  fetcher: Fetch = (input, init) => fetch(input, init),
): SubscriptionsClient {
  if (bridge) {
    const norm = (raw: unknown) => normalizeSubscriptionStatus(raw, 'desktop');
    return {
      mode: 'desktop',
      status: async () => norm(await bridge.status()),
      login: async (p) => norm(await bridge.login(p)),
      cancel: async (p) => norm(await bridge.cancel(p)),
      logout: async (p) => norm(await bridge.logout(p)),
    };
  }
  const path = (p: string) => `/api/subscriptions/${encodeURIComponent(p)}`;
  return {
    mode: 'web',
    status: () => call(fetcher, '/api/subscriptions'),
    login: (p) => call(fetcher, `${path(p)}/login`, 'POST', {}),
    cancel: (p) => call(fetcher, `${path(p)}/cancel`, 'POST', {}),
    logout: (p) => call(fetcher, path(p), 'DELETE'),
  };
}

/** Whether any login waits for its code to be entered (desktop Settings polls every 2 s then). */
export function anyPending(status: SubscriptionStatus | null): boolean {
  return !!status && SUBSCRIPTION_PROVIDERS.some((p) => status.providers[p].state === 'pending');
}

/** "expires in 14 minutes" / "valid until 15:04" style words for an epoch-seconds time. */
export function whenWords(epochS: number | null, nowMs: number = Date.now()): string | null {
  if (epochS === null) return null;
  const seconds = Math.round(epochS - nowMs / 1000);
  if (seconds <= 0) return 'expired';
  if (seconds < 90) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `in ${minutes} minutes`;
  return `in ${Math.round(minutes / 60)} hours`;
}
