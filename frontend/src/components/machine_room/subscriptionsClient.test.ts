import { describe, expect, it } from 'vitest';
import {
  anyPending,
  normalizeSubscriptionStatus,
  plainSubscriptionError,
  subscriptionBridge,
  subscriptionsClient,
  whenWords,
  type SubscriptionBridge,
} from './subscriptionsClient';

const PENDING = {
  mode: 'desktop',
  providers: {
    chatgpt: {
      state: 'pending',
      userCode: 'ABCD-1234',
      verificationUri: 'https://auth.openai.com/codex/device',
      expiresAt: 2000,
      account: null,
      error: null,
    },
  },
};

function recordingBridge(answer: unknown = PENDING) {
  const calls: string[] = [];
  const bridge: SubscriptionBridge = {
    status: async () => (calls.push('status'), answer),
    login: async (p) => (calls.push(`login ${p}`), answer),
    cancel: async (p) => (calls.push(`cancel ${p}`), answer),
    logout: async (p) => (calls.push(`logout ${p}`), answer),
  };
  return { bridge, calls };
}

describe('normalizeSubscriptionStatus', () => {
  it('fills every provider and keeps the shape', () => {
    const status = normalizeSubscriptionStatus(PENDING);
    expect(status.mode).toBe('desktop');
    expect(status.providers.chatgpt.userCode).toBe('ABCD-1234');
    expect(status.providers['xai-subscription'].state).toBe('disconnected');
    expect(status.providers['github-copilot-subscription'].state).toBe('disconnected');
  });

  it('never trusts a strange answer', () => {
    const status = normalizeSubscriptionStatus(
      {
        mode: 'other',
        providers: {
          chatgpt: { state: 'weird', verificationUri: 'javascript:alert(1)', expiresAt: 'soon' },
          openai: { state: 'connected' },
        },
      },
      'web',
    );
    expect(status.mode).toBe('web');
    expect(status.providers.chatgpt.state).toBe('error');
    expect(status.providers.chatgpt.error).toMatch(/connect again/);
    expect(status.providers.chatgpt.verificationUri).toBeNull();
    expect(status.providers.chatgpt.expiresAt).toBeNull();
    expect(Object.keys(status.providers)).not.toContain('openai');
    expect(normalizeSubscriptionStatus(null).providers.chatgpt.state).toBe('disconnected');
  });
});

describe('subscriptionBridge', () => {
  it('is found only when all four calls exist', () => {
    const { bridge } = recordingBridge();
    expect(subscriptionBridge({ lhDesktop: { subscriptions: bridge } })).toBe(bridge);
    expect(subscriptionBridge({ lhDesktop: { subscriptions: { ...bridge, logout: 1 } } })).toBeNull();
    expect(subscriptionBridge({ lhDesktop: {} })).toBeNull();
    expect(subscriptionBridge()).toBeNull(); // vitest runs in node: no window.lhDesktop
  });
});

describe('subscriptionsClient', () => {
  it('drives the desktop bridge when present', async () => {
    const { bridge, calls } = recordingBridge();
    const client = subscriptionsClient(bridge);
    expect(client.mode).toBe('desktop');
    expect((await client.login('chatgpt')).providers.chatgpt.state).toBe('pending');
    await client.cancel('xai-subscription');
    await client.logout('github-copilot-subscription');
    await client.status();
    expect(calls).toEqual(['login chatgpt', 'cancel xai-subscription', 'logout github-copilot-subscription', 'status']);
  });

  it('uses the web routes without a bridge', async () => {
    const seen: [string, string, string | undefined][] = [];
    const fetcher = async (input: string, init?: RequestInit) => {
      seen.push([init?.method ?? 'GET', input, init?.body as string | undefined]);
      return new Response(JSON.stringify({ mode: 'web', providers: {} }), { status: 200 });
    };
    const client = subscriptionsClient(null, fetcher);
    expect(client.mode).toBe('web');
    await client.status();
    await client.login('chatgpt');
    await client.cancel('chatgpt');
    await client.logout('xai-subscription');
    expect(seen).toEqual([
      ['GET', '/api/subscriptions', undefined],
      ['POST', '/api/subscriptions/chatgpt/login', '{}'],
      ['POST', '/api/subscriptions/chatgpt/cancel', '{}'],
      ['DELETE', '/api/subscriptions/xai-subscription', undefined],
    ]);
  });

  it('turns a refusal into plain words', async () => {
    const fetcher = async () =>
      new Response(JSON.stringify({ error: 'desktop_mode', detail: 'the desktop app keeps subscription logins; use Settings' }), {
        status: 409,
      });
    const client = subscriptionsClient(null, fetcher);
    const err = await client.status().then(
      () => null,
      (e: unknown) => e,
    );
    expect(plainSubscriptionError(err)).toContain('the desktop app keeps subscription logins');
  });
});

describe('plainSubscriptionError', () => {
  it('strips the IPC wrapper', () => {
    const err = new Error("Error invoking remote method 'lh:subscriptions-login': Error: refused: not the app page");
    expect(plainSubscriptionError(err)).toMatch(/did not come from its own page/);
    expect(plainSubscriptionError(new Error("Error invoking remote method 'x': Error: could not reach github.com"))).toBe(
      'Could not reach github.com.',
    );
  });
});

describe('helpers', () => {
  it('anyPending and whenWords', () => {
    expect(anyPending(normalizeSubscriptionStatus(PENDING))).toBe(true);
    expect(anyPending(normalizeSubscriptionStatus({}))).toBe(false);
    expect(anyPending(null)).toBe(false);
    expect(whenWords(null)).toBeNull();
    expect(whenWords(100, 200_000)).toBe('expired');
    expect(whenWords(1030, 1_000_000)).toBe('in 30 s');
    expect(whenWords(1000 + 15 * 60, 1_000_000)).toBe('in 15 minutes');
    expect(whenWords(1000 + 5 * 3600, 1_000_000)).toBe('in 5 hours');
  });
});
