// Where API keys go (issue 19, decision 0018). In the desktop app Electron main keeps every key
// (model providers, web search providers, Deepgram): the page hands a key to main over the
// preload's origin-pinned bridge (`window.lhDesktop`), main stores it encrypted and restarts the
// server with the key in its environment, and the page reads key presence from main
// (`apiKeyStatus()`), never a key. In a browser (web mode) keys go to the server's
// PUT/DELETE /api/keys/{provider} (OS keychain or owner-only file) as before.

import { useCallback, useEffect, useState } from 'react';
import * as api from '../../api';
import { describeError } from '../../core/errors';
import type { SearchProvider } from '../../core/machine_room/research';
import type { KeyProvider } from '../../core/types';

/** Every key the app holds: model providers, web search providers, the dictation service. */
export type KeyName = KeyProvider | SearchProvider | 'deepgram';

/** The part of `window.lhDesktop` (electron/preload.cjs) that handles keys. */
export interface KeyBridge {
  setApiKey(provider: string, key: string): Promise<unknown>;
  deleteApiKey(provider: string): Promise<unknown>;
  apiKeyStatus(): Promise<unknown>;
}

export interface KeyPresence {
  set: boolean;
  /** 'app': stored by the desktop app; 'env': an environment variable; 'keyring' / 'file': the server's store. */
  source: string | null;
}

/** Main's answer to apiKeyStatus() (electron/policy.cjs keyStatus), normalised. */
export interface DesktopKeyStatus {
  providers: Record<string, KeyPresence>;
  /** 'os': keys are encrypted by the system keychain; 'unavailable': the app cannot store keys. */
  storage: 'os' | 'unavailable';
  /** What is wrong with the stored keys, in plain words (a damaged key file, ...); null: nothing. */
  problem: string | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The desktop shell's key bridge, or null in a browser (or when the bridge lacks the key calls). */
export function desktopBridge(scope: unknown = globalThis): KeyBridge | null {
  const candidate = isRecord(scope) || typeof scope === 'function' ? (scope as Record<string, unknown>).lhDesktop : undefined;
  if (!isRecord(candidate)) return null;
  const { setApiKey, deleteApiKey, apiKeyStatus } = candidate;
  if (typeof setApiKey !== 'function' || typeof deleteApiKey !== 'function' || typeof apiKeyStatus !== 'function') return null;
  return candidate as unknown as KeyBridge;
}

export function normalizeDesktopStatus(raw: unknown): DesktopKeyStatus {
  const r = isRecord(raw) ? raw : {};
  const providers: Record<string, KeyPresence> = {};
  if (isRecord(r.providers)) {
    for (const [name, value] of Object.entries(r.providers)) {
      if (!isRecord(value)) continue;
      providers[name] = { set: value.set === true, source: typeof value.source === 'string' ? value.source : null };
    }
  }
  return {
    providers,
    storage: r.storage === 'os' ? 'os' : 'unavailable',
    problem: typeof r.problem === 'string' && r.problem.trim() ? r.problem : null,
  };
}

const IPC_PREFIX = /^Error invoking remote method '[^']*':\s*/;
const ERROR_PREFIX = /^(?:[A-Za-z]*Error|KeyStoreUnavailable):\s*/;

const MAIN_WORDS: [RegExp, string][] = [
  [/^refused: not the app page/i, 'The app refused the request because it did not come from its own page. Reload the window and try again.'],
  [/^unknown provider/i, 'The app does not keep keys for this service.'],
  [/^the API key is empty/i, 'The key is empty. Paste the key you copied from the provider.'],
  [/^the API key is too long/i, 'This key is too long to be a real key. Check what you pasted.'],
  [/^the API key contains control characters/i, 'The key contains invisible characters (such as a line break). Paste it again.'],
  [/^the API key must be a string/i, 'The key was not text. Paste it again.'],
];

function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return 'Something went wrong while saving the key.';
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * A key error in plain words: Electron's "Error invoking remote method 'lh:…': Error: …" wrapper
 * removed and main's short reasons turned into sentences; server refusals as their `detail`.
 */
export function plainKeyError(err: unknown): string {
  if (!(err instanceof Error) || err.name === 'ApiError') return describeError(err).detail;
  let text = err.message.replace(IPC_PREFIX, '');
  while (ERROR_PREFIX.test(text)) text = text.replace(ERROR_PREFIX, '');
  for (const [pattern, words] of MAIN_WORDS) if (pattern.test(text)) return words;
  return sentence(text);
}

/** Who keeps the keys: 'desktop' when the shell's bridge exists or the server says so, else 'server'. */
export function keysOwnerOf(bridge: KeyBridge | null, serverSays?: unknown): 'desktop' | 'server' {
  return bridge || serverSays === 'desktop' ? 'desktop' : 'server';
}

export interface KeysClient {
  owner: 'desktop' | 'server';
  /** The shell's key status (desktop), or null in web mode (presence comes from GET /api/settings). */
  status(): Promise<DesktopKeyStatus | null>;
  /** Store a key (trimmed). Desktop: main stores it and restarts the server before this resolves. */
  setKey(name: KeyName, key: string): Promise<DesktopKeyStatus | null>;
  deleteKey(name: KeyName): Promise<DesktopKeyStatus | null>;
}

const NO_BRIDGE =
  'In the desktop app, keys are kept by the app itself: enter them in the Settings page of the Learning Harness window.';

/**
 * The one place the Settings page sends keys. `bridge` defaults to `window.lhDesktop`; `serverOwner`
 * is GET /api/settings' `keysOwner` (a desktop server reached without the bridge refuses key calls).
 */
export function keysClient(bridge: KeyBridge | null = desktopBridge(), serverOwner?: unknown): KeysClient {
  if (bridge) {
    return {
      owner: 'desktop',
      status: async () => normalizeDesktopStatus(await bridge.apiKeyStatus()),
      setKey: async (name, key) => normalizeDesktopStatus(await bridge.setApiKey(name, key.trim())),
      deleteKey: async (name) => normalizeDesktopStatus(await bridge.deleteApiKey(name)),
    };
  }
  if (serverOwner === 'desktop') {
    const refuse = async (): Promise<never> => {
      throw new Error(NO_BRIDGE);
    };
    return { owner: 'desktop', status: async () => null, setKey: refuse, deleteKey: refuse };
  }
  return {
    owner: 'server',
    status: async () => null,
    setKey: async (name, key) => {
      await api.putKey(name, key.trim());
      return null;
    },
    deleteKey: async (name) => {
      await api.deleteKey(name);
      return null;
    },
  };
}

/** A key's presence for the UI: the shell's status in the desktop app, else the server's. */
export function presenceOf(name: string, desktop: DesktopKeyStatus | null, server: KeyPresence | boolean | undefined | null): KeyPresence {
  if (desktop) return desktop.providers[name] ?? { set: false, source: null };
  if (typeof server === 'boolean') return { set: server, source: null };
  return server ? { set: server.set === true, source: server.source ?? null } : { set: false, source: null };
}

/**
 * React: the shell's key status (null in web mode or until read), and `adopt` to take the status a
 * set/delete answered. A failed read leaves the status null and sets `error` in plain words.
 */
export function useDesktopKeyStatus(client: KeysClient): {
  status: DesktopKeyStatus | null;
  error: string | null;
  adopt: (next: DesktopKeyStatus | null) => void;
} {
  const [status, setStatus] = useState<DesktopKeyStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const owner = client.owner;
  useEffect(() => {
    if (owner !== 'desktop') return;
    let live = true;
    client.status().then(
      (next) => {
        if (live) setStatus(next);
      },
      (err: unknown) => {
        if (live) setError(plainKeyError(err));
      },
    );
    return () => {
      live = false;
    };
    // The client is rebuilt per render; its owner (and bridge) does not change while mounted.
  }, [owner]);
  const adopt = useCallback((next: DesktopKeyStatus | null) => {
    if (next) {
      setStatus(next);
      setError(null);
    }
  }, []);
  return { status, error, adopt };
}
