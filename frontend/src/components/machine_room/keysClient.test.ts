import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../core/errors';
import {
  desktopBridge,
  keysClient,
  keysOwnerOf,
  normalizeDesktopStatus,
  plainKeyError,
  presenceOf,
  type KeyBridge,
} from './keysClient';

const STATUS = {
  storage: 'os',
  problem: null,
  providers: {
    openai: { set: true, source: 'app', env: 'LH_OPENAI_API_KEY' },
    tavily: { set: false, source: null, env: 'LH_TAVILY_API_KEY' },
    deepgram: { set: true, source: 'env', env: 'LH_DEEPGRAM_API_KEY' },
  },
};

function fakeBridge(overrides: Partial<KeyBridge> = {}) {
  const calls: unknown[][] = [];
  const bridge: KeyBridge = {
    setApiKey: async (provider, key) => {
      calls.push(['set', provider, key]);
      return STATUS;
    },
    deleteApiKey: async (provider) => {
      calls.push(['delete', provider]);
      return STATUS;
    },
    apiKeyStatus: async () => STATUS,
    ...overrides,
  };
  return { bridge, calls };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('desktopBridge', () => {
  it('finds the preload bridge with its key calls, and nothing else', () => {
    const { bridge } = fakeBridge();
    expect(desktopBridge({ lhDesktop: { version: '1', ...bridge } })).not.toBeNull();
    expect(desktopBridge({})).toBeNull();
    expect(desktopBridge({ lhDesktop: { version: '1' } })).toBeNull();
    expect(desktopBridge({ lhDesktop: { setApiKey: 'no', deleteApiKey: () => 0, apiKeyStatus: () => 0 } })).toBeNull();
    expect(desktopBridge(null)).toBeNull();
    expect(desktopBridge()).toBeNull(); // vitest runs in node: no window.lhDesktop
  });
});

describe('keysClient in the desktop app', () => {
  it('sends model, search and dictation keys to main (trimmed) and never to /api/keys', async () => {
    const fetchSpy = vi.fn();
    vi.stubGlobal('fetch', fetchSpy);
    const { bridge, calls } = fakeBridge();
    const client = keysClient(bridge);
    expect(client.owner).toBe('desktop');
    const after = await client.setKey('openai', '  sk-desk-1234  ');
    await client.setKey('tavily', 'tv-1234');
    await client.setKey('deepgram', 'dg-1234');
    await client.deleteKey('brave');
    expect(calls).toEqual([
      ['set', 'openai', 'sk-desk-1234'],
      ['set', 'tavily', 'tv-1234'],
      ['set', 'deepgram', 'dg-1234'],
      ['delete', 'brave'],
    ]);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(after?.providers.openai).toEqual({ set: true, source: 'app' });
    expect(JSON.stringify(after)).not.toContain('sk-desk');
    expect((await client.status())?.storage).toBe('os');
  });

  it('main refusals reach the user in plain words', async () => {
    const wrap = (message: string) => new Error(`Error invoking remote method 'lh:set-api-key': ${message}`);
    const { bridge } = fakeBridge({
      setApiKey: async () => {
        throw wrap('Error: refused: not the app page');
      },
    });
    const error = await keysClient(bridge).setKey('openai', 'sk-x').catch((err: unknown) => err);
    expect(plainKeyError(error)).toMatch(/did not come from its own page/);
    expect(plainKeyError(wrap('TypeError: the API key is empty'))).toMatch(/^The key is empty\./);
    expect(plainKeyError(wrap('KeyStoreUnavailable: no OS key store is available to encrypt the key; set it in the environment instead (LH_OPENAI_API_KEY)'))).toBe(
      'No OS key store is available to encrypt the key; set it in the environment instead (LH_OPENAI_API_KEY).',
    );
    expect(plainKeyError(wrap('Error: the server did not restart; the app is closing (see the log)'))).toBe(
      'The server did not restart; the app is closing (see the log).',
    );
    expect(plainKeyError(wrap('TypeError: unknown provider "x"; expected one of openai'))).toMatch(/does not keep keys for this service/);
  });

  it('a desktop server reached without the bridge says where keys go instead of calling /api/keys', async () => {
    const fetchSpy = vi.fn();
    vi.stubGlobal('fetch', fetchSpy);
    const client = keysClient(null, 'desktop');
    expect(client.owner).toBe('desktop');
    await expect(client.setKey('openai', 'sk-1234')).rejects.toThrow(/kept by the app itself/);
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

describe('keysClient in web mode', () => {
  it('uses PUT/DELETE /api/keys/{provider}, deepgram included', async () => {
    const requests: [string, string, string | null][] = [];
    vi.stubGlobal('fetch', async (path: string, init: RequestInit) => {
      requests.push([path, init.method ?? 'GET', typeof init.body === 'string' ? init.body : null]);
      return new Response(null, { status: 204 });
    });
    const client = keysClient(null, 'server');
    expect(client.owner).toBe('server');
    expect(await client.setKey('deepgram', ' dg-web-1234 ')).toBeNull();
    expect(await client.deleteKey('openai-compatible')).toBeNull();
    expect(await client.status()).toBeNull();
    expect(requests).toEqual([
      ['/api/keys/deepgram', 'PUT', '{"key":"dg-web-1234"}'],
      ['/api/keys/openai-compatible', 'DELETE', null],
    ]);
  });

  it('a server refusal is shown as its detail', async () => {
    vi.stubGlobal('fetch', async () =>
      new Response('{"error":"keys_owned_by_app","detail":"In the desktop app, keys are kept by the app itself: enter them in Settings."}', { status: 409 }),
    );
    const error = await keysClient(null).setKey('openai', 'sk-12345678').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApiError);
    expect(plainKeyError(error)).toBe('In the desktop app, keys are kept by the app itself: enter them in Settings.');
  });
});

describe('status helpers', () => {
  it('normalises what main answers, whatever arrives', () => {
    expect(normalizeDesktopStatus({ storage: 'os', problem: 'The key file was damaged.', providers: { openai: { set: true, source: 'app', env: 'X' }, bad: 3 } })).toEqual({
      storage: 'os',
      problem: 'The key file was damaged.',
      providers: { openai: { set: true, source: 'app' } },
    });
    expect(normalizeDesktopStatus(undefined)).toEqual({ storage: 'unavailable', problem: null, providers: {} });
    expect(normalizeDesktopStatus({ storage: 'weird', problem: '  ', providers: [] })).toEqual({ storage: 'unavailable', problem: null, providers: {} });
  });

  it('presence: the shell decides in the desktop app, the server in web mode', () => {
    const desktop = normalizeDesktopStatus(STATUS);
    expect(presenceOf('openai', desktop, { set: false, source: null })).toEqual({ set: true, source: 'app' });
    expect(presenceOf('google', desktop, true)).toEqual({ set: false, source: null });
    expect(presenceOf('openai', null, { set: true, source: 'keyring' })).toEqual({ set: true, source: 'keyring' });
    expect(presenceOf('tavily', null, true)).toEqual({ set: true, source: null });
    expect(presenceOf('tavily', null, undefined)).toEqual({ set: false, source: null });
    expect(keysOwnerOf(null, 'server')).toBe('server');
    expect(keysOwnerOf(null, 'desktop')).toBe('desktop');
    expect(keysOwnerOf(fakeBridge().bridge, 'server')).toBe('desktop');
  });
});
