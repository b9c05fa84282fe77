// Settings > Subscriptions (issue 19 item 2, decision 0019): connect a ChatGPT, GitHub Copilot or
// xAI subscription with the provider's device code, and see each connection's state. The desktop
// app drives Electron main's logins over the preload bridge; a browser drives the server's. Both
// answer the same status (never a token). The list refetches on `subscriptions-changed` from the
// events channel, and, in the desktop app, every 2 s while a code waits to be entered.
// Beside each subscription, its background consent (issue 30 item 1, decision 0030): whether
// finished research, demos and visuals may continue a lesson on it on their own (default on).

import { useCallback, useMemo, useState } from 'react';
import { consentWords, type BackgroundConsent } from '../../core/machine_room/backgroundConsent';
import { backgroundConsentClient, type BackgroundConsentClient } from './backgroundConsentClient';
import {
  plainSubscriptionError,
  SUBSCRIPTION_LABELS,
  SUBSCRIPTION_PROVIDERS,
  subscriptionsClient,
  whenWords,
  type ProviderStatus,
  type SubscriptionProvider,
  type SubscriptionsClient,
  type SubscriptionStatus,
} from './subscriptionsClient';
import { useSubscriptionStatus } from './useSubscriptionStatus';
import './subscriptionSettings.css';

export default function SubscriptionSettings({
  client: given,
  consentClient: givenConsent,
}: {
  client?: SubscriptionsClient;
  consentClient?: BackgroundConsentClient;
}) {
  const client = useMemo(() => given ?? subscriptionsClient(), [given]);
  const consentClient = useMemo(() => givenConsent ?? backgroundConsentClient(), [givenConsent]);
  const [consent, setConsent] = useState<BackgroundConsent | null>(null);
  const [consentError, setConsentError] = useState<string | null>(null);
  const readConsent = useCallback(async () => {
    try {
      setConsent(await consentClient.get());
      setConsentError(null);
    } catch (err) {
      setConsentError(plainSubscriptionError(err));
    }
  }, [consentClient]);
  const { status, setStatus, loadError } = useSubscriptionStatus(client, readConsent);

  return (
    <section className="card subscriptions" data-testid="subscription-settings">
      <h2>Subscriptions</h2>
      <p className="muted">
        Use a subscription you already pay for instead of an API key. Connect it here, then choose it as a model provider above. Each
        connection is saved once{' '}
        {client.mode === 'desktop' ? 'by this app, encrypted' : 'in an owner-only file beside your data'}, renewed automatically, and never
        shown again.
      </p>
      {loadError && (
        <p className="error-text" role="alert" data-testid="subscriptions-error">
          Could not read the subscription logins: {loadError}
        </p>
      )}
      {consentError && (
        <p className="error-text" role="alert" data-testid="background-consent-error">
          Could not read whether background work may use your subscriptions: {consentError}
        </p>
      )}
      {status &&
        SUBSCRIPTION_PROVIDERS.map((p) => (
          <SubscriptionRow
            key={p}
            provider={p}
            view={status.providers[p]}
            client={client}
            onStatus={setStatus}
            consent={consent ? consent[p] : null}
            onConsent={async (allowed) => {
              // shown at once; the server's answer replaces it, or the old state comes back on a failure
              setConsent((before) => (before ? { ...before, [p]: allowed } : before));
              try {
                setConsent(await consentClient.set(p, allowed));
              } catch (err) {
                setConsent((before) => (before ? { ...before, [p]: !allowed } : before));
                throw err;
              }
            }}
          />
        ))}
      {!status && !loadError && <p className="muted">Loading…</p>}
    </section>
  );
}

interface RowProps {
  provider: SubscriptionProvider;
  view: ProviderStatus;
  client: SubscriptionsClient;
  onStatus: (next: SubscriptionStatus) => void;
  /** This provider's background consent; null while unknown (no switch shown). */
  consent?: boolean | null;
  /** Saves the switch (throws an error in plain words when it could not be saved). */
  onConsent?: (allowed: boolean) => Promise<void>;
}

function stateWords(view: ProviderStatus): string {
  switch (view.state) {
    case 'connected': {
      const who = view.account ? ` as ${view.account}` : '';
      return `Connected${who}`;
    }
    case 'pending':
      return 'Waiting for you to enter the code';
    case 'error':
      return 'Not connected';
    default:
      return 'Not connected';
  }
}

export function SubscriptionRow({ provider, view, client, onStatus, consent = null, onConsent }: RowProps) {
  const [busy, setBusy] = useState(false);
  const [consentBusy, setConsentBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const label = SUBSCRIPTION_LABELS[provider];

  async function run(action: () => Promise<SubscriptionStatus>) {
    setBusy(true);
    setError(null);
    try {
      onStatus(await action());
    } catch (err) {
      setError(plainSubscriptionError(err));
    } finally {
      setBusy(false);
    }
  }

  async function copy() {
    if (!view.userCode) return;
    try {
      await navigator.clipboard.writeText(view.userCode);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setError('Could not copy the code; select it and copy it yourself.');
    }
  }

  const expires = whenWords(view.expiresAt);
  return (
    <div className={`subscription-row state-${view.state}`} data-testid={`subscription-${provider}`}>
      <div className="subscription-head">
        <strong>{label}</strong>
        <span className="subscription-state" data-testid={`subscription-${provider}-state`}>
          {stateWords(view)}
        </span>
      </div>
      {view.state === 'pending' && (
        <div className="subscription-pending">
          <p>
            Open{' '}
            {view.verificationUri ? (
              <a href={view.verificationUri} target="_blank" rel="noopener noreferrer" data-testid={`subscription-${provider}-link`}>
                {view.verificationUri}
              </a>
            ) : (
              'the provider’s sign-in page'
            )}{' '}
            {client.mode === 'desktop' ? '(the app opened it in your browser) ' : ''}and enter this code
            {expires && expires !== 'expired' ? ` (it expires ${expires})` : ''}:
          </p>
          <div className="subscription-code-line">
            <code className="subscription-code" data-testid={`subscription-${provider}-code`} aria-label={`${label} code`}>
              {view.userCode ?? '…'}
            </code>
            <button type="button" className="btn btn-small" onClick={() => void copy()} disabled={!view.userCode}>
              {copied ? 'Copied' : 'Copy code'}
            </button>
          </div>
          <p className="muted small">Never share this code with anyone: it signs this app in to your account.</p>
        </div>
      )}
      {view.state === 'connected' && expires && (
        <p className="muted small">
          {expires === 'expired'
            ? client.mode === 'desktop'
              ? 'The current token has expired and is being renewed.'
              : 'The current token has expired; it is renewed the next time a lesson needs it.'
            : `The current token expires ${expires}; ${client.mode === 'desktop' ? 'the app renews it before then' : 'it is renewed when a lesson needs it'}.`}
        </p>
      )}
      {view.state === 'error' && view.error && (
        <p className="error-text" role="alert" data-testid={`subscription-${provider}-problem`}>
          {view.error}
        </p>
      )}
      <div className="subscription-actions">
        {view.state === 'pending' ? (
          <button type="button" className="btn" disabled={busy} onClick={() => void run(() => client.cancel(provider))} data-testid={`subscription-${provider}-cancel`}>
            Cancel
          </button>
        ) : (
          <button
            type="button"
            className="btn btn-primary"
            disabled={busy}
            onClick={() => void run(() => client.login(provider))}
            data-testid={`subscription-${provider}-connect`}
          >
            {view.state === 'connected' ? 'Connect again' : 'Connect'}
          </button>
        )}
        {view.state === 'connected' && (
          <button type="button" className="btn" disabled={busy} onClick={() => void run(() => client.logout(provider))} data-testid={`subscription-${provider}-disconnect`}>
            Disconnect
          </button>
        )}
      </div>
      {consent !== null && onConsent && (
        <div className="subscription-consent">
          <label>
            <input
              type="checkbox"
              data-testid={`subscription-${provider}-background`}
              checked={consent}
              aria-busy={consentBusy}
              onChange={(e) => {
                const allowed = e.target.checked;
                if (consentBusy) return;
                setConsentBusy(true);
                setError(null);
                onConsent(allowed)
                  .catch((err: unknown) => setError(plainSubscriptionError(err)))
                  .finally(() => setConsentBusy(false));
              }}
            />{' '}
            Let background work use it
          </label>
          <p className="muted small" data-testid={`subscription-${provider}-background-words`}>
            {consentWords(consent)}
          </p>
        </div>
      )}
      {error && (
        <p className="error-text" role="alert" data-testid={`subscription-${provider}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}
