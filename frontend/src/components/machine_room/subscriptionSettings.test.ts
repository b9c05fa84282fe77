import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { DISCONNECTED, subscriptionsClient, type ProviderStatus } from './subscriptionsClient';
import { SubscriptionRow } from './SubscriptionSettings';

const web = subscriptionsClient(null, async () => new Response('{}'));

function row(view: ProviderStatus): string {
  return renderToStaticMarkup(createElement(SubscriptionRow, { provider: 'chatgpt', view, client: web, onStatus: () => undefined }));
}

describe('SubscriptionRow', () => {
  it('shows a pending login: the code, the link, Cancel', () => {
    const html = row({
      ...DISCONNECTED,
      state: 'pending',
      userCode: 'ABCD-1234',
      verificationUri: 'https://auth.openai.com/codex/device',
      expiresAt: Date.now() / 1000 + 900,
    });
    expect(html).toContain('ChatGPT subscription');
    expect(html).toContain('data-testid="subscription-chatgpt-code"');
    expect(html).toContain('ABCD-1234');
    expect(html).toContain('href="https://auth.openai.com/codex/device"');
    expect(html).toContain('Copy code');
    expect(html).toContain('subscription-chatgpt-cancel');
    expect(html).not.toContain('subscription-chatgpt-connect');
  });

  it('shows a connection with its account and Disconnect', () => {
    const html = row({ ...DISCONNECTED, state: 'connected', account: 'me@example.test', expiresAt: Date.now() / 1000 + 3600 });
    expect(html).toContain('Connected as me@example.test');
    expect(html).toContain('subscription-chatgpt-disconnect');
    expect(html).toContain('Connect again');
  });

  it('shows an error in plain words with Connect', () => {
    const html = row({ ...DISCONNECTED, state: 'error', error: 'Your ChatGPT subscription login was revoked; connect again' });
    expect(html).toContain('role="alert"');
    expect(html).toContain('was revoked; connect again');
    expect(html).toContain('subscription-chatgpt-connect');
  });
});
